/**
 * The inspector's test-outcome badge (issue 32): a run that could not run (timeout, error) is
 * drawn as its own `could not run` badge, apart from a failure's; test/cli/inspect.test.ts draws
 * pages in a browser.
 */
import { describe, expect, it } from 'vitest';
import { outcomeBadge } from '../../src/server/ui/browser/check-outcome.js';

describe('the inspector badge of a test outcome', () => {
  it('draws timeout and error as could not run, with why in the title', () => {
    expect(outcomeBadge('timeout')).toMatchObject({ kind: 'could-not-run', word: 'could not run (timeout)' });
    expect(outcomeBadge('error')).toMatchObject({ kind: 'could-not-run', word: 'could not run (error)' });
    expect(outcomeBadge('error').title).toMatch(/no evidence for or against the patch/);
  });

  it('keeps the failures and the pass as they were', () => {
    for (const status of ['resolved', 'unresolved', 'apply_failed']) expect(outcomeBadge(status)).toEqual({ kind: status, word: status });
  });
});
