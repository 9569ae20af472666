/** A /rerank that failed after its work began is kept as a failed (or, the client gone, cancelled) rerank job (src/server/rerank-job.ts). */
import { describe, expect, it, vi } from 'vitest';
import { wnwError } from '../../src/errors.js';
import { rerankRecorder } from '../../src/server/rerank-job.js';
import { createSqliteStore } from '../../src/store/sqlite-store.js';
import type { JobStore } from '../../src/store/types.js';
import { Trajectory } from '../../src/types/index.js';

const trajectories = ['a', 'b'].map((id) => Trajectory.parse({ id, instance_id: 't-1', source: 'request', patch: `diff ${id}\n` }));
const request = { instanceId: 't-1', stored: { task: { instance_id: 't-1' }, candidates: [{ id: 'a' }, { id: 'b' }] }, trajectories };

/** `real` with one write refused as a full disk would refuse it. */
const failingOn = (real: JobStore, method: 'updateJob' | 'putCandidate'): JobStore => ({
  ...real,
  [method]: async () => {
    throw new Error('disk full');
  },
});

describe('a /rerank that failed after it began', () => {
  it('is kept as a failed rerank job with its error and the candidates as given', async () => {
    const store = createSqliteStore(':memory:');
    const log = { error: vi.fn() };
    await rerankRecorder(store, request, log).failed(wnwError('WNW_ERR_SCORE_BACKEND', 'the scorer broke'), false);
    const [job] = await store.listJobs({ kind: 'rerank' });
    expect(job).toMatchObject({ status: 'failed', error: { code: 'WNW_ERR_SCORE_BACKEND', message: 'the scorer broke' }, result: null });
    const candidates = await store.listCandidates(job!.id);
    expect(candidates.map((c) => [c.index, c.trajectory?.id, c.score, c.verify])).toEqual([
      [0, 'a', null, null],
      [1, 'b', null, null],
    ]);
    expect(log.error).not.toHaveBeenCalled();
    await store.close();
  });

  it('is kept as cancelled when the client went away', async () => {
    const store = createSqliteStore(':memory:');
    await rerankRecorder(store, request, { error: vi.fn() }).failed(wnwError('WNW_ERR_OP_ABORTED', 'the client disconnected'), true);
    expect((await store.listJobs())[0]).toMatchObject({ kind: 'rerank', status: 'cancelled', error: { code: 'WNW_ERR_OP_ABORTED' } });
    await store.close();
  });

  it('logs a store that fails while recording, and throws nothing', async () => {
    const real = createSqliteStore(':memory:');
    const store = failingOn(real, 'updateJob');
    const log = { error: vi.fn() };
    await expect(rerankRecorder(store, request, log).failed(new Error('boom'), false)).resolves.toBeUndefined();
    expect(log.error).toHaveBeenCalledWith(
      expect.objectContaining({ err: expect.objectContaining({ message: 'disk full' }) }),
      expect.any(String),
    );
    await real.close();
  });

  it('is not left running when a candidate cannot be written after the job was created', async () => {
    const real = createSqliteStore(':memory:');
    const store = failingOn(real, 'putCandidate');
    const log = { error: vi.fn() };
    const outcome = { scores: new Map(), verify: new Map(), answer: { selection: { chosen: null } } } as never;
    await expect(rerankRecorder(store, request, log).succeeded(outcome)).resolves.toBeUndefined();
    const [job] = await real.listJobs({ kind: 'rerank' });
    expect(job).toMatchObject({ status: 'failed', error: { message: expect.stringContaining('could not record the job: disk full') } });
    expect(log.error).toHaveBeenCalled();
    await real.close();
  });
});
