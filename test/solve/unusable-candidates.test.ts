/**
 * Issue 18 items 1-4 through POST /solve on real components (local sandboxes, the bundled ONNX
 * scorer, replayed rollouts of the demo task):
 * 1. a rollout that writes a 300,000-line file does not fail the job that also holds the fix;
 * 2. a rollout whose only change is a symbolic link to /etc/passwd is never chosen;
 * 3. with only FAIL_TO_PASS named, the candidate that breaks two other tests is `resolved` but
 *    shows its exit code and failures, and the stop rule does not stop on it;
 * 4. an empty patch is neither scored nor tested ("no patch") and ranks last;
 * and issue 27 item 6: a job that chose nothing usable says so in `result.outcome`, in the jobs
 * list and in its last event, beside its `succeeded` status.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobEvent } from '../../src/solve/events.js';
import { createWorld, demoRecordings, demoTask, hasBubblewrap, solveBody, type TestWorld } from './helpers.js';

const recordings = demoRecordings();
const call = (id: string, command: string) => ({
  role: 'assistant',
  content: '',
  tool_calls: [{ id, type: 'function', function: { name: 'bash', arguments: JSON.stringify({ command }) } }],
});
const scripted = (name: string, command: string) => ({
  id: `recorded/${name}`,
  instance_id: demoTask().instance_id,
  source: `recorded-${name}`,
  exit: 'submitted',
  messages: [call('c0', command), call('c1', 'echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT')],
});

describe.skipIf(!hasBubblewrap())('POST /solve with huge, empty, symlink and other-tests-breaking candidates', () => {
  let world: TestWorld;
  beforeAll(async () => {
    world = await createWorld();
  });
  afterAll(async () => {
    await world?.close();
  });

  async function solve(extra: Record<string, unknown>) {
    const server = await world.start();
    try {
      const response = await server.app.inject({ method: 'POST', url: '/solve?wait=true', payload: solveBody(world.repo, extra) });
      const job = response.json();
      const events = (await server.app.winnower.store.listEvents(job.job_id)) as unknown as JobEvent[];
      const view = (await server.app.inject({ method: 'GET', url: `/jobs/${job.job_id}` })).json();
      const listed = (await server.app.inject({ method: 'GET', url: '/jobs' }))
        .json()
        .jobs.find((entry: { job_id: string }) => entry.job_id === job.job_id);
      return { job, events, view, listed };
    } finally {
      await server.close();
    }
  }

  it('chooses the fix beside a 300,000-line file and leaves the empty patch unscored and last', async () => {
    const { job, events, listed } = await solve({
      n: 3,
      policy: {
        kind: 'replay',
        recordings: [recordings['correct-fix'], scripted('huge', 'seq 1 300000 > big.txt'), recordings['gives-up']],
      },
    });
    expect(job.status).toBe('succeeded');
    expect(job.result.chosen.index).toBe(0);
    expect(job.result.outcome).toBe('chosen');
    expect(listed.overview.outcome).toBe('chosen');
    const byIndex = Object.fromEntries(job.candidates.map((c: { index: number }) => [c.index, c]));
    expect(byIndex[1].patch.length).toBeGreaterThan(2_000_000);
    expect(byIndex[1].verify.status).toBe('unresolved');
    expect(byIndex[2]).toMatchObject({ patch: '', value: null, verify: null });
    expect(job.result.selection.ranking.map((entry: { trajectory_id: string }) => entry.trajectory_id).at(-1)).toBe(
      byIndex[2].trajectory_id,
    );
    const unusable = events.filter((event) => event.type === 'candidate-unusable');
    expect(unusable).toEqual([expect.objectContaining({ index: 2, kind: 'empty', reason: 'no patch' })]);
    expect(events.filter((event) => (event.type === 'score-available' || event.type === 'verify-finish') && event.index === 2)).toEqual([]);
  }, 300_000);

  it('never chooses a patch that only makes a symbolic link to /etc/passwd, and says nothing usable was chosen', async () => {
    const { job, events, view, listed } = await solve({
      n: 1,
      policy: { kind: 'replay', recordings: [scripted('link', 'ln -s /etc/passwd passwd')] },
      // Graded by exit code alone, a run that never reads the link passes.
      verify: { enabled: true, test_command: 'true', timeout_s: 60, regression: { enabled: false } },
    });
    expect(job.status).toBe('succeeded');
    expect(job.candidates[0].patch).toContain('new file mode 120000');
    expect(job.result.chosen).toBeNull();
    expect(job.result.selection.ranking[0].unusable).toMatchObject({ kind: 'refused' });
    expect(job.result.selection.reason).toBe('None of the 1 candidate has a usable patch (1 refused by the patch rules), nothing chosen.');
    expect(events.find((event) => event.type === 'candidate-unusable')).toMatchObject({ kind: 'refused' });
    // The job ran to its end (succeeded) but chose nothing: its own outcome, wherever a client looks.
    expect(job.result.outcome).toBe('none-usable');
    expect(view.result.outcome).toBe('none-usable');
    expect(listed).toMatchObject({ status: 'succeeded', overview: { outcome: 'none-usable', chosen_index: null } });
    expect(events.at(-1)).toMatchObject({ type: 'job-finish', status: 'succeeded', outcome: 'none-usable' });
  }, 120_000);

  it('records the other failures of a resolved candidate, shows them in the job view, and does not stop on it', async () => {
    const task = demoTask();
    const { job, events, view } = await solve({
      n: 2,
      waves: [1, 1],
      policy: { kind: 'replay', recordings: [recordings['breaks-other-tests'], recordings['correct-fix']] },
      // The given test only: the other failures come from its run, not from the regression check.
      verify: {
        enabled: true,
        test_command: task.test_command,
        fail_to_pass: task.fail_to_pass,
        test_patch: task.test_patch,
        timeout_s: 60,
        regression: { enabled: false },
      },
      stop_rule: { min_value: 0, require_resolved: true },
    });
    expect(job.status).toBe('succeeded');
    const breaks = job.candidates[0];
    // SWE-bench's grading: only FAIL_TO_PASS is named, and it passes.
    expect(breaks.verify).toMatchObject({ status: 'resolved', exit_code: 1, other_failed_count: 2 });
    expect(breaks.verify.other_failed.sort()).toEqual([
      expect.stringMatching(/^test_rejects_empty /),
      expect.stringMatching(/^test_rejects_garbage /),
    ]);
    expect(view.candidates[0].verify).toMatchObject({ exit_code: 1, other_failed_count: 2 });
    expect(events.find((event) => event.type === 'verify-finish' && event.index === 0)).toMatchObject({
      exit_code: 1,
      other_failures: expect.stringMatching(/^exit 1, 2 other tests failed/),
    });
    // The stop rule waited for a clean resolved candidate: the second wave ran, and stopped nothing after it.
    expect(job.result.rollouts).toMatchObject({ finished: 2, skipped: 0 });
    expect(job.result.chosen.index).toBe(1);
    expect(
      job.result.selection.ranking.find((entry: { trajectory_id: string }) => entry.trajectory_id === breaks.trajectory_id),
    ).toMatchObject({ other_tests_failed: true });
  }, 300_000);
});
