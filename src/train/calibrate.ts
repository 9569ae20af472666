/**
 * Platt scaling: p = sigmoid(a × logit + b), fitted on held-out logits by Newton's method with a
 * backtracking line search (a plain Newton step overshoots when the logits are large and the
 * sigmoid saturates, and can even flip the sign of a).
 */
import type { Calibration } from './onnx-export.js';

export function fitPlatt(logits: number[], labels: boolean[], iterations = 100): Calibration {
  // Platt's smoothed targets keep a and b finite on separable data.
  const positives = labels.filter(Boolean).length;
  const negatives = labels.length - positives;
  const hi = (positives + 1) / (positives + 2);
  const lo = 1 / (negatives + 2);
  const targets = labels.map((label) => (label ? hi : lo));
  const loss = (a: number, b: number) => {
    let total = 0;
    for (let i = 0; i < logits.length; i++) {
      const z = a * logits[i]! + b;
      // −[t log σ(z) + (1 − t) log(1 − σ(z))], written to stay finite for large |z|
      total += Math.max(z, 0) - targets[i]! * z + Math.log1p(Math.exp(-Math.abs(z)));
    }
    return total;
  };
  let a = 1;
  let b = 0;
  let current = loss(a, b);
  for (let it = 0; it < iterations; it++) {
    let ga = 0,
      gb = 0,
      haa = 1e-9,
      hab = 0,
      hbb = 1e-9;
    for (let i = 0; i < logits.length; i++) {
      const x = logits[i]!;
      const p = 1 / (1 + Math.exp(-(a * x + b)));
      const d = p - targets[i]!;
      const w = p * (1 - p);
      ga += d * x;
      gb += d;
      haa += w * x * x;
      hab += w * x;
      hbb += w;
    }
    const det = haa * hbb - hab * hab;
    let da = det > 1e-12 ? (hbb * ga - hab * gb) / det : ga;
    let db = det > 1e-12 ? (haa * gb - hab * ga) / det : gb;
    let step = 1;
    let next = loss(a - da, b - db);
    while (next > current && step > 1e-8) {
      step /= 2;
      next = loss(a - step * da, b - step * db);
    }
    if (next > current) break;
    da *= step;
    db *= step;
    a -= da;
    b -= db;
    const improved = current - next;
    current = next;
    if (improved < 1e-10) break;
  }
  return { a, b };
}
