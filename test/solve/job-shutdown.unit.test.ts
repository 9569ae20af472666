/** JobManager.shutdown is bounded: a job that does not stop when asked cannot hold it forever. */
import { describe, expect, it } from 'vitest';
import { JobManager } from '../../src/solve/job-manager.js';
import { createSqliteStore } from '../../src/store/sqlite-store.js';

describe('job manager shutdown', () => {
  it('waits for jobs that stop, and returns after the grace with the ids of those that do not', async () => {
    const store = createSqliteStore(':memory:');
    const jobs = new JobManager(store);
    let release!: () => void;
    const stubborn = await jobs.start('solve', {}, () => new Promise((resolve) => (release = () => resolve({}))));
    const polite = await jobs.start(
      'solve',
      {},
      (_id, { signal }) => new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true })),
    );
    for (let i = 0; i < 200 && (!jobs.isRunning(stubborn.id) || (await jobs.get(polite.id)).status !== 'running'); i += 1)
      await new Promise((resolve) => setTimeout(resolve, 5));

    expect(await jobs.shutdown({ graceMs: 200 })).toEqual([stubborn.id]);
    expect((await jobs.get(polite.id)).status).toBe('interrupted');
    expect(jobs.isRunning(stubborn.id)).toBe(true);

    release();
    await jobs.wait(stubborn.id);
    expect(jobs.isRunning(stubborn.id)).toBe(false);
    store.close();
  });
});
