import { describe, expect, it } from 'vitest';
import { beatsTrivial, bestTrivial, evaluateScope, withinPoolAuc, type EvalPool } from '../../src/train/evaluate.js';
import { matchesSource, rotatingSources, sourceFamily, splitBySource } from '../../src/train/split.js';

const item = (instance: string, source: string, resolved: boolean) => ({
  trajectory: { instance_id: instance, source },
  repo: 'acme/widgets',
  pool: instance,
  resolved,
});

describe('source-held-out split', () => {
  const items = [
    item('i1', 'acr/run-1', true),
    item('i1', 'acr/run-2', false),
    item('i1', 'coder/gpt4', false),
    item('i2', 'coder/gpt4', true),
    item('i2', 'swe/run-1', true),
    item('i3', 'swe/run-1', false),
    item('i3', 'swe/run-2', true),
    item('i4', 'solo', true),
  ];

  it('names families by the prefix and matches runs or families', () => {
    expect(sourceFamily('acr/acr-run-1')).toBe('acr');
    expect(sourceFamily('solo')).toBe('solo');
    expect(matchesSource('acr/run-1', ['acr'])).toBe(true);
    expect(matchesSource('acr/run-1', ['acr/run-1'])).toBe(true);
    expect(matchesSource('acrobat/run-1', ['acr'])).toBe(false);
  });

  it('sends every pool a held-out source touched to validation whole, and trains on no held-out source and no validated instance', () => {
    const { train, validation } = splitBySource(items, ['acr']);
    expect(validation.map((x) => `${x.pool} ${x.trajectory.source}`)).toEqual(['i1 acr/run-1', 'i1 acr/run-2', 'i1 coder/gpt4']);
    expect(train.some((x) => matchesSource(x.trajectory.source, ['acr']))).toBe(false);
    const validated = new Set(validation.map((x) => x.pool));
    expect(train.some((x) => validated.has(x.pool))).toBe(false);
    expect(train).toHaveLength(5);
  });

  it('halves the instances when the held-out source ran everywhere, training on the other sources of the other half', () => {
    const everywhere = Array.from({ length: 200 }, (_, i) => [item(`k${i}`, 'a/1', true), item(`k${i}`, 'b/1', false)]).flat();
    const { train, validation } = splitBySource(everywhere, ['a'], 3);
    expect(train.length).toBeGreaterThan(60);
    expect(validation.length).toBeGreaterThan(120);
    expect(train.every((x) => x.trajectory.source === 'b/1')).toBe(true);
    const validated = new Set(validation.map((x) => x.pool));
    expect(train.some((x) => validated.has(x.pool))).toBe(false);
  });

  it('rotates over the families whose held-out pools include one with both outcomes', () => {
    expect(rotatingSources(items)).toEqual(['acr', 'coder', 'swe']);
  });
});

const pool = (
  id: string,
  cands: Array<[boolean, number, string]>,
  values: Record<string, Array<number | null>> = {},
  chosen: Record<string, string | null> = {},
): EvalPool => ({
  pool: id,
  benchmark: 'b',
  candidates: cands.map(([resolved, changedLines, key], i) => ({
    id: `${id}-${i}`,
    resolved,
    usable: true,
    changedLines,
    clusterKey: key,
  })),
  values,
  chosen,
});

describe('trivial selectors beside the model', () => {
  const pools = [
    pool(
      'p1',
      [
        [true, 10, 'x'],
        [false, 2, 'y'],
        [false, 30, 'z'],
      ],
      { m: [0.9, 0.1, 0.5] },
      { m: 'p1-0' },
    ),
    pool(
      'p2',
      [
        [false, 10, 'x'],
        [true, 20, 'y'],
        [true, 21, 'y'],
      ],
      { m: [0.2, 0.2, 0.8] },
      { m: 'p2-2' },
    ),
  ];

  it('within-pool AUC counts only pairs of one pool, ties half; random has none', () => {
    // p1: 2 pairs, both right; p2: (0.2 vs 0.2) half, (0.8 vs 0.2) right → 3.5 / 4.
    expect(withinPoolAuc(pools, 'm')).toBeCloseTo(3.5 / 4, 9);
    // shortest: p1 10 > -2? no: -10 < -2 wrong, -10 > -30 right; p2 -20 < -10 wrong, -21 < -10 wrong → 1 / 4.
    expect(withinPoolAuc(pools, 'shortest')).toBeCloseTo(1 / 4, 9);
    expect(withinPoolAuc(pools, 'random')).toBeNull();
  });

  it('names the best trivial selector, and a model beats it only strictly', () => {
    const table = evaluateScope('all', pools, {
      selectors: ['random', 'longest', 'shortest', 'majority', 'm'],
      probabilistic: [],
      bootstrap: 20,
    });
    // majority: p1 all distinct (1/3), p2 the y cluster (2/2) → mean 0.667, the best trivial one.
    expect(bestTrivial(table)!.selector).toBe('majority');
    expect(table.rows.find((r) => r.selector === 'm')!.within_auc!.value).toBeCloseTo(3.5 / 4, 9);
    expect(beatsTrivial(table, 'm')).toBe(true);
    const tied = evaluateScope('all', pools, {
      selectors: ['random', 'longest', 'shortest', 'majority', 'm'],
      probabilistic: [],
      bootstrap: 20,
    });
    expect(beatsTrivial(tied, 'majority')).toBe(false);
    expect(beatsTrivial(tied, 'majority', false)).toBe(true);
  });
});
