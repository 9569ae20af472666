/**
 * The server on a shared Postgres store: /readyz names the store without its password and says
 * when it stops answering; a /solve whose secrets the stored request cannot carry is refused,
 * naming the field, because another replica would run it from the store.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createPostgresQueue } from '../../src/store/postgres-queue.js';
import { createPostgresStore, type PostgresStore } from '../../src/store/postgres-store.js';
import { describeWithPostgres, freshDatabase } from '../support/postgres.js';
import { createWorld, solveBody, type TestWorld } from '../solve/helpers.js';
import { startTestApp, type TestApp } from './test-app.js';

describeWithPostgres('the server on a shared Postgres store', () => {
  let database: { url: string; drop: () => Promise<void> };
  let store: PostgresStore;
  let server: TestApp;
  let world: TestWorld;
  let password: string;

  beforeAll(async () => {
    world = await createWorld();
    database = await freshDatabase();
    password = decodeURIComponent(new URL(database.url).password);
    store = await createPostgresStore(database.url);
    server = await startTestApp({
      store,
      storeCheck: { where: store.where, ping: () => store.ping() },
      jobs: { shared: { queue: createPostgresQueue(store, database.url, 'replica-under-test'), leaseMs: 5000 } },
    });
  }, 60_000);
  afterAll(async () => {
    await server?.close().catch(() => undefined);
    await world?.close();
    await database?.drop();
  });

  it('refuses a per-request secret, naming it: the stored request would run without it elsewhere', async () => {
    const body = solveBody(world.repo, {
      policy: { kind: 'openai', url: 'http://127.0.0.1:9/v1', model: 'm', api_key: 'sk-per-request' },
      verify: { enabled: false },
    });
    const answer = await server.app.inject({ method: 'POST', url: '/solve', payload: body });
    expect(answer.statusCode, answer.body).toBe(400);
    expect(answer.json()).toMatchObject({ error: { code: 'WNW_ERR_INPUT_INVALID', details: { field: 'body.policy.api_key' } } });
    expect(await store.listJobs()).toEqual([]);
  });

  it('says in /readyz which store it uses, without its password, and when it stops answering', async () => {
    const ready = await server.app.inject('/readyz');
    expect(ready.json()).toMatchObject({
      status: 'ready',
      store: { where: store.where, ok: true, error: null },
      replica: 'replica-under-test',
    });
    expect(ready.body).not.toContain(password);
    await store.close();
    const gone = await server.app.inject('/readyz');
    expect(gone.statusCode).toBe(503);
    expect(gone.json()).toMatchObject({ status: 'store-unavailable', store: { ok: false } });
    expect(gone.body).not.toContain(password);
  });
});
