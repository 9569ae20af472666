/** Platt scaling: p = sigmoid(a × logit + b), fitted by Newton's method on held-out logits. */
import type { Calibration } from './onnx-export.js';

export function fitPlatt(logits: number[], labels: boolean[], iterations = 50): Calibration {
  let a = 1;
  let b = 0;
  // Platt's smoothed targets keep a and b finite on separable data.
  const positives = labels.filter(Boolean).length;
  const negatives = labels.length - positives;
  const hi = (positives + 1) / (positives + 2);
  const lo = 1 / (negatives + 2);
  for (let it = 0; it < iterations; it++) {
    let ga = 0, gb = 0, haa = 1e-9, hab = 0, hbb = 1e-9;
    for (let i = 0; i < logits.length; i++) {
      const x = logits[i]!;
      const p = 1 / (1 + Math.exp(-(a * x + b)));
      const t = labels[i] ? hi : lo;
      const d = p - t;
      const w = p * (1 - p);
      ga += d * x;
      gb += d;
      haa += w * x * x;
      hab += w * x;
      hbb += w;
    }
    const det = haa * hbb - hab * hab;
    if (Math.abs(det) < 1e-12) break;
    const da = (hbb * ga - hab * gb) / det;
    const db = (haa * gb - hab * ga) / det;
    a -= da;
    b -= db;
    if (Math.abs(da) + Math.abs(db) < 1e-10) break;
  }
  return { a, b };
}
