import { describe, expect, it } from 'vitest';
import { WinnowerError } from '../../src/errors.js';
import { select, type Candidate } from '../../src/select/index.js';
import { Selection, type Strategy } from '../../src/types/index.js';
import { BROKEN, FIX_A, FIX_A_NOISY, FIX_B, README_EDIT, candidate, trajectory } from './fixtures.js';

const STRATEGIES: Strategy[] = ['value', 'consensus', 'hybrid'];

/** A distinct one-line fix of src/calc.py. */
const variant = (n: number): string => FIX_A.replace('+    return a + b', `+    return a + b + ${n}`);

const order = (selection: Selection): string[] => selection.ranking.map((entry) => entry.trajectory_id);
const reasonsOf = (selection: Selection, id: string): string[] =>
  selection.ranking.find((entry) => entry.trajectory_id === id)?.reasons ?? [];

function permutations<T>(items: T[]): T[][] {
  if (items.length <= 1) return [items];
  return items.flatMap((item, index) => permutations([...items.slice(0, index), ...items.slice(index + 1)]).map((rest) => [item, ...rest]));
}

describe('select: value', () => {
  it('picks the argmax of score.value and explains every place', () => {
    const selection = select('value', [
      candidate('t1', variant(1), 0.3),
      candidate('t2', variant(2), 0.82),
      candidate('t3', variant(3), 0.5),
    ]);
    expect(selection.chosen).toBe('t2');
    expect(order(selection)).toEqual(['t2', 't3', 't1']);
    expect(reasonsOf(selection, 't2')).toContain('value 0.82 (1st of 3)');
    expect(reasonsOf(selection, 't3')).toContain('value 0.5 (2nd of 3)');
    expect(reasonsOf(selection, 't1')).toEqual(['patch +1 -1 in 1 file', 'value 0.3 (3rd of 3)', 'unique patch']);
    expect(selection.reason).toBe('Chose t2, the highest value (0.82) of 3 scored candidates with a usable patch.');
    expect(selection.degraded_to).toBeNull();
    expect(Selection.parse(selection)).toEqual(selection);
  });

  it('ranks a missing score below every scored candidate but above empty patches', () => {
    const selection = select('value', [
      candidate('empty', '', 0.95),
      candidate('unscored', variant(1)),
      candidate('low', variant(2), 0.05),
    ]);
    expect(order(selection)).toEqual(['low', 'unscored', 'empty']);
    expect(reasonsOf(selection, 'unscored')).toContain('no score (scorer failed or not run)');
    expect(selection.reason).toMatch(/^Chose low, .*; empty scored higher \(0\.95\) but its patch is empty\.$/);
  });

  it('falls back to consensus when no candidate has a score, and says so', () => {
    const selection = select('value', [candidate('solo', FIX_B), candidate('pair-1', FIX_A), candidate('pair-2', FIX_A_NOISY)]);
    expect(selection.strategy).toBe('value');
    expect(selection.degraded_to).toBe('consensus');
    expect(selection.chosen).toBe('pair-1');
    expect(selection.reason).toMatch(
      /^No candidate had a score, so value selection fell back to consensus: chose pair-1 from the largest group of equal patches \(2 of 3 usable; no scores, so a plain majority vote\)/,
    );
  });
});

describe('select: consensus', () => {
  it('clusters patches that differ only by diff noise, not patches that differ in content', () => {
    // weights: {a, a-noisy} = 2 × mean(0.6, 0.5) = 1.1; {b} = 1 × 0.9 = 0.9
    const selection = select('consensus', [candidate('b', FIX_B, 0.9), candidate('a-noisy', FIX_A_NOISY, 0.5), candidate('a', FIX_A, 0.6)]);
    expect(selection.chosen).toBe('a');
    expect(order(selection)).toEqual(['a', 'a-noisy', 'b']);
    expect(selection.ranking.map((entry) => [entry.cluster, entry.cluster_size])).toEqual([
      [1, 2],
      [1, 2],
      [2, 1],
    ]);
    expect(reasonsOf(selection, 'a')).toContain('cluster of 2 equal patches');
    expect(reasonsOf(selection, 'a')).toContain('cluster weight 1.1 (1st of 2 clusters)');
    expect(reasonsOf(selection, 'b')).toContain('unique patch');
    expect(selection.reason).toBe(
      'Chose a (value 0.6), the best member of the heaviest cluster: 2 equal patches of 3 usable, weight 1.1 (size × mean value).',
    );
  });

  it('weighs clusters by size × mean value: a confident single beats a doubtful pair', () => {
    // {p1, p2} = 2 × 0.3 = 0.6 < {s} = 1 × 0.7
    const selection = select('consensus', [candidate('p1', FIX_A, 0.3), candidate('p2', FIX_A_NOISY, 0.3), candidate('s', FIX_B, 0.7)]);
    expect(selection.chosen).toBe('s');
  });

  it('counts a missing value in a cluster as the mean of the scored candidates', () => {
    // mean of scored usable = (0.4 + 0.7) / 2 = 0.55; {u, v} = 0.4 + 0.55 = 0.95 > {w} = 0.7
    const selection = select('consensus', [candidate('u', FIX_A), candidate('v', FIX_A_NOISY, 0.4), candidate('w', FIX_B, 0.7)]);
    expect(selection.chosen).toBe('v');
    expect(selection.ranking[0]?.key[1]).toBeCloseTo(0.95, 9);
    expect(order(selection)).toEqual(['v', 'u', 'w']);
  });
});

describe('select: hybrid', () => {
  it('puts a resolved candidate first even when its value is lower', () => {
    const selection = select('hybrid', [candidate('high', variant(1), 0.9, 'unresolved'), candidate('low', variant(2), 0.2, 'resolved')]);
    expect(selection.chosen).toBe('low');
    expect(reasonsOf(selection, 'low')).toContain('tests: resolved');
    expect(selection.reason).toBe(
      'Chose low: tests resolved, the only candidate with that outcome (value 0.2); high had a higher value (0.9) but tests: unresolved.',
    );
  });

  it('orders resolved > not run = could not run (timeout, error) > unresolved > apply_failed, then by value', () => {
    const selection = select('hybrid', [
      candidate('apply', variant(1), 0.99, 'apply_failed'),
      candidate('error', variant(2), 0.6, 'error'),
      candidate('timeout', variant(3), 0.7, 'timeout'),
      candidate('unresolved', variant(4), 0.95, 'unresolved'),
      candidate('unverified', variant(5), 0.1),
      candidate('resolved-lo', variant(6), 0.3, 'resolved'),
      candidate('resolved-hi', variant(7), 0.4, 'resolved'),
      candidate('empty', '', 0.99, 'resolved'),
    ]);
    // A run that could not run is no evidence, like no run: value decides among them, all above the failure.
    expect(order(selection)).toEqual(['resolved-hi', 'resolved-lo', 'timeout', 'error', 'unverified', 'unresolved', 'apply', 'empty']);
    expect(reasonsOf(selection, 'unverified')).toContain('tests: not run');
    expect(reasonsOf(selection, 'apply')).toContain('tests: apply failed');
  });

  it('falls back to value without test results, and to consensus without scores either', () => {
    const toValue = select('hybrid', [candidate('x', variant(1), 0.4), candidate('y', variant(2), 0.6)]);
    expect([toValue.chosen, toValue.strategy, toValue.degraded_to]).toEqual(['y', 'hybrid', 'value']);
    expect(toValue.reason).toMatch(/^No candidate had test results, so hybrid selection fell back to value: chose y/);
    const toConsensus = select('hybrid', [candidate('x', FIX_B), candidate('y', FIX_A), candidate('z', FIX_A_NOISY)]);
    expect([toConsensus.chosen, toConsensus.degraded_to]).toEqual(['y', 'consensus']);
    expect(toConsensus.reason).toMatch(/^No candidate had test results or a score, so hybrid selection fell back to consensus/);
  });

  it('with test results but no scores, orders within an outcome by cluster size', () => {
    const selection = select('hybrid', [
      candidate('solo', FIX_B, undefined, 'resolved'),
      candidate('pair-2', FIX_A_NOISY, undefined, 'resolved'),
      candidate('pair-1', FIX_A, undefined, 'resolved'),
    ]);
    expect(order(selection)).toEqual(['pair-1', 'pair-2', 'solo']);
    expect(selection.reason).toBe(
      'Chose pair-1: tests resolved, none of the 3 with that outcome has a score; tied with pair-2 on test outcome and value, won on trajectory id (lexicographic).',
    );
  });
});

describe('select: rules for every strategy', () => {
  it.each(STRATEGIES)('%s: an empty patch never wins, even with the highest value and resolved tests', (strategy) => {
    const selection = select(strategy, [candidate('empty', '\n', 1, 'resolved'), candidate('real', FIX_B, 0.01, 'unresolved')]);
    expect(selection.chosen).toBe('real');
    expect(order(selection)).toEqual(['real', 'empty']);
    expect(reasonsOf(selection, 'empty')).toContain('patch empty');
    expect(selection.ranking.at(-1)?.cluster).toBeNull();
  });

  it.each(STRATEGIES)('%s: an unparseable patch never wins', (strategy) => {
    const selection = select(strategy, [candidate('broken', BROKEN, 0.99, 'resolved'), candidate('real', FIX_B, 0.01, 'unresolved')]);
    expect(selection.chosen).toBe('real');
    expect(reasonsOf(selection, 'broken')[0]).toMatch(/^patch unparseable \(line 6: patch ends inside a hunk/);
  });

  it.each(STRATEGIES)('%s: chooses nothing only when no candidate has a usable patch', (strategy) => {
    const selection = select(strategy, [candidate('e', '', 0.9), candidate('b', BROKEN, 0.8)]);
    expect(selection.chosen).toBeNull();
    expect(selection.degraded_to).toBeNull();
    expect(selection.reason).toBe('None of the 2 candidates has a usable patch (1 empty, 1 unparseable), nothing chosen.');
    expect(select(strategy, [], { instanceId: 'x' })).toMatchObject({
      instance_id: 'x',
      chosen: null,
      ranking: [],
      reason: 'No candidates, nothing chosen.',
    });
    expect(select(strategy, [candidate('e', ''), candidate('only', FIX_A)]).chosen).toBe('only');
  });

  it.each(STRATEGIES)('%s: breaks ties deterministically, whatever the input order', (strategy) => {
    const candidates: Candidate[] = [
      candidate('b-long', FIX_A + README_EDIT, 0.5, 'resolved'),
      candidate('c-short', FIX_B, 0.5, 'resolved'),
      candidate('a-short', variant(1), 0.5, 'resolved'),
      candidate('z-empty', '', 0.5, 'resolved'),
    ];
    const first = select(strategy, candidates);
    // equal value and outcome; all clusters of 1; smaller patch (2 changed lines < 4), then id
    expect(order(first)).toEqual(['a-short', 'c-short', 'b-long', 'z-empty']);
    expect(first.reason).toMatch(/tied with c-short('s cluster)? on .*, won on trajectory id \(lexicographic\)\.$/);
    for (const shuffled of permutations(candidates)) expect(select(strategy, shuffled)).toEqual(first);
  });

  it('value: a tie on value is broken by cluster size, then patch size', () => {
    const selection = select('value', [
      candidate('long', FIX_A + README_EDIT, 0.5),
      candidate('short', FIX_B, 0.5),
      candidate('pair-2', FIX_A_NOISY, 0.5),
      candidate('pair-1', FIX_A, 0.5),
    ]);
    expect(order(selection)).toEqual(['pair-1', 'pair-2', 'short', 'long']);
    const noPair = select('value', [candidate('long', FIX_A + README_EDIT, 0.5), candidate('short', FIX_B, 0.5)]);
    expect(noPair.reason).toBe(
      'Chose short, the highest value (0.5) of 2 scored candidates with a usable patch; tied with long on value, won on smaller patch.',
    );
  });

  it.each(STRATEGIES)('%s: every candidate has reasons and the selection one sentence', (strategy) => {
    const selection = select(strategy, [
      candidate('a', FIX_A, 0.7, 'resolved'),
      candidate('b', FIX_A_NOISY),
      candidate('c', '', 0.2),
      candidate('d', FIX_B, 0.4, 'unresolved'),
    ]);
    expect(Selection.parse(selection)).toEqual(selection);
    for (const entry of selection.ranking) {
      expect(entry.reasons.length).toBeGreaterThanOrEqual(2);
      expect(entry.reasons.every((reason) => typeof reason === 'string' && reason.length > 0)).toBe(true);
    }
    expect(selection.reason).toMatch(/^[A-Z][^\n]*\.$/);
    expect(selection.reason).not.toMatch(/\. /);
    expect(selection.ranking.map((entry) => entry.rank)).toEqual([1, 2, 3, 4]);
  });
});

describe('select: input checks', () => {
  const code = (run: () => unknown): string | undefined => {
    try {
      run();
    } catch (error) {
      return WinnowerError.isInstance(error) ? error.code : 'not a WinnowerError';
    }
    return undefined;
  };

  it('rejects mixed instances, duplicate ids, misattached scores, unknown strategies; an empty list is not an error', () => {
    const other: Candidate = { trajectory: trajectory('o', FIX_A, 'other__repo-2') };
    expect(code(() => select('value', [candidate('a', FIX_A), other]))).toBe('WNW_ERR_INPUT_INVALID');
    expect(code(() => select('value', [candidate('a', FIX_A), candidate('a', FIX_B)]))).toBe('WNW_ERR_INPUT_INVALID');
    const misattached = { ...candidate('a', FIX_A), score: candidate('b', FIX_B, 0.5).score! };
    expect(code(() => select('value', [misattached]))).toBe('WNW_ERR_INPUT_INVALID');
    expect(code(() => select('best' as Strategy, [candidate('a', FIX_A)]))).toBe('WNW_ERR_INPUT_INVALID');
    expect(code(() => select('value', [candidate('a', FIX_A)], { instanceId: 'other__repo-2' }))).toBe('WNW_ERR_INPUT_INVALID');
    expect(select('value', [])).toMatchObject({ instance_id: '', chosen: null });
  });
});
