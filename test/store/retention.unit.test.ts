/** Job retention in the store: purge by age and by count touches finished jobs only. */
import { describe, expect, it } from 'vitest';
import { purgeExpired } from '../../src/store/retention.js';
import { createSqliteStore } from '../../src/store/sqlite-store.js';

describe('purgeExpired', () => {
  it('removes finished jobs past max_age_days or beyond max_jobs, never queued or running ones', async () => {
    const store = createSqliteStore(':memory:');
    const make = async (id: string, status: 'succeeded' | 'failed' | 'running' | 'queued') => {
      await store.createJob({ id, kind: 'solve', request: {} });
      await store.updateJob(id, { status });
    };
    make('old-done', 'succeeded');
    make('old-running', 'running');
    await new Promise((resolve) => setTimeout(resolve, 5));
    const cutoff = Date.now();
    await new Promise((resolve) => setTimeout(resolve, 5));
    make('new-1', 'failed');
    make('new-2', 'succeeded');
    make('new-queued', 'queued');
    const day = 86_400_000;
    // Everything finished before `cutoff` is older than the age limit when "now" is a day later.
    expect(await purgeExpired(store, { max_age_days: 1, max_jobs: 0 }, cutoff + day)).toEqual(['old-done']);
    expect(await store.getJob('old-running')).toBeDefined();
    // Count: of the two finished jobs left, only the newest is kept.
    // (newest by created_at, then id: new-2 was created after new-1, or in the same millisecond with the greater id)
    expect(await purgeExpired(store, { max_age_days: 0, max_jobs: 1 })).toEqual(['new-1']);
    expect((await store.listJobs()).map((job) => job.id).sort()).toEqual(['new-2', 'new-queued', 'old-running']);
    expect(await purgeExpired(store, { max_age_days: 0, max_jobs: 0 })).toEqual([]);
    expect(await store.countJobsByStatus()).toMatchObject({ queued: 1, running: 1 });
    store.close();
  });
});
