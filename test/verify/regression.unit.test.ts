import { describe, expect, it } from 'vitest';
import type { TestStatus } from '../../src/types/verify.js';
import { compareBaseRuns, findRegressions } from '../../src/verify/regression.js';

const outcomes = (entries: Record<string, TestStatus>) => new Map(Object.entries(entries));

describe('the regression comparison', () => {
  it('finds tests that passed on base and fail with the candidate, and ignores a flaky one', () => {
    const base = compareBaseRuns(
      outcomes({ stable: 'passed', flaky: 'passed', broken_on_base: 'failed', vanishes: 'passed' }),
      outcomes({ stable: 'passed', flaky: 'failed', broken_on_base: 'failed', vanishes: 'passed' }),
    );
    expect(base.flaky).toEqual(['flaky']);
    const found = findRegressions(base, outcomes({ stable: 'failed', flaky: 'failed', broken_on_base: 'failed' }), false);
    expect(found.regressions).toEqual([
      { test: 'stable', base: 'passed', candidate: 'failed' },
      // Gone from a run that finished: the patch broke its import.
      { test: 'vanishes', base: 'passed', candidate: 'missing' },
    ]);
    expect(found.compared).toBe(2);
  });

  it('does not count tests a timed-out run never reached', () => {
    const base = compareBaseRuns(outcomes({ a: 'passed', b: 'passed' }), outcomes({ a: 'passed', b: 'passed' }));
    expect(findRegressions(base, outcomes({ a: 'passed' }), true)).toEqual({ regressions: [], compared: 1 });
  });
});
