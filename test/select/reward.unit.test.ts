/**
 * Harbor's reward ranks candidates within a test outcome (issue 32): partial credit counts before
 * the value model, a resolved candidate stays first whatever its reward, and without rewards the
 * ranking is what it was.
 */
import { describe, expect, it } from 'vitest';
import { select, type Candidate } from '../../src/select/index.js';
import type { VerifyStatus } from '../../src/types/index.js';
import { FIX_A, candidate, verify } from './fixtures.js';

const variant = (n: number): string => FIX_A.replace('+    return a + b', `+    return a + b + ${n}`);
const rewarded = (id: string, n: number, value: number, status: VerifyStatus, reward?: number): Candidate => {
  const base = candidate(id, variant(n), value);
  const result = verify(id, status);
  return {
    ...base,
    verify: {
      ...result,
      parser: 'harbor-reward',
      ...(reward === undefined ? {} : { reward: { file: 'reward.json' as const, rewards: { reward }, value: reward, threshold: 1 } }),
    },
  };
};

describe('selection with Harbor rewards', () => {
  it('within one outcome the higher reward wins over a higher value, and the reason says so', () => {
    const selection = select('hybrid', [
      rewarded('low-reward', 1, 0.9, 'unresolved', 0.2),
      rewarded('high-reward', 2, 0.3, 'unresolved', 0.6),
    ]);
    expect(selection.chosen).toBe('high-reward');
    expect(selection.reason).toContain('reward 0.6 (resolved at ≥ 1)');
    expect(selection.ranking.map((entry) => entry.reasons.some((reason) => /^reward /.test(reason)))).toEqual([true, true]);
  });

  it('a resolved candidate stays first; one whose reward could not be read is unknown, above a failed one', () => {
    const selection = select('hybrid', [
      rewarded('partial', 1, 0.9, 'unresolved', 0.9),
      rewarded('solved', 2, 0.1, 'resolved', 1),
      rewarded('unread', 3, 0.05, 'error'),
    ]);
    // A malformed reward file is a check that could not run: no evidence against the patch (docs/selection.md#hybrid).
    expect(selection.ranking.map((entry) => entry.trajectory_id)).toEqual(['solved', 'unread', 'partial']);
    const unread = select('hybrid', [rewarded('partial', 1, 0.9, 'unresolved', 0.9), rewarded('unread', 3, 0.05, 'error')]);
    expect(unread.chosen).toBe('unread');
    expect(unread.reason).toContain('tests: could not run (error)');
  });

  it('without rewards the keys are those of before (no reward entry)', () => {
    const plain = select('hybrid', [candidate('a', variant(1), 0.4, 'unresolved'), candidate('b', variant(2), 0.6, 'unresolved')]);
    expect(plain.chosen).toBe('b');
    expect(plain.ranking[0]!.key).toHaveLength(6);
    const harbor = select('hybrid', [rewarded('a', 1, 0.4, 'unresolved', 0), rewarded('b', 2, 0.6, 'unresolved', 0)]);
    expect(harbor.ranking[0]!.key).toHaveLength(7);
  });
});
