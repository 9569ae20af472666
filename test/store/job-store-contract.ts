/**
 * The JobStore contract, run against every store (SQLite in sqlite-store.unit.test.ts, Postgres
 * in postgres-store.test.ts): what the server and the solve pipeline rely on, whichever keeps the jobs.
 */
import { expect, it } from 'vitest';
import type { JobStore } from '../../src/store/types.js';
import { Trajectory } from '../../src/types/index.js';

export interface StoreUnderTest {
  /** A new, empty store. */
  open(): Promise<JobStore>;
  /** The same storage as the last `open`, opened again (a restart). */
  reopen(): Promise<JobStore>;
}

const score = {
  trajectory_id: 't',
  instance_id: 'i',
  value: 0.5,
  raw: 0,
  backend: 'onnx',
  model: 'm',
  template: 'judge-v1',
  input_tokens: 3,
  truncated: false,
  cut: { thoughts: 0, observations: 0, steps_dropped: 0, patch: false, tokens_before: 3 },
  cached: false,
};

export function jobStoreContract(subject: StoreUnderTest): void {
  it('keeps jobs, candidates and results across reopen', async () => {
    const store = await subject.open();
    await store.createJob({ id: 'j1', kind: 'solve', request: { n: 2, nested: { b: 1, a: [2, 1] } } });
    const trajectory = Trajectory.parse({ id: 't0', instance_id: 'demo', source: 'replay', patch: 'diff --git a/x b/x\n' });
    await store.putCandidate('j1', 0, { status: 'finished', trajectory });
    await store.putCandidate('j1', 1, { status: 'failed', error: { code: 'WNW_ERR_POLICY_UPSTREAM', message: 'boom' } });
    await store.updateJob('j1', { status: 'succeeded', result: { chosen: 't0' }, progress: { rollouts_done: 2 } });
    await store.close();

    const reopened = await subject.reopen();
    const job = (await reopened.getJob('j1'))!;
    expect(job.status).toBe('succeeded');
    // The request comes back as it was sent, its keys in their order.
    expect(JSON.stringify(job.request)).toBe(JSON.stringify({ n: 2, nested: { b: 1, a: [2, 1] } }));
    expect(job.result).toEqual({ chosen: 't0' });
    expect(job.progress).toEqual({ rollouts_done: 2 });
    const candidates = await reopened.listCandidates('j1');
    expect(candidates.map((c) => [c.index, c.status])).toEqual([
      [0, 'finished'],
      [1, 'failed'],
    ]);
    expect(candidates[0]!.trajectory?.patch).toBe('diff --git a/x b/x\n');
    expect(candidates[1]!.error?.code).toBe('WNW_ERR_POLICY_UPSTREAM');
    await reopened.close();
  });

  it('merges candidate and job updates instead of overwriting', async () => {
    const store = await subject.open();
    await store.createJob({ id: 'j', kind: 'solve', request: {} });
    await store.putCandidate('j', 0, { status: 'running' });
    await store.putCandidate('j', 0, { score });
    const candidate = await store.putCandidate('j', 0, { status: 'finished' });
    expect(candidate.status).toBe('finished');
    expect(candidate.score?.value).toBe(0.5);
    // Two writers at once, each with its own field: both land.
    await Promise.all([
      store.putCandidate('j', 1, { status: 'running' }),
      store.putCandidate('j', 1, { error: { code: 'WNW_ERR_OP_ABORTED', message: 'x' } }),
    ]);
    const [, second] = await store.listCandidates('j');
    expect([second!.status, second!.error?.code]).toEqual(['running', 'WNW_ERR_OP_ABORTED']);
    await store.updateJob('j', { progress: { scored: 1 } });
    const job = await store.updateJob('j', { status: 'running' });
    expect([job.status, job.progress]).toEqual(['running', { scored: 1 }]);
    expect((await store.updateJob('j', { error: null })).error).toBeNull();
    await store.close();
  });

  it('keeps where a retry reused a candidate from across later updates and a reopen; a candidate of its own job has none', async () => {
    const store = await subject.open();
    await store.createJob({ id: 'retry', kind: 'solve', request: { retry_of: 'first' } });
    const trajectory = Trajectory.parse({ id: 'first/0', instance_id: 'demo', source: 'replay', patch: '' });
    await store.putCandidate('retry', 0, { status: 'finished', trajectory, reused_from: { job_id: 'first', index: 0 } });
    await store.putCandidate('retry', 0, { score });
    await store.putCandidate('retry', 1, { status: 'finished' });
    await store.close();
    const reopened = await subject.reopen();
    expect((await reopened.listCandidates('retry')).map((c) => [c.index, c.reused_from, c.score?.value ?? null])).toEqual([
      [0, { job_id: 'first', index: 0 }, 0.5],
      [1, null, null],
    ]);
    await reopened.close();
  });

  it('keeps events in order, refuses a repeated sequence number, and lists those after one', async () => {
    const store = await subject.open();
    await store.createJob({ id: 'j', kind: 'solve', request: {} });
    const time = '2026-01-01T00:00:00.000Z';
    await store.appendEvent('j', { type: 'job-start', n: 2, waves: [2], seq: 0, time });
    await store.appendEvent('j', { type: 'rollout-start', index: 0, wave: 0, seq: 1, time });
    await store.appendEvent('j', { type: 'job-finish', status: 'succeeded', seq: 2, time });
    await expect(store.appendEvent('j', { type: 'job-finish', status: 'succeeded', seq: 2, time })).rejects.toThrow();
    await store.close();
    const reopened = await subject.reopen();
    expect(await reopened.listEvents('j')).toEqual([
      { type: 'job-start', n: 2, waves: [2], seq: 0, time },
      { type: 'rollout-start', index: 0, wave: 0, seq: 1, time },
      { type: 'job-finish', status: 'succeeded', seq: 2, time },
    ]);
    expect((await reopened.listEvents('j', 1)).map((event) => event.seq)).toEqual([2]);
    expect(await reopened.listEvents('other')).toEqual([]);
    await reopened.close();
  });

  it('pages jobs newest first with filters, counts them by status, and deletes one with its rows', async () => {
    const store = await subject.open();
    for (const [id, kind, status] of [
      ['a', 'solve', 'succeeded'],
      ['b', 'rerank', 'failed'],
      ['c', 'solve', 'queued'],
      ['d', 'solve', 'running'],
    ] as const) {
      await store.createJob({ id, kind, request: {}, status });
      await new Promise((resolve) => setTimeout(resolve, 3));
    }
    expect((await store.listJobs()).map((job) => job.id)).toEqual(['d', 'c', 'b', 'a']);
    const first = await store.listJobs({ limit: 2 });
    expect((await store.listJobs({ limit: 2, before: first[1]! })).map((job) => job.id)).toEqual(['b', 'a']);
    expect((await store.listJobs({ kind: 'solve', status: 'succeeded' })).map((job) => job.id)).toEqual(['a']);
    expect((await store.listJobs({ createdAfter: first[1]!.created_at })).map((job) => job.id)).toEqual(['d']);
    expect(await store.countJobsByStatus()).toEqual({ queued: 1, running: 1, succeeded: 1, failed: 1, cancelled: 0, interrupted: 0 });
    await store.putCandidate('a', 0, { status: 'finished' });
    await store.appendEvent('a', { type: 'job-finish', status: 'succeeded', seq: 0, time: '2026-01-01T00:00:00.000Z' });
    expect(await store.deleteJob('a')).toBe(true);
    expect(await store.deleteJob('a')).toBe(false);
    expect([await store.getJob('a'), await store.listCandidates('a'), await store.listEvents('a')]).toEqual([undefined, [], []]);
    await store.close();
  });

  it('purges finished jobs by age and by count, never a queued or running one', async () => {
    const store = await subject.open();
    for (const [id, status] of [
      ['old', 'succeeded'],
      ['mid', 'cancelled'],
      ['new', 'failed'],
      ['waiting', 'queued'],
      ['busy', 'running'],
    ] as const) {
      await store.createJob({ id, kind: 'solve', request: {}, status });
      await new Promise((resolve) => setTimeout(resolve, 3));
    }
    const cutoff = (await store.getJob('mid'))!.updated_at;
    expect(await store.purgeFinished({ finishedBefore: cutoff })).toEqual(['old']);
    expect(await store.purgeFinished({ keepNewest: 1 })).toEqual(['mid']);
    expect((await store.listJobs()).map((job) => job.id).sort()).toEqual(['busy', 'new', 'waiting']);
    expect(await store.purgeFinished({})).toEqual([]);
    await store.close();
  });

  it('reports an unknown job with a coded error', async () => {
    const store = await subject.open();
    await expect(store.updateJob('nope', { status: 'running' })).rejects.toThrow(
      expect.objectContaining({ code: 'WNW_ERR_JOB_NOT_FOUND' }),
    );
    expect(await store.getJob('nope')).toBeUndefined();
    await store.close();
  });
}
