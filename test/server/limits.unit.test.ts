/** server.limits: the per-key rate limit, the queued-job cap, the candidate and trajectory caps. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS } from '../../src/server/limits-config.js';
import { createRateLimiter } from '../../src/server/plugins/rate-limit.js';
import { JobManager } from '../../src/solve/job-manager.js';
import { createSqliteStore } from '../../src/store/sqlite-store.js';
import { gitRepo } from './git-repo.js';
import { startTestApp, type TestApp } from './test-app.js';

const task = { instance_id: 'demo__demo-1', problem_statement: 'x should be 2' };
const candidate = (id: string, extra: Record<string, unknown> = {}) => ({ id, patch: 'diff --git a/a.py b/a.py\n', ...extra });

describe('token bucket', () => {
  it('grants the burst, then one token per 60/rate seconds, and says how long to wait', () => {
    const limiter = createRateLimiter(60, 2);
    expect([limiter.take('k', 0), limiter.take('k', 0)]).toEqual([0, 0]);
    expect(limiter.take('k', 0)).toBe(1);
    expect(limiter.take('other', 0)).toBe(0);
    expect(limiter.take('k', 1000)).toBe(0);
    expect(limiter.take('k', 1000)).toBe(1);
  });
});

describe('server limits over HTTP', () => {
  let server: TestApp;
  let repoDir: string;
  beforeAll(async () => {
    repoDir = mkdtempSync(join(tmpdir(), 'wnw-limits-'));
    gitRepo(join(repoDir, 'repo'));
    server = await startTestApp({
      valueModel: 'bundled',
      apiKeys: ['key-one-123', 'key-two-456', 'key-three-789'],
      limits: { ...DEFAULT_LIMITS, rate_per_minute: 60, rate_burst: 3, max_candidates: 4, max_trajectory_bytes: 2048, max_queued_jobs: 0 },
      jobs: { maxRunning: 1, maxQueued: 0 },
    });
  });
  afterAll(async () => {
    await server?.close();
    rmSync(repoDir, { recursive: true, force: true });
  });

  it('answers 429 with Retry-After once a key has spent its burst; another key and the health checks still pass', async () => {
    const get = (key: string) => server.app.inject({ url: '/jobs', headers: { 'x-api-key': key } });
    const statuses = [];
    for (let i = 0; i < 4; i += 1) statuses.push((await get('key-one-123')).statusCode);
    expect(statuses).toEqual([200, 200, 200, 429]);
    const refused = await get('key-one-123');
    expect(refused.statusCode).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(refused.json().error).toMatchObject({ code: 'WNW_ERR_LIMIT_RATE', details: { setting: 'server.limits.rate_per_minute' } });
    expect((await get('key-two-456')).statusCode).toBe(200);
    expect((await server.app.inject('/healthz')).statusCode).toBe(200);
    expect((await server.app.inject({ url: '/metrics', headers: { 'x-api-key': 'key-one-123' } })).statusCode).toBe(200);
  });

  it('refuses more candidates than server.limits.max_candidates with a 413 naming body.candidates', async () => {
    const response = await server.app.inject({
      method: 'POST',
      url: '/score',
      headers: { 'x-api-key': 'key-two-456' },
      payload: { task, candidates: ['a', 'b', 'c', 'd', 'e'].map((id) => candidate(id)) },
    });
    expect(response.statusCode).toBe(413);
    expect(response.json().error).toMatchObject({
      code: 'WNW_ERR_INPUT_TOO_LARGE',
      details: { field: 'body.candidates', limit: 4, given: 5 },
    });
  });

  it('refuses a candidate larger than server.limits.max_trajectory_bytes with a 413 naming it', async () => {
    const response = await server.app.inject({
      method: 'POST',
      url: '/rerank',
      headers: { 'x-api-key': 'key-two-456' },
      payload: {
        task,
        candidates: [candidate('small'), candidate('big', { messages: [{ role: 'assistant', content: 'x'.repeat(4096) }] })],
      },
    });
    expect(response.statusCode).toBe(413);
    expect(response.json().error.details).toMatchObject({ field: 'body.candidates.1', limit: 2048 });
    expect(response.json().error.message).toContain('server.limits.max_trajectory_bytes');
  });

  it('answers 503 with Retry-After when the job queue is full, and stores no job for the refused request', async () => {
    let release!: () => void;
    const blocker = await server.jobs.start('solve', {}, () => new Promise<void>((resolve) => (release = resolve)));
    try {
      const before = (await server.store.listJobs()).length;
      const response = await server.app.inject({
        method: 'POST',
        url: '/solve',
        headers: { 'x-api-key': 'key-three-789' },
        payload: {
          issue: 'x should be 2',
          repo: { path: join(repoDir, 'repo') },
          n: 1,
          policy: {
            kind: 'replay',
            recordings: [{ id: 'r', instance_id: 'demo__demo-1', source: 'recorded', messages: [{ role: 'assistant', content: 'done' }] }],
          },
          verify: { enabled: false },
        },
      });
      expect(response.statusCode, response.body).toBe(503);
      expect(response.headers['retry-after']).toBe('10');
      expect(response.json().error).toMatchObject({ code: 'WNW_ERR_LIMIT_QUEUE', details: { setting: 'server.limits.max_queued_jobs' } });
      expect(await server.store.listJobs()).toHaveLength(before);
    } finally {
      release();
      await server.jobs.wait(blocker.id);
    }
  });
});

describe('rate limit without API keys', () => {
  it('counts by client address, so made-up keys do not buy fresh buckets', async () => {
    const open = await startTestApp({ limits: { ...DEFAULT_LIMITS, rate_per_minute: 60, rate_burst: 2 } });
    try {
      const statuses = [];
      for (let i = 0; i < 3; i += 1)
        statuses.push((await open.app.inject({ url: '/jobs', headers: { 'x-api-key': `made-up-${i}` } })).statusCode);
      expect(statuses).toEqual([200, 200, 429]);
    } finally {
      await open.close();
    }
  });
});

describe('job manager queue cap', () => {
  it('queues up to maxQueued jobs behind the running ones and refuses the next', async () => {
    const store = createSqliteStore(':memory:');
    const jobs = new JobManager(store, { maxRunning: 1, maxQueued: 1, queueRetryAfterS: 3 });
    const releases: Array<() => void> = [];
    const run = () => new Promise<void>((resolve) => releases.push(resolve));
    const first = await jobs.start('solve', {}, run);
    const second = await jobs.start('solve', {}, run);
    expect(jobs.queued).toBe(1);
    await expect(jobs.start('solve', {}, run)).rejects.toThrow(
      expect.objectContaining({ code: 'WNW_ERR_LIMIT_QUEUE', details: expect.objectContaining({ retry_after_s: 3, limit: 1 }) }),
    );
    const started = async () => {
      while (releases.length === 0) await new Promise((resolve) => setImmediate(resolve));
    };
    await started();
    releases.shift()!();
    await jobs.wait(first.id);
    await started();
    releases.shift()!();
    await jobs.wait(second.id);
    expect((await store.getJob(second.id))!.status).toBe('succeeded');
    store.close();
  });
});
