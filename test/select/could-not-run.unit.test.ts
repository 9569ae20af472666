/**
 * A test run that could not run (timeout, error: src/verify/outcome.ts) is no evidence about the
 * patch (issue 32): selection ranks it with "not run", never below a failed candidate, and the
 * learned selector's signals read it as no run, not as a broken patch.
 */
import { describe, expect, it } from 'vitest';
import { computeSignals, select } from '../../src/select/index.js';
import { prepare } from '../../src/select/prepare.js';
import { FIX_A, candidate } from './fixtures.js';

const variant = (n: number): string => FIX_A.replace('+    return a + b', `+    return a + b + ${n}`);
const order = (strategy: 'hybrid' | 'robust', list: ReturnType<typeof candidate>[]): string[] =>
  select(strategy, list).ranking.map((entry) => entry.trajectory_id);

describe('a check that could not run', () => {
  it('hybrid: a timed-out or errored candidate with a lower value still ranks above a failed one', () => {
    for (const status of ['timeout', 'error'] as const)
      expect(order('hybrid', [candidate('failed', variant(1), 0.9, 'unresolved'), candidate('unknown', variant(2), 0.1, status)])).toEqual([
        'unknown',
        'failed',
      ]);
    // With a run that did not happen at all it ranks equal: the value decides.
    expect(order('hybrid', [candidate('unknown', variant(1), 0.2, 'timeout'), candidate('not-run', variant(2), 0.3)])).toEqual([
      'not-run',
      'unknown',
    ]);
  });

  it('robust: the same tiers, so the test outcome never counts a could-not-run against the patch', () => {
    for (const status of ['timeout', 'error'] as const)
      expect(order('robust', [candidate('failed', variant(1), 0.9, 'unresolved'), candidate('unknown', variant(2), 0.1, status)])).toEqual([
        'unknown',
        'failed',
      ]);
  });

  it('signals: no run and not broken, while a patch that did not apply is broken', () => {
    const signals = computeSignals(
      prepare([
        candidate('timeout', variant(1), 0.5, 'timeout'),
        candidate('error', variant(2), 0.5, 'error'),
        candidate('apply', variant(3), 0.5, 'apply_failed'),
        candidate('unresolved', variant(4), 0.5, 'unresolved'),
      ]),
    );
    const pick = (i: number) => [signals[i]!.verify_ran, signals[i]!.verify_broken, signals[i]!.verify_p2p];
    expect(pick(0)).toEqual([0, 0, 0]);
    expect(pick(1)).toEqual([0, 0, 0]);
    expect(pick(2)).toEqual([1, 1, 1]);
    expect(pick(3)).toEqual([1, 0, 1]);
  });
});
