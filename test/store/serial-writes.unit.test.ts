import { describe, expect, it } from 'vitest';
import { JobManager } from '../../src/solve/job-manager.js';
import { SerialWrites } from '../../src/store/serial-writes.js';
import { createSqliteStore } from '../../src/store/sqlite-store.js';
import type { JobStore } from '../../src/store/types.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('serial writes', () => {
  it('runs writes in the order asked, each after the one before has settled', async () => {
    const writes = new SerialWrites();
    const landed: number[] = [];
    // The first write is the slowest: unqueued, it would land last.
    const delays = [30, 1, 10, 0];
    await Promise.all(delays.map((ms, index) => writes.run(async () => (await sleep(ms), landed.push(index)))));
    expect(landed).toEqual([0, 1, 2, 3]);
  });

  it('keeps the failure of a write nobody awaited for the next awaited one, then goes on', async () => {
    const writes = new SerialWrites();
    writes.fire(async () => {
      throw new Error('disk full');
    });
    await expect(writes.run(async () => 'next')).rejects.toThrow('disk full');
    await expect(writes.run(async () => 'after')).resolves.toBe('after');
    await expect(writes.flush()).resolves.toBeUndefined();
  });

  it('keeps a job’s events in the store in emitted order over a store whose writes take varying time', async () => {
    const sqlite = createSqliteStore(':memory:');
    let calls = 0;
    const landed: number[] = [];
    const slow: JobStore = {
      ...sqlite,
      async appendEvent(jobId, event) {
        // Earlier events wait longer: written as called, they would land out of order.
        const delay = [20, 5, 0][calls++ % 3]!;
        await sleep(delay);
        landed.push(event.seq);
        return sqlite.appendEvent(jobId, event);
      },
    };
    const jobs = new JobManager(slow);
    const job = await jobs.start('solve', {}, async (_id, { emit }) => {
      emit({ type: 'job-start', n: 2, waves: [2] });
      emit({ type: 'rollout-start', index: 0, wave: 0 });
      emit({ type: 'rollout-start', index: 1, wave: 0 });
      return {};
    });
    await jobs.wait(job.id);
    // Written in the order emitted (what a store that notifies other replicas as it writes needs),
    // and all of them once the job no longer runs.
    expect(landed).toEqual([0, 1, 2, 3]);
    expect((await sqlite.listEvents(job.id)).map((event) => [event.seq, event.type])).toEqual([
      [0, 'job-start'],
      [1, 'rollout-start'],
      [2, 'rollout-start'],
      [3, 'job-finish'],
    ]);
    await sqlite.close();
  });
});
