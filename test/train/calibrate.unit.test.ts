import { describe, expect, it } from 'vitest';
import { fitPlatt } from '../../src/train/calibrate.js';
import { prng } from '../../src/util/prng.js';

describe('fitPlatt', () => {
  it('recovers the scale and offset of well-specified logits', () => {
    const random = prng(5);
    const logits: number[] = [];
    const labels: boolean[] = [];
    for (let i = 0; i < 4000; i++) {
      const x = random() * 8 - 4;
      logits.push(x);
      labels.push(random() < 1 / (1 + Math.exp(-(0.5 * x + 0.3))));
    }
    const { a, b } = fitPlatt(logits, labels);
    expect(a).toBeCloseTo(0.5, 1);
    expect(Math.abs(b - 0.3)).toBeLessThan(0.15); // sampling noise of 4000 labels is about 0.04
  });

  it('keeps the sign of a on large, nearly separable logits (a plain Newton step flips it)', () => {
    const logits = Array.from({ length: 200 }, (_, i) => (i % 2 ? 25 + (i % 7) : -25 - (i % 5)));
    const labels = logits.map((x, i) => x > 0 !== (i % 50 === 1));
    const { a } = fitPlatt(logits, labels);
    expect(a).toBeGreaterThan(0);
  });
});
