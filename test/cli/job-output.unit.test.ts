/** Issue 18 items 2 and 3 in the terminal output of `winnower solve` and the demo: one word for an empty patch, other test failures shown. */
import { describe, expect, it } from 'vitest';
import {
  candidateLabel,
  formatEvent,
  renderCandidates,
  renderOutcome,
  type CandidateView,
  type JobView,
} from '../../src/cli/job-output.js';

const tally = (passed: number, failed = 0) => ({ passed, failed, missing: 0 });
const candidate = (index: number, fields: Partial<CandidateView>): CandidateView => ({
  index,
  status: 'finished',
  exit: 'submitted',
  steps: 3,
  value: 0.5,
  verify: null,
  trajectory_id: `job/${index}`,
  error: null,
  patch: 'diff --git a/x b/x\n',
  ...fields,
});

describe('job output', () => {
  it('says "no patch" for an empty candidate in the event line and the table', () => {
    expect(formatEvent('candidate-unusable', { index: 3, kind: 'empty', reason: 'no patch' })).toBe(
      'candidate 3: no patch, not scored or tested',
    );
    const job: JobView = {
      job_id: 'j',
      status: 'succeeded',
      error: null,
      candidates: [candidate(3, { patch: '', value: null })],
      result: null,
    };
    expect(renderCandidates(job, 'name', () => 'gives-up').split('\n')[1]).toMatch(/^3 +gives-up +3 +— +no patch +— +— +— *$/);
  });

  it('says why nothing was chosen under the table', () => {
    const reason = 'None of the 2 candidates has a usable patch (1 empty, 1 did not apply), nothing chosen.';
    const job: JobView = {
      job_id: 'j',
      status: 'succeeded',
      error: null,
      candidates: [],
      result: {
        chosen: null,
        rollouts: { finished: 2, failed: 0, cancelled: 0, skipped: 0 },
        compute: {},
        selection: { reason, ranking: [] },
      },
    };
    expect(renderOutcome(job)).toMatch(new RegExp(`\n\nnothing chosen: ${reason.replace(/[().]/g, '\\$&')}$`));
  });

  it('shows the exit code and the unnamed tests that failed beside a resolved outcome', () => {
    expect(
      formatEvent('verify-finish', {
        index: 0,
        status: 'resolved',
        resolved: true,
        exit_code: 1,
        other_failures: 'exit 1, 2 other tests failed (a, b)',
      }),
    ).toBe('candidate 0 tests: resolved (exit 1, 2 other tests failed (a, b))');
    const job: JobView = {
      job_id: 'j',
      status: 'succeeded',
      error: null,
      candidates: [
        candidate(0, {
          verify: {
            status: 'resolved',
            fail_to_pass: tally(1),
            pass_to_pass: tally(0),
            exit_code: 1,
            other_failed: ['a', 'b'],
            other_failed_count: 2,
          },
        }),
        candidate(1, {
          verify: {
            status: 'resolved',
            fail_to_pass: tally(1),
            pass_to_pass: tally(0),
            exit_code: 0,
            other_failed: [],
            other_failed_count: 0,
          },
        }),
        candidate(2, { patch: 'broken', value: null }),
      ],
      result: {
        chosen: { index: 1, patch: 'p' },
        rollouts: {},
        compute: {},
        selection: { ranking: [{ trajectory_id: 'job/2', unusable: { kind: 'unparseable' } }] },
      },
    };
    const lines = renderCandidates(job, 'name', (c) => `c${c.index}`).split('\n');
    expect(lines[0]).toMatch(/ P2P +other tests +chosen$/);
    // No PASS_TO_PASS test named: a dash, not 0/0.
    expect(lines[1]).toMatch(/ resolved +1\/1 +— +2 failed \(exit 1\)$/);
    expect(lines[2]).toMatch(/ resolved +1\/1 +— +none +✔$/);
    expect(lines[3]).toMatch(/ unparseable patch +— +— +—$/);
  });

  // Issue 27 item 25: the pass matrix of `winnower solve` named every candidate "finished".
  it('names a candidate by what its patch changes, else by its status', () => {
    const one = 'diff --git a/src/a.py b/src/a.py\n--- a/src/a.py\n+++ b/src/a.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n';
    const two = `${one}diff --git a/b.py b/b.py\n--- a/b.py\n+++ b/b.py\n@@ -0,0 +1,2 @@\n+y\n+z\n`;
    expect(candidateLabel(candidate(0, { patch: one }))).toBe('+1 -1 src/a.py');
    expect(candidateLabel(candidate(1, { patch: two }))).toBe('+3 -1 in 2 files');
    expect(candidateLabel(candidate(2, { patch: '' }))).toBe('no patch');
    expect(candidateLabel(candidate(3, { status: 'failed', patch: null }))).toBe('failed');
  });

  // Issue 32: a Harbor task's verdict is its reward; its F2P/P2P tallies are empty and its exit code means nothing.
  it('shows the reward of a Harbor task instead of test tallies', () => {
    const harbor = (status: string, reward?: number) => ({
      status,
      fail_to_pass: tally(0),
      pass_to_pass: tally(0),
      exit_code: 3,
      parser: 'harbor-reward',
      ...(reward === undefined ? {} : { reward: { value: reward, threshold: 1 } }),
    });
    const job: JobView = {
      job_id: 'j',
      status: 'succeeded',
      error: null,
      candidates: [
        candidate(0, { verify: harbor('unresolved', 0.5) }),
        candidate(1, { verify: harbor('resolved', 1) }),
        candidate(2, { verify: harbor('error') }),
      ],
      result: { chosen: { index: 1, patch: 'p' }, rollouts: {}, compute: {}, selection: { ranking: [] } },
    };
    const lines = renderCandidates(job, 'name', (c) => `c${c.index}`).split('\n');
    expect(lines[0]).toMatch(/ tests +reward +chosen$/);
    expect(lines[1]).toMatch(/ unresolved +0\.5 \(≥ 1\) *$/);
    expect(lines[2]).toMatch(/ resolved +1 \(≥ 1\) +✔$/);
    expect(lines[3]).toMatch(/ error +— *$/);
  });
});
