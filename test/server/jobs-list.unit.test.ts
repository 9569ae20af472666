/** Job retention over HTTP: GET /jobs (filters, keyset paging) and DELETE /jobs/:id?purge=true. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './test-app.js';

describe('GET /jobs and purge', () => {
  let server: TestApp;
  const ids: string[] = [];
  beforeAll(async () => {
    server = await startTestApp();
    for (let index = 0; index < 5; index += 1) {
      const job = await server.jobs.start(index % 2 === 0 ? 'solve' : 'rerank', {}, async () => {
        if (index === 3) throw new Error('boom');
        return { index };
      });
      await server.jobs.wait(job.id);
      ids.push(job.id);
    }
  });
  afterAll(async () => server?.close());

  it('pages through every job once, newest first, with next_cursor', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const response: { statusCode: number; json(): any } = await server.app.inject({
        url: `/jobs?limit=2${cursor ? `&cursor=${cursor}` : ''}`,
      });
      expect(response.statusCode).toBe(200);
      const body: { jobs: Array<{ job_id: string }>; next_cursor: string | null } = response.json();
      expect(body.jobs.length).toBeLessThanOrEqual(2);
      seen.push(...body.jobs.map((job: { job_id: string }) => job.job_id));
      cursor = body.next_cursor;
      pages += 1;
    } while (cursor);
    expect(pages).toBe(3);
    expect(new Set(seen)).toEqual(new Set(ids));
    expect(seen).toHaveLength(5);
    const created = await Promise.all(seen.map(async (id) => (await server.store.getJob(id))!.created_at));
    expect([...created].sort().reverse()).toEqual(created);
  });

  it('filters by status and kind, and shows no candidates or result in the list', async () => {
    const failed = (await server.app.inject({ url: '/jobs?status=failed' })).json();
    expect(failed.jobs.map((job: { job_id: string }) => job.job_id)).toEqual([ids[3]]);
    expect(failed.jobs[0]).toMatchObject({ kind: 'rerank', status: 'failed', error: { message: 'boom' } });
    expect(failed.jobs[0]).not.toHaveProperty('candidates');
    const solves = (await server.app.inject({ url: '/jobs?kind=solve' })).json();
    expect(solves.jobs).toHaveLength(3);
  });

  it.each([
    ['status=done', 'querystring.status'],
    ['limit=0', 'querystring.limit'],
    ['limit=501', 'querystring.limit'],
    ['cursor=not-a-cursor', 'querystring.cursor'],
    ['created_after=yesterday', 'querystring.created_after'],
    ['colour=red', 'querystring.colour'],
  ])('refuses ?%s naming %s', async (query, field) => {
    const response = await server.app.inject({ url: `/jobs?${query}` });
    expect(response.statusCode).toBe(400);
    expect(response.json().error.details.field).toBe(field);
  });

  it('purges a finished job with its candidates and events; a cancel on it stays a 409', async () => {
    const id = ids[0]!;
    await server.store.putCandidate(id, 0, { status: 'finished' });
    expect((await server.app.inject({ method: 'DELETE', url: `/jobs/${id}` })).statusCode).toBe(409);
    const purged = await server.app.inject({ method: 'DELETE', url: `/jobs/${id}?purge=true` });
    expect(purged.statusCode).toBe(204);
    expect(await server.store.getJob(id)).toBeUndefined();
    expect(await server.store.listCandidates(id)).toEqual([]);
    expect(await server.store.listEvents(id)).toEqual([]);
    expect((await server.app.inject({ url: `/jobs/${id}` })).statusCode).toBe(404);
    expect((await server.app.inject({ method: 'DELETE', url: `/jobs/${id}?purge=true` })).statusCode).toBe(404);
  });

  it('refuses to purge a running job, and keeps it', async () => {
    let release!: () => void;
    const job = await server.jobs.start('solve', {}, () => new Promise<void>((resolve) => (release = resolve)));
    try {
      const response = await server.app.inject({ method: 'DELETE', url: `/jobs/${job.id}?purge=true` });
      expect(response.statusCode).toBe(409);
      expect(response.json().error.message).toContain('cancel it first');
      expect(await server.store.getJob(job.id)).toBeDefined();
    } finally {
      while (!release) await new Promise((resolve) => setImmediate(resolve));
      release();
      await server.jobs.wait(job.id);
    }
  });
});
