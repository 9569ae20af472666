import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { JobManager } from '../../src/solve/job-manager.js';
import { recoverInterrupted } from '../../src/solve/partial-result.js';
import { createSqliteStore } from '../../src/store/sqlite-store.js';
import type { JobStore } from '../../src/store/types.js';
import { Score, Trajectory, VerifyResult } from '../../src/types/index.js';

/** Settles, rejecting, when the job is stopped (at once if it already was). */
const untilAborted = (signal: AbortSignal) =>
  new Promise<never>((_resolve, reject) =>
    signal.aborted ? reject(signal.reason) : signal.addEventListener('abort', () => reject(signal.reason)),
  );
const patch = (value: number) => `diff --git a/a.py b/a.py\n--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-x = 1\n+x = ${value}\n`;
const tally = (passed: number, failed: number) => ({ passed, failed, missing: 0 });
const trajectory = (jobId: string, index: number, patch: string) =>
  Trajectory.parse({
    id: `${jobId}/${index}`,
    instance_id: 'demo',
    source: 'replay',
    patch,
    exit: 'submitted',
    usage: { prompt_tokens: 100, completion_tokens: 10, calls: 2 },
    meta: { steps: 2 },
  });
const score = (jobId: string, index: number, value: number) =>
  Score.parse({
    trajectory_id: `${jobId}/${index}`,
    instance_id: 'demo',
    value,
    raw: 0,
    backend: 'onnx',
    model: 'm',
    template: 'judge-v1',
    input_tokens: 10,
    truncated: false,
    cut: {},
  });
const verify = (jobId: string, index: number, resolved: boolean) =>
  VerifyResult.parse({
    trajectory_id: `${jobId}/${index}`,
    instance_id: 'demo',
    status: resolved ? 'resolved' : 'unresolved',
    applied: true,
    fail_to_pass: tally(resolved ? 1 : 0, resolved ? 0 : 1),
    pass_to_pass: tally(1, 0),
    resolved,
    parser: 'exit-code',
    exit_code: resolved ? 0 : 1,
    duration_ms: 5,
  });

function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

const until = async (check: () => boolean | Promise<boolean>) => {
  for (let i = 0; i < 200 && !(await check()); i += 1) await new Promise((resolve) => setTimeout(resolve, 5));
  expect(await check()).toBe(true);
};

describe('job manager', () => {
  it('runs at most maxRunning jobs; the rest wait as queued, and a queued job cancels at once', async () => {
    const store = createSqliteStore(':memory:');
    const jobs = new JobManager(store, { maxRunning: 1 });
    const first = gate();
    const calls: string[] = [];
    const a = await jobs.start('solve', {}, async () => {
      calls.push('a');
      await first.opened;
      return { ok: 'a' };
    });
    const b = await jobs.start('solve', {}, async () => {
      calls.push('b');
      return { ok: 'b' };
    });
    const c = await jobs.start('solve', {}, async () => {
      calls.push('c');
      return { ok: 'c' };
    });
    await until(async () => (await jobs.get(a.id)).status === 'running');
    expect((await jobs.get(b.id)).status).toBe('queued');
    expect((await jobs.get(c.id)).status).toBe('queued');

    const cancelled = await jobs.cancel(b.id);
    expect(cancelled.status).toBe('cancelled');
    expect(calls).toEqual(['a']);

    first.open();
    expect((await jobs.wait(a.id)).status).toBe('succeeded');
    expect((await jobs.wait(c.id)).result).toEqual({ ok: 'c' });
    expect(calls).toEqual(['a', 'c']);
    store.close();
  });

  it('keeps every event with the job: a subscriber after the end, even in another manager, gets them all, then the end', async () => {
    const store = createSqliteStore(':memory:');
    const jobs = new JobManager(store);
    const job = await jobs.start('solve', {}, async (_id, { emit }) => {
      emit({ type: 'job-start', n: 1, waves: [1] });
      emit({ type: 'rollout-skip', index: 0, reason: 'test' });
      return {};
    });
    await jobs.wait(job.id);
    for (const manager of [jobs, new JobManager(store)]) {
      const seen: string[] = [];
      let ended = false;
      await manager.subscribe(
        job.id,
        (event) => seen.push(`${event.seq}:${event.type}`),
        () => (ended = true),
      );
      expect(seen).toEqual(['0:job-start', '1:rollout-skip', '2:job-finish']);
      expect(ended).toBe(true);
    }
    expect((await store.listEvents(job.id, 1)).map((event) => event.type)).toEqual(['job-finish']);
    store.close();
  });

  it('runs a job on when the store cannot keep an event, and reports it', async () => {
    const store = createSqliteStore(':memory:');
    const reported: string[] = [];
    const failing: JobStore = {
      ...store,
      appendEvent() {
        throw new Error('disk full');
      },
    };
    const jobs = new JobManager(failing, { onStoreError: (error) => reported.push((error as Error).message) });
    const live: string[] = [];
    const job = await jobs.start('solve', {}, async (_id, { emit }) => {
      emit({ type: 'job-start', n: 1, waves: [1] });
      return { ok: true };
    });
    await jobs.subscribe(
      job.id,
      (event) => live.push(event.type),
      () => undefined,
    );
    expect((await jobs.wait(job.id)).status).toBe('succeeded');
    expect(live).toEqual(['job-start', 'job-finish']);
    expect(reported).toEqual(['disk full', 'disk full']);
    store.close();
  });

  it('after a crash: no rollout counts as running, and the result is the best finished candidate, marked partial', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'wnw-jobs-'));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const before = createSqliteStore(dir);
    await before.createJob({
      id: 'j',
      kind: 'solve',
      request: { instance_id: 'demo', n: 4, verify: { enabled: true } },
      status: 'running',
      progress: { rollouts_total: 4, rollouts_running: 2, rollouts_finished: 2, rollouts_failed: 0, scored: 2, verified: 2 },
    });
    // The resolved candidate scored lower than the unresolved one: hybrid selection (tests ran) prefers it.
    await before.putCandidate('j', 0, {
      status: 'finished',
      trajectory: trajectory('j', 0, patch(2)),
      score: score('j', 0, 0.4),
      verify: verify('j', 0, true),
    });
    await before.putCandidate('j', 1, {
      status: 'finished',
      trajectory: trajectory('j', 1, patch(3)),
      score: score('j', 1, 0.9),
      verify: verify('j', 1, false),
    });
    await before.putCandidate('j', 2, { status: 'running', trajectory: trajectory('j', 2, '') });
    await before.putCandidate('j', 3, { status: 'running' });
    before.close();

    const after = createSqliteStore(dir);
    expect(await recoverInterrupted(after)).toEqual(['j']);
    const job = (await after.getJob('j'))!;
    expect(job.status).toBe('interrupted');
    expect(job.progress.rollouts_running).toBe(0);
    const result = job.result as Record<string, any>;
    expect(result.partial).toBe(true);
    expect(result.reason).toMatch(/server stopped/);
    expect(result.chosen).toMatchObject({ index: 0, trajectory_id: 'j/0', verify_status: 'resolved', value: 0.4 });
    expect(result.selection.strategy).toBe('hybrid');
    expect(result.rollouts).toEqual({ planned: 4, finished: 2, failed: 0, cancelled: 2, skipped: 0 });
    expect(result.candidates.map((c: { status: string }) => c.status)).toEqual(['finished', 'finished', 'cancelled', 'cancelled']);
    expect(result.compute).toMatchObject({ policy_calls: 6, tokens: 330 });
    after.close();
  });

  it("after a crash: the partial selection reads the stored request's tests, so a candidate that edits the test runner is flagged", async () => {
    const store = createSqliteStore(':memory:');
    onTestFinished(() => store.close());
    await store.createJob({
      id: 'j',
      kind: 'solve',
      request: { instance_id: 'demo', n: 2, verify: { enabled: true, test_command: 'python3 checks/run.py' } },
      status: 'running',
    });
    const editsRunner =
      'diff --git a/checks/run.py b/checks/run.py\n--- a/checks/run.py\n+++ b/checks/run.py\n@@ -1 +1 @@\n-check()\n+exit(0)\n';
    // Both resolved; the one that rewrote the runner scored higher and would win on value alone.
    await store.putCandidate('j', 0, {
      status: 'finished',
      trajectory: trajectory('j', 0, editsRunner),
      score: score('j', 0, 0.9),
      verify: verify('j', 0, true),
    });
    await store.putCandidate('j', 1, {
      status: 'finished',
      trajectory: trajectory('j', 1, patch(2)),
      score: score('j', 1, 0.4),
      verify: verify('j', 1, true),
    });
    expect(await recoverInterrupted(store)).toEqual(['j']);
    const result = (await store.getJob('j'))!.result as Record<string, any>;
    expect(result.chosen).toMatchObject({ index: 1 });
    expect(JSON.stringify(result.selection)).toMatch(/edits-verified-file in checks\/run\.py/);
  });

  it('after a crash: a rollout the stop rule had skipped says so in the partial result, as in a finished one', async () => {
    const store = createSqliteStore(':memory:');
    onTestFinished(() => store.close());
    await store.createJob({ id: 'j', kind: 'solve', request: { instance_id: 'demo', n: 2 }, status: 'running' });
    await store.putCandidate('j', 0, { status: 'finished', trajectory: trajectory('j', 0, patch(2)), score: score('j', 0, 0.7) });
    await store.putCandidate('j', 1, { status: 'skipped' });
    expect(await recoverInterrupted(store)).toEqual(['j']);
    const result = (await store.getJob('j'))!.result as Record<string, any>;
    expect(result.candidates).toEqual([
      {
        index: 0,
        trajectory_id: 'j/0',
        status: 'finished',
        source: 'replay',
        config: null,
        exit: 'submitted',
        steps: 2,
        value: 0.7,
        verify_status: null,
        checks: null,
        error: null,
      },
      {
        index: 1,
        trajectory_id: 'j/1',
        status: 'skipped',
        source: null,
        config: null,
        exit: 'skipped',
        steps: 0,
        value: null,
        verify_status: null,
        checks: null,
        error: null,
      },
    ]);
    expect(result.rollouts).toMatchObject({ planned: 2, finished: 1, skipped: 1 });
  });

  it('at shutdown: an interrupted solve job answers with the best candidate it had finished, marked partial', async () => {
    const store = createSqliteStore(':memory:');
    const jobs = new JobManager(store);
    const job = await jobs.start('solve', { instance_id: 'demo', n: 2, verify: { enabled: false } }, async (jobId, { signal }) => {
      await store.putCandidate(jobId, 0, { status: 'finished', trajectory: trajectory(jobId, 0, patch(2)), score: score(jobId, 0, 0.7) });
      await store.putCandidate(jobId, 1, { status: 'running' });
      await untilAborted(signal);
    });
    for (let i = 0; i < 200 && (await store.listCandidates(job.id)).length < 2; i += 1)
      await new Promise((resolve) => setTimeout(resolve, 5));
    const stopped = await jobs.cancel(job.id, 'interrupted');
    expect(stopped.status).toBe('interrupted');
    const result = stopped.result as Record<string, any>;
    expect(result).toMatchObject({ partial: true, chosen: { index: 0, trajectory_id: `${job.id}/0`, value: 0.7 } });
    expect(result.selection.strategy).toBe('value');
    // A client's cancel keeps what had finished too (status cancelled, result partial).
    const other = await jobs.start('solve', { instance_id: 'demo', n: 2, verify: { enabled: false } }, async (jobId, { signal }) => {
      await store.putCandidate(jobId, 0, { status: 'finished', trajectory: trajectory(jobId, 0, patch(2)), score: score(jobId, 0, 0.6) });
      await untilAborted(signal);
    });
    for (let i = 0; i < 200 && (await store.listCandidates(other.id)).length < 1; i += 1)
      await new Promise((resolve) => setTimeout(resolve, 5));
    const cancelled = await jobs.cancel(other.id);
    expect(cancelled.status).toBe('cancelled');
    expect(cancelled.result).toMatchObject({ partial: true, chosen: { index: 0, value: 0.6 } });
    expect((cancelled.result as Record<string, any>).reason).toContain('job cancelled');
    store.close();
  });

  it('reports a store failure at the end of a job instead of crashing the process', async () => {
    const store = createSqliteStore(':memory:');
    const failing: JobStore = {
      ...store,
      async updateJob(id, update) {
        if (update.status === 'succeeded' || update.status === 'failed') throw new Error('database is locked');
        return await store.updateJob(id, update);
      },
    };
    const reported: string[] = [];
    const jobs = new JobManager(failing, { onStoreError: (error, jobId) => reported.push(`${jobId}: ${(error as Error).message}`) });
    const job = await jobs.start('solve', {}, async () => ({}));
    await jobs.wait(job.id);
    expect(reported).toEqual([`${job.id}: database is locked`]);
    store.close();
  });
});
