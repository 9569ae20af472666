import { describe, expect, it } from 'vitest';
import { judgeTies, select, type JudgeScores } from '../../src/select/index.js';
import { Selection } from '../../src/types/index.js';
import { FIX_A, candidate } from './fixtures.js';

const variant = (n: number): string => FIX_A.replace('+    return a + b', `+    return a + b + ${n}`);
const order = (selection: Selection): string[] => selection.ranking.map((entry) => entry.trajectory_id);
const reasonsOf = (selection: Selection, id: string): string[] =>
  selection.ranking.find((entry) => entry.trajectory_id === id)?.reasons ?? [];

const verdicts = (entries: Record<string, [wins: number, games: number]>): JudgeScores => ({
  model: 'judge-m',
  byId: new Map(Object.entries(entries).map(([id, [wins, games]]) => [id, { wins, games }])),
});

describe('hybrid with a judge', () => {
  // a and b tie on test outcome and value; c resolved with a lower value; d is alone in its tier.
  const pool = [
    candidate('a', variant(1), 0.6, 'resolved'),
    candidate('b', variant(2), 0.6, 'resolved'),
    candidate('c', variant(3), 0.4, 'resolved'),
    candidate('d', variant(4), 0.9, 'unresolved'),
  ];

  it('without verdicts, a tie falls to the id', () => {
    const selection = select('hybrid', pool);
    expect(order(selection)).toEqual(['a', 'b', 'c', 'd']);
  });

  it('breaks ties on every primary key only, and names the judgement', () => {
    // The judge "prefers" c and d over everything: it must not lift them over better test outcomes or values.
    const judge = verdicts({ a: [0.1, 1], b: [0.9, 1], c: [5, 5], d: [5, 5] });
    const selection = select('hybrid', pool, { judge });
    expect(order(selection)).toEqual(['b', 'a', 'c', 'd']);
    expect(selection.chosen).toBe('b');
    expect(selection.reason).toMatch(/tied with a on test outcome and value, won on the pairwise judge \(judge-m\)/);
    expect(reasonsOf(selection, 'b')).toContain('judge judge-m: 0.9 of 1 pairwise win (both orders averaged)');
    expect(Selection.parse(selection)).toEqual(selection);
  });

  it('keeps a tie the judge found even (0.5 each) for the next tie-break', () => {
    const judge = verdicts({ a: [0.5, 1], b: [0.5, 1] });
    expect(order(select('hybrid', pool, { judge }))).toEqual(['a', 'b', 'c', 'd']);
    expect(select('hybrid', pool, { judge }).reason).toMatch(/won on trajectory id/);
  });

  it('reports the ties before and after the judge', () => {
    const before = judgeTies('hybrid', pool);
    expect(before).toEqual({ order: ['a', 'b', 'c', 'd'], groups: [['a', 'b']], usable: 4, tied: 2 });
    const after = judgeTies('hybrid', pool, { judge: verdicts({ a: [0.1, 1], b: [0.9, 1] }) });
    expect(after.tied).toBe(0);
    expect(judgeTies('hybrid', pool, { judge: verdicts({ a: [0.5, 1], b: [0.5, 1] }) }).tied).toBe(2);
  });

  it('in its value fallback (no test results), the judge breaks ties on value', () => {
    const untested = [candidate('x', variant(1), 0.5), candidate('y', variant(2), 0.5), candidate('z', variant(3), 0.7)];
    const selection = select('hybrid', untested, { judge: verdicts({ x: [0, 1], y: [1, 1] }) });
    expect(selection.degraded_to).toBe('value');
    expect(order(selection)).toEqual(['z', 'y', 'x']);
    expect(judgeTies('hybrid', untested).groups).toEqual([['x', 'y']]);
  });
});

describe('strategy judge', () => {
  const pool = [
    candidate('a', variant(1), 0.9),
    candidate('b', variant(2), 0.5),
    candidate('c', variant(3), 0.1),
    candidate('empty', '', 0.99),
  ];

  it('ranks the usable candidates by judged win rate, value breaking its ties; the gate still applies', () => {
    const judge = verdicts({ a: [1, 4], b: [3, 4], c: [3, 4] });
    const selection = select('judge', pool, { judge });
    expect(selection.strategy).toBe('judge');
    expect(selection.degraded_to).toBeNull();
    expect(order(selection)).toEqual(['b', 'c', 'a', 'empty']);
    expect(selection.chosen).toBe('b');
    expect(selection.reason).toMatch(
      /^Chose b, the most pairwise wins by judge judge-m \(3 of 4, both orders averaged\) of 3 judged candidates; tied with c on pairwise wins, won on higher value/,
    );
    expect(reasonsOf(selection, 'a')).toContain('judge judge-m: 1 of 4 pairwise wins (both orders averaged)');
  });

  it('without verdicts falls back to value and says why', () => {
    const selection = select('judge', pool, { judgeUnavailable: 'the judge failed (WNW_ERR_JUDGE_TIMEOUT: slow)' });
    expect(selection.degraded_to).toBe('value');
    expect(selection.chosen).toBe('a');
    expect(selection.reason).toMatch(/^The judge failed \(WNW_ERR_JUDGE_TIMEOUT: slow\), so judge selection fell back to value: chose a/);
    expect(select('judge', pool).reason).toMatch(/^No candidate was compared by a judge, so judge selection fell back to value/);
  });

  it('compares every usable candidate, in value order, and reports ties of that order before', () => {
    const ties = judgeTies('judge', [...pool, candidate('d', variant(4), 0.5)]);
    expect(ties.order).toEqual(['a', 'b', 'd', 'c']);
    expect(ties.groups).toEqual([['b', 'd']]);
    expect(ties.tied).toBe(2);
    expect(ties.usable).toBe(4);
  });
});
