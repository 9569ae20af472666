import { describe, expect, it } from 'vitest';
import type { TestStatus } from '../../src/types/verify.js';
import { compareBaseRuns, findRegressions } from '../../src/verify/regression.js';
import { patchRemovals } from '../../src/verify/removed-tests.js';

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
    expect(findRegressions(base, outcomes({ a: 'passed' }), true)).toEqual({ regressions: [], removed: [], compared: 1 });
  });

  it('lists a test the patch deleted as removed, not as a regression, and does not compare it', () => {
    const base = compareBaseRuns(
      outcomes({ 'tests/test_a.py::test_a': 'passed', 'tests/test_b.py::test_b': 'passed' }),
      outcomes({ 'tests/test_a.py::test_a': 'passed', 'tests/test_b.py::test_b': 'passed' }),
    );
    const patch =
      'diff --git a/tests/test_b.py b/tests/test_b.py\ndeleted file mode 100644\n--- a/tests/test_b.py\n+++ /dev/null\n@@ -1 +0,0 @@\n-def test_b(): pass\n';
    expect(findRegressions(base, outcomes({ 'tests/test_a.py::test_a': 'passed' }), false, patchRemovals(patch))).toEqual({
      regressions: [],
      removed: [{ test: 'tests/test_b.py::test_b', file: 'tests/test_b.py' }],
      compared: 1,
    });
  });
});
