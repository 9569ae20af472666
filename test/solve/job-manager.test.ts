import { describe, expect, it } from 'vitest';
import { JobManager } from '../../src/solve/job-manager.js';
import { createSqliteStore } from '../../src/store/sqlite-store.js';
import type { JobStore } from '../../src/store/types.js';

function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

const until = async (check: () => boolean) => {
  for (let i = 0; i < 200 && !check(); i += 1) await new Promise((resolve) => setTimeout(resolve, 5));
  expect(check()).toBe(true);
};

describe('job manager', () => {
  it('runs at most maxRunning jobs; the rest wait as queued, and a queued job cancels at once', async () => {
    const store = createSqliteStore(':memory:');
    const jobs = new JobManager(store, { maxRunning: 1 });
    const first = gate();
    const calls: string[] = [];
    const a = jobs.start('solve', {}, async () => {
      calls.push('a');
      await first.opened;
      return { ok: 'a' };
    });
    const b = jobs.start('solve', {}, async () => {
      calls.push('b');
      return { ok: 'b' };
    });
    const c = jobs.start('solve', {}, async () => {
      calls.push('c');
      return { ok: 'c' };
    });
    await until(() => jobs.get(a.id).status === 'running');
    expect(jobs.get(b.id).status).toBe('queued');
    expect(jobs.get(c.id).status).toBe('queued');

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
    const job = jobs.start('solve', {}, async (_id, { emit }) => {
      emit({ type: 'job-start', n: 1, waves: [1] });
      emit({ type: 'rollout-skip', index: 0, reason: 'test' });
      return {};
    });
    await jobs.wait(job.id);
    for (const manager of [jobs, new JobManager(store)]) {
      const seen: string[] = [];
      let ended = false;
      manager.subscribe(job.id, (event) => seen.push(`${event.seq}:${event.type}`), () => (ended = true));
      expect(seen).toEqual(['0:job-start', '1:rollout-skip', '2:job-finish']);
      expect(ended).toBe(true);
    }
    expect(store.listEvents(job.id, 1).map((event) => event.type)).toEqual(['job-finish']);
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
    const job = jobs.start('solve', {}, async (_id, { emit }) => {
      emit({ type: 'job-start', n: 1, waves: [1] });
      return { ok: true };
    });
    jobs.subscribe(job.id, (event) => live.push(event.type), () => undefined);
    expect((await jobs.wait(job.id)).status).toBe('succeeded');
    expect(live).toEqual(['job-start', 'job-finish']);
    expect(reported).toEqual(['disk full', 'disk full']);
    store.close();
  });

  it('reports a store failure at the end of a job instead of crashing the process', async () => {
    const store = createSqliteStore(':memory:');
    const failing: JobStore = {
      ...store,
      updateJob(id, update) {
        if (update.status === 'succeeded' || update.status === 'failed') throw new Error('database is locked');
        return store.updateJob(id, update);
      },
    };
    const reported: string[] = [];
    const jobs = new JobManager(failing, { onStoreError: (error, jobId) => reported.push(`${jobId}: ${(error as Error).message}`) });
    const job = jobs.start('solve', {}, async () => ({}));
    await jobs.wait(job.id);
    expect(reported).toEqual([`${job.id}: database is locked`]);
    store.close();
  });
});
