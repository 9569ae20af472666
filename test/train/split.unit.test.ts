import { describe, expect, it } from 'vitest';
import { foldOf, splitByInstance } from '../../src/train/split.js';

const items = Array.from({ length: 2000 }, (_, i) => ({
  trajectory: { instance_id: `acme__widgets-${Math.floor(i / 4)}` },
  repo: i % 8 < 4 ? 'acme/widgets' : 'acme/gears',
}));

describe('splitByInstance', () => {
  it('never puts one instance on both sides, and holds out about the asked share (ids that differ only at the end)', () => {
    const { train, validation } = splitByInstance(items, { seed: 3, validationFraction: 0.2 });
    const trainIds = new Set(train.map((item) => item.trajectory.instance_id));
    expect(validation.some((item) => trainIds.has(item.trajectory.instance_id))).toBe(false);
    expect(validation.length / items.length).toBeGreaterThan(0.15);
    expect(validation.length / items.length).toBeLessThan(0.25);
  });

  it('is seeded and independent of input order', () => {
    const a = splitByInstance(items, { seed: 3, validationFraction: 0.2 }).validation.map((item) => item.trajectory.instance_id);
    const b = splitByInstance([...items].reverse(), { seed: 3, validationFraction: 0.2 }).validation.map(
      (item) => item.trajectory.instance_id,
    );
    expect(new Set(a)).toEqual(new Set(b));
    const c = splitByInstance(items, { seed: 4, validationFraction: 0.2 }).validation.map((item) => item.trajectory.instance_id);
    expect(new Set(c)).not.toEqual(new Set(a));
  });

  it('holds out whole repositories when asked', () => {
    const { train, validation } = splitByInstance(items, { seed: 3, validationFraction: 0.2, holdoutRepos: ['acme/gears'] });
    expect(validation.every((item) => item.repo === 'acme/gears')).toBe(true);
    expect(train.every((item) => item.repo === 'acme/widgets')).toBe(true);
  });

  it('spreads instances over the folds', () => {
    const counts = [0, 0, 0, 0];
    for (let i = 0; i < 1000; i++) counts[foldOf(`acme__widgets-${i}`, 4, 1)]!++;
    for (const count of counts) expect(count).toBeGreaterThan(200);
  });
});
