/**
 * A /solve job that ran to its end but chose nothing usable (every patch empty, unparseable,
 * refused or not applying) says so apart from its `succeeded` status: `result.outcome`, the jobs
 * list's `overview.outcome`, and the inspector's amber badge (docs/api.md, docs/inspector.md).
 * Pure functions of the stored JSON; test/cli/inspect.test.ts checks the badge drawn in a browser.
 */
import { describe, expect, it } from 'vitest';
import { jobOutcome, showsNoneUsable } from '../../src/server/ui/browser/job-outcome.js';
import { jobOverview } from '../../src/server/views/job-overview.js';
import { outcomeOf } from '../../src/solve/result-view.js';

const selection = {
  strategy: 'value',
  chosen: null,
  ranking: [],
  reason: 'None of the 1 candidate has a usable patch (1 empty), nothing chosen.',
};
const chosen = { index: 0, trajectory_id: 'j/0', patch: 'diff --git a/x b/x', value: 0.7, verify_status: 'resolved' };
const overviewOf = (result: unknown) => jobOverview({ request: { n: 1 }, result, progress: {} });

describe('a job that chose nothing usable', () => {
  it('has its own outcome in the result', () => {
    expect(outcomeOf(null)).toBe('none-usable');
    expect(outcomeOf(chosen)).toBe('chosen');
  });

  it("shows the outcome in the jobs list's overview, also for a result stored before it had one", () => {
    expect(overviewOf({ chosen: null, selection, outcome: 'none-usable' }).outcome).toBe('none-usable');
    expect(overviewOf({ chosen, selection, outcome: 'chosen' }).outcome).toBe('chosen');
    expect(overviewOf({ chosen: null, selection }).outcome).toBe('none-usable');
    expect(overviewOf({ chosen, selection }).outcome).toBe('chosen');
    // No result yet (queued, running, failed), or one that is not a selection: no outcome.
    expect(overviewOf(null).outcome).toBeNull();
    expect(overviewOf({ index: 3 }).outcome).toBeNull();
  });

  it('is amber in the inspector only when the job succeeded without a usable choice', () => {
    expect(jobOutcome({ chosen: null, selection, outcome: 'none-usable' })).toBe('none-usable');
    expect(jobOutcome({ chosen: null, selection })).toBe('none-usable');
    expect(jobOutcome({ chosen, selection })).toBe('chosen');
    expect(jobOutcome(null)).toBeNull();
    expect(showsNoneUsable('succeeded', 'none-usable')).toBe(true);
    expect(showsNoneUsable('succeeded', 'chosen')).toBe(false);
    expect(showsNoneUsable('succeeded', null)).toBe(false);
    // An interrupted or cancelled job keeps its own (grey) badge; its partial result may choose nothing.
    expect(showsNoneUsable('interrupted', 'none-usable')).toBe(false);
  });
});
