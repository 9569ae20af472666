import { describe, expect, it } from 'vitest';
import { fitSteps, waterFill, type FitInput } from '../../src/serialize/fit-budget.js';

/** Five steps: thoughts 100 tokens (20 elided), each with one 300-token observation (50 cut). */
const input: FitInput = {
  fixed: 200,
  stepsMarker: 10,
  keepFirst: 1,
  keepLast: 1,
  steps: Array.from({ length: 5 }, () => ({ full: 120, elided: 40, observations: [{ full: 300, cut: 50 }] })),
};
const total = 200 + 5 * 420;

describe('fitSteps', () => {
  it('cuts nothing when the whole fits', () => {
    const plan = fitSteps(input, total);
    expect(plan.tokens).toBe(total);
    expect(plan.cut.flat().some(Boolean)).toBe(false);
    expect(plan.elided.some(Boolean)).toBe(false);
    expect(plan.dropped).toBeNull();
  });

  it('cuts observations first, only as many as needed', () => {
    const plan = fitSteps(input, total - 300);
    expect(plan.cut.flat().filter(Boolean)).toHaveLength(2);
    expect(plan.elided.some(Boolean)).toBe(false);
    expect(plan.tokens).toBe(total - 500);
  });

  it('elides thoughts once every observation is cut', () => {
    const plan = fitSteps(input, total - 5 * 250 - 100);
    expect(plan.cut.flat().every(Boolean)).toBe(true);
    expect(plan.elided.filter(Boolean)).toHaveLength(2);
    expect(plan.dropped).toBeNull();
  });

  it('drops middle steps from the centre, keeps first and last, and restores what fits again', () => {
    // all cut: 90 per step; two middle steps dropped would leave 200 + 10 + 3 * 90 = 480
    const plan = fitSteps(input, 470);
    expect(plan.dropped).toEqual({ start: 1, end: 4 });
    // 200 + 10 + 2 * 90 = 390 leaves 80 tokens: one kept thought (80 saved) comes back, no observation
    expect(plan.tokens).toBe(470);
    expect(plan.cut[0]![0] && plan.cut[4]![0]).toBe(true);
    expect(plan.elided.filter((elided, index) => elided && (index === 0 || index === 4))).toHaveLength(1);
  });

  it('reports a plan over budget when steps alone cannot fit', () => {
    const plan = fitSteps(input, 300);
    expect(plan.dropped).toEqual({ start: 1, end: 4 });
    expect(plan.tokens).toBeGreaterThan(300);
  });
});

describe('waterFill', () => {
  it('finds the largest even cap', () => {
    expect(waterFill([100, 50], 200, 5)).toBe(Number.POSITIVE_INFINITY);
    expect(waterFill([1000, 100, 10], 400, 5)).toBe(285);
    expect(waterFill([1000, 1000], 100, 60)).toBeUndefined();
  });
});
