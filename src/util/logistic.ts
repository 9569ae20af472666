/** The logistic function and its inverse, finite for any input. */
export function sigmoid(x: number): number {
  if (x >= 0) return 1 / (1 + Math.exp(-x));
  const e = Math.exp(x);
  return e / (1 + e);
}

/** log(p / (1 − p)), with p clamped to [1e-6, 1 − 1e-6] so 0 and 1 stay finite. */
export function logit(p: number): number {
  const q = Math.min(1 - 1e-6, Math.max(1e-6, p));
  return Math.log(q / (1 - q));
}
