/**
 * An interrupted job loses none of its execution evidence (issue 20): after a crash (SIGKILL: only
 * the store is left) and at a shutdown mid-check, the partial result carries the regression
 * check's and the reproduction tests' evidence recorded so far, rebuilt from the stored events,
 * and selection uses it.
 */
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { recoverInterrupted } from '../../src/solve/partial-result.js';
import { createSqliteStore } from '../../src/store/sqlite-store.js';
import { Trajectory } from '../../src/types/index.js';
import type { CandidateRegressions, GeneratedTest } from '../../src/types/index.js';
import { createWorld, DEMO_DIR, demoRecordings, demoTask, hasBubblewrap } from './helpers.js';

const patch = (value: number) => `diff --git a/a.py b/a.py\n--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-x = 1\n+x = ${value}\n`;
const trajectory = (index: number) =>
  Trajectory.parse({
    id: `j/${index}`,
    instance_id: 'demo',
    source: 'replay',
    patch: patch(index + 2),
    exit: 'submitted',
    meta: { steps: 2 },
  });
const regressions = (index: number, count: number): CandidateRegressions => ({
  index,
  trajectory_id: `j/${index}`,
  status: 'checked',
  regressions: Array.from({ length: count }, (_, k) => ({ test: `t${k}`, base: 'passed' as const, candidate: 'failed' as const })),
  compared: 5,
  scope: 'full',
  timed_out: false,
  duration_ms: 100,
});
const generated: GeneratedTest = {
  writer: 0,
  trajectory_id: 'j/test-writer/0',
  file: 'tests/test_repro.py',
  content: 'x',
  base_outcome: 'failed',
  valid: true,
  discard_reason: null,
  base_log_tail: '',
  tokens: 50,
  policy_calls: 3,
  sandbox_ms: 200,
};

describe('interrupted jobs keep the execution evidence', () => {
  it('after a crash: the partial result has the regressions and the matrix so far, and selects by them', async () => {
    const store = createSqliteStore(':memory:');
    onTestFinished(() => store.close());
    await store.createJob({ id: 'j', kind: 'solve', request: { instance_id: 'demo', n: 3, verify: { enabled: true } }, status: 'running' });
    for (const index of [0, 1]) await store.putCandidate('j', index, { status: 'finished', trajectory: trajectory(index) });
    await store.putCandidate('j', 2, { status: 'running' });
    let seq = 0;
    const event = (body: Record<string, unknown>) =>
      store.appendEvent('j', { seq: seq++, time: new Date().toISOString(), ...body } as never);
    await event({
      type: 'regression-finish',
      index: null,
      base: { runner: 'pytest', command: 'pytest', scope: 'full', passed: 5, flaky: ['t_flaky'], duration_ms: 300 },
    });
    await event({ type: 'regression-finish', index: 0, candidate: regressions(0, 2) });
    await event({ type: 'regression-finish', index: 1, candidate: regressions(1, 0) });
    await event({ type: 'repro-test-finish', writer: 0, test: generated });
    await event({ type: 'matrix-cell-finish', cell: { index: 0, writer: 0, outcome: 'passed', duration_ms: 10 } });
    // The crash came before candidate 1's cell finished.
    expect(await recoverInterrupted(store)).toEqual(['j']);
    const job = (await store.getJob('j'))!;
    expect(job.status).toBe('interrupted');
    const result = job.result as Record<string, any>;
    expect(result.partial).toBe(true);
    expect(result.checks.regression.base).toMatchObject({ passed: 5, flaky: ['t_flaky'] });
    expect(result.checks.regression.candidates.map((c: CandidateRegressions) => c.regressions.length)).toEqual([2, 0]);
    expect(result.checks.reproduction.tests).toEqual([generated]);
    expect(result.checks.reproduction.matrix).toEqual([{ index: 0, writer: 0, outcome: 'passed', duration_ms: 10 }]);
    expect(result.checks.cost).toEqual({ sandbox_ms: 300 + 200 + 200 + 10, policy_tokens: 50, policy_calls: 3 });
    expect(result.candidates[0].checks).toEqual({ regressions: 2, repro_passed: 1, repro_total: 1 });
    // Candidate 0 breaks two tests; candidate 1 breaks none: hybrid picks 1.
    expect(result.chosen.index).toBe(1);
  });

  it.skipIf(!hasBubblewrap()).each(['interrupted', 'cancelled'] as const)(
    "stopped mid-check (%s: shutdown or a client's cancel): the job keeps the evidence recorded so far",
    async (stopAs) => {
      const world = await createWorld();
      onTestFinished(() => world.close());
      const server = await world.start();
      onTestFinished(() => server.close());
      const recordings = demoRecordings();
      const writers = Object.values(demoRecordings(join(DEMO_DIR, 'test-writers')));
      const response = await server.app.inject({
        method: 'POST',
        url: '/solve',
        payload: {
          instance_id: demoTask().instance_id,
          issue: demoTask().problem_statement,
          repo: { path: world.repo },
          n: 2,
          policy: { kind: 'replay', recordings: [recordings['correct-fix'], recordings['plausible-wrong-fix']] },
          agent: { config: 'default', time_limit_s: 60, command_timeout_s: 30 },
          verify: { enabled: true, reproduction: { n: 3, policy: { kind: 'replay', recordings: writers }, budget_s: 60, timeout_s: 60 } },
        },
      });
      expect(response.statusCode).toBe(202);
      const jobId = response.json().job_id as string;
      // Interrupt as soon as the first check has recorded something.
      await new Promise<void>((resolve) => {
        const subscription = server.jobs.subscribe(
          jobId,
          (event) => {
            if (event.type === 'regression-finish' || event.type === 'repro-test-finish') {
              queueMicrotask(() => void subscription.then((stop) => stop()));
              resolve();
            }
          },
          () => resolve(),
        );
      });
      const stopped = await server.jobs.cancel(jobId, stopAs);
      expect(stopped.status).toBe(stopAs);
      const result = stopped.result as Record<string, any>;
      expect(result.partial).toBe(true);
      const recorded =
        (result.checks.regression?.base ? 1 : 0) +
        (result.checks.regression?.candidates.length ?? 0) +
        (result.checks.reproduction?.tests.length ?? 0);
      expect(recorded).toBeGreaterThan(0);
    },
    240_000,
  );
});
