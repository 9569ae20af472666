import { chmodSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createSqliteStore } from '../../src/store/sqlite-store.js';
import { Trajectory } from '../../src/types/index.js';

const dirs: string[] = [];
function dataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'wnw-store-'));
  dirs.push(dir);
  return dir;
}
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('sqlite job store', () => {
  it('keeps its data private: the folder 0700, the database and its WAL/SHM files 0600, an older 0644 database tightened', async () => {
    const dir = join(dataDir(), 'data');
    const store = createSqliteStore(dir);
    await store.createJob({ id: 'j1', kind: 'solve', request: { n: 2 } });
    const mode = (path: string) => statSync(path).mode & 0o777;
    expect(mode(dir)).toBe(0o700);
    for (const name of ['winnower.db', 'winnower.db-wal', 'winnower.db-shm']) expect([name, mode(join(dir, name))]).toEqual([name, 0o600]);
    store.close();

    const older = dataDir();
    writeFileSync(join(older, 'winnower.db'), '');
    chmodSync(join(older, 'winnower.db'), 0o644);
    createSqliteStore(older).close();
    expect(mode(join(older, 'winnower.db'))).toBe(0o600);
  });

  it('keeps jobs, candidates and results across reopen', async () => {
    const dir = dataDir();
    const store = createSqliteStore(dir);
    await store.createJob({ id: 'j1', kind: 'solve', request: { n: 2 } });
    const trajectory = Trajectory.parse({ id: 't0', instance_id: 'demo', source: 'replay', patch: 'diff --git a/x b/x\n' });
    await store.putCandidate('j1', 0, { status: 'finished', trajectory });
    await store.putCandidate('j1', 1, { status: 'failed', error: { code: 'WNW_ERR_POLICY_UPSTREAM', message: 'boom' } });
    await store.updateJob('j1', { status: 'succeeded', result: { chosen: 't0' }, progress: { rollouts_done: 2 } });
    store.close();

    const reopened = createSqliteStore(dir);
    const job = (await reopened.getJob('j1'))!;
    expect(job.status).toBe('succeeded');
    expect(job.request).toEqual({ n: 2 });
    expect(job.result).toEqual({ chosen: 't0' });
    expect(job.progress).toEqual({ rollouts_done: 2 });
    const candidates = await reopened.listCandidates('j1');
    expect(candidates.map((c) => [c.index, c.status])).toEqual([
      [0, 'finished'],
      [1, 'failed'],
    ]);
    expect(candidates[0]!.trajectory?.patch).toBe('diff --git a/x b/x\n');
    expect(candidates[1]!.error?.code).toBe('WNW_ERR_POLICY_UPSTREAM');
    reopened.close();
  });

  it('merges candidate updates instead of overwriting', async () => {
    const store = createSqliteStore(':memory:');
    await store.createJob({ id: 'j', kind: 'solve', request: {} });
    await store.putCandidate('j', 0, { status: 'running' });
    await store.putCandidate('j', 0, {
      score: {
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
      },
    });
    const candidate = await store.putCandidate('j', 0, { status: 'finished' });
    expect(candidate.status).toBe('finished');
    expect(candidate.score?.value).toBe(0.5);
    store.close();
  });

  it('marks jobs left running by a previous process as interrupted, keeping what they had', async () => {
    const dir = dataDir();
    const store = createSqliteStore(dir);
    await store.createJob({ id: 'done', kind: 'solve', request: {}, status: 'succeeded' });
    await store.createJob({ id: 'busy', kind: 'solve', request: {}, status: 'running' });
    await store.putCandidate('busy', 0, { status: 'finished' });
    await store.putCandidate('busy', 1, { status: 'running' });
    store.close();

    const restarted = createSqliteStore(dir);
    expect(await restarted.markInterrupted()).toEqual(['busy']);
    expect((await restarted.getJob('busy'))!.status).toBe('interrupted');
    expect((await restarted.getJob('done'))!.status).toBe('succeeded');
    expect((await restarted.listCandidates('busy')).map((c) => c.status)).toEqual(['finished', 'cancelled']);
    expect(await restarted.markInterrupted()).toEqual([]);
    restarted.close();
  });

  it('keeps events across reopen, in order, and lists those after a sequence number', async () => {
    const dir = dataDir();
    const store = createSqliteStore(dir);
    await store.createJob({ id: 'j', kind: 'solve', request: {} });
    const time = '2026-01-01T00:00:00.000Z';
    await store.appendEvent('j', { type: 'job-start', n: 2, waves: [2], seq: 0, time });
    await store.appendEvent('j', { type: 'rollout-start', index: 0, wave: 0, seq: 1, time });
    await store.appendEvent('j', { type: 'job-finish', status: 'succeeded', seq: 2, time });
    await expect(store.appendEvent('j', { type: 'job-finish', status: 'succeeded', seq: 2, time })).rejects.toThrow();
    store.close();
    const reopened = createSqliteStore(dir);
    expect(await reopened.listEvents('j')).toEqual([
      { type: 'job-start', n: 2, waves: [2], seq: 0, time },
      { type: 'rollout-start', index: 0, wave: 0, seq: 1, time },
      { type: 'job-finish', status: 'succeeded', seq: 2, time },
    ]);
    expect((await reopened.listEvents('j', 1)).map((event) => event.seq)).toEqual([2]);
    expect(await reopened.listEvents('other')).toEqual([]);
    reopened.close();
  });

  it('says after a restart that no rollout of an interrupted job runs any more, and ends its events', async () => {
    const dir = dataDir();
    const store = createSqliteStore(dir);
    await store.createJob({
      id: 'busy',
      kind: 'solve',
      request: {},
      status: 'running',
      progress: { rollouts_total: 3, rollouts_running: 2, rollouts_finished: 1, rollouts_failed: 0, scored: 1, verified: 0 },
    });
    await store.appendEvent('busy', { type: 'job-start', n: 3, waves: [3], seq: 0, time: '2026-01-01T00:00:00.000Z' });
    store.close();
    const restarted = createSqliteStore(dir);
    await restarted.markInterrupted();
    expect((await restarted.getJob('busy'))!.progress).toEqual({
      rollouts_total: 3,
      rollouts_running: 0,
      rollouts_finished: 1,
      rollouts_failed: 0,
      scored: 1,
      verified: 0,
    });
    expect((await restarted.listEvents('busy')).map((event) => [event.seq, event.type, event.status])).toEqual([
      [0, 'job-start', undefined],
      [1, 'job-finish', 'interrupted'],
    ]);
    restarted.close();
  });

  it('reports an unknown job with a coded error', async () => {
    const store = createSqliteStore(':memory:');
    await expect(store.updateJob('nope', { status: 'running' })).rejects.toThrow(
      expect.objectContaining({ code: 'WNW_ERR_JOB_NOT_FOUND' }),
    );
    expect(await store.getJob('nope')).toBeUndefined();
    store.close();
  });
});
