import pg from 'pg';
import { afterAll, expect, it } from 'vitest';
import { MIGRATIONS, migrate } from '../../src/store/postgres-migrations.js';
import { createPostgresQueue } from '../../src/store/postgres-queue.js';
import { createPostgresStore } from '../../src/store/postgres-store.js';
import { describeWithPostgres, freshDatabase } from '../support/postgres.js';
import { jobStoreContract } from './job-store-contract.js';

describeWithPostgres('postgres job store', () => {
  const drops: Array<() => Promise<void>> = [];
  afterAll(async () => {
    for (const drop of drops) await drop();
  });
  let url = '';
  const database = async () => {
    const fresh = await freshDatabase();
    drops.push(fresh.drop);
    return fresh.url;
  };

  jobStoreContract({
    open: async () => createPostgresStore((url = await database())),
    reopen: async () => createPostgresStore(url),
  });

  it('applies its migrations once when three replicas start at once, and records them', async () => {
    const shared = await database();
    const stores = await Promise.all([1, 2, 3].map(() => createPostgresStore(shared)));
    const { rows } = await stores[0]!.pool.query<{ version: number }>('SELECT version FROM winnower_migrations ORDER BY version');
    expect(rows.map((row) => row.version)).toEqual(MIGRATIONS.map((migration) => migration.version));
    // A later start finds nothing to apply.
    const client = await stores[0]!.pool.connect();
    expect(await migrate(client)).toEqual([]);
    client.release();
    for (const store of stores) await store.close();
  });

  it('applies only the migrations a database lacks (an older schema gains the new ones)', async () => {
    const older = await database();
    const pool = new pg.Pool({ connectionString: older });
    const client = await pool.connect();
    expect(await migrate(client, MIGRATIONS.slice(0, 1))).toEqual([1]);
    await client.query(
      "INSERT INTO jobs (id, kind, status, request, created_at, updated_at) VALUES ('old', 'solve', 'succeeded', '{}', 'x', 'x')",
    );
    expect(await migrate(client)).toEqual(MIGRATIONS.slice(1).map((migration) => migration.version));
    client.release();
    await pool.end();
    const store = await createPostgresStore(older);
    expect((await store.getJob('old'))?.status).toBe('succeeded');
    await store.close();
  });

  it('leaves unfinished jobs to the shared queue at start-up instead of interrupting another replica’s', async () => {
    const store = await createPostgresStore(await database());
    await store.createJob({ id: 'busy', kind: 'solve', request: {}, status: 'running' });
    expect(await store.markInterrupted()).toEqual([]);
    expect((await store.getJob('busy'))?.status).toBe('running');
    await store.close();
  });

  it('stores a job’s end with its job-finish in one write, only while the replica holds it, and tells the others', async () => {
    const shared = await database();
    const store = await createPostgresStore(shared);
    const holder = createPostgresQueue(store, shared, 'holder');
    const other = createPostgresQueue(store, shared, 'other');
    const notices: string[] = [];
    const stop = await other.listen((notice) => notice.kind === 'event' && notices.push(`${notice.jobId} ${notice.seq}`));
    await store.createJob({ id: 'ran', kind: 'solve', request: {}, status: 'queued' });
    expect((await holder.claim(60_000))?.job.id).toBe('ran');
    await store.appendEvent('ran', { type: 'job-start', seq: 0, time: 't0' });
    const last = { type: 'job-finish', status: 'succeeded', seq: 1, time: 't1' };
    // Not the holder: neither the status nor the event is written.
    expect(await other.finish('ran', { status: 'failed' }, last)).toBe(false);
    expect((await store.getJob('ran'))?.status).toBe('running');
    expect((await store.listEvents('ran')).map((event) => event.type)).toEqual(['job-start']);
    expect(await holder.finish('ran', { status: 'succeeded', result: { ok: 1 } }, last)).toBe(true);
    expect((await store.getJob('ran'))?.status).toBe('succeeded');
    expect(await store.listEvents('ran')).toEqual([{ type: 'job-start', seq: 0, time: 't0' }, last]);
    // Ended: a second finish writes nothing, and no second job-finish.
    expect(await holder.finish('ran', { status: 'failed' }, { ...last, seq: 2 })).toBe(false);
    expect(await store.listEvents('ran')).toHaveLength(2);

    // A queued job that was handed back with events: the cancel's job-finish follows them.
    await store.createJob({ id: 'back', kind: 'solve', request: {}, status: 'queued' });
    await store.appendEvent('back', { type: 'job-start', seq: 0, time: 't0' });
    await store.appendEvent('back', { type: 'job-requeued', seq: 1, time: 't1' });
    expect((await other.cancelQueued('back', { code: 'WNW_ERR_OP_ABORTED', message: 'job cancelled' }))?.status).toBe('cancelled');
    expect((await store.listEvents('back')).at(-1)).toMatchObject({
      type: 'job-finish',
      status: 'cancelled',
      error: 'job cancelled',
      seq: 2,
    });
    expect(await other.cancelQueued('back', { code: 'WNW_ERR_OP_ABORTED', message: 'job cancelled' })).toBeUndefined();
    expect(await store.listEvents('back')).toHaveLength(3);
    // Each stored event is announced (appendEvent's too), the refused writes' not.
    await expect.poll(() => [...notices].sort()).toEqual(['back 0', 'back 1', 'back 2', 'ran 0', 'ran 1']);
    await stop();
    await store.close();
  });

  it('names an unreachable or refused database without its password', async () => {
    const good = new URL(await database());
    const wrong = new URL(good);
    wrong.password = 'not-the-password-xyzzy';
    const refused = await createPostgresStore(wrong.toString()).catch((error: unknown) => error);
    expect(refused).toMatchObject({ code: 'WNW_ERR_STORE_UNAVAILABLE' });
    expect(String((refused as Error).message)).not.toContain('xyzzy');
    expect(JSON.stringify(refused)).not.toContain('xyzzy');
    expect((refused as Error).message).toContain(`${good.username}:***@${good.host}`);

    const store = await createPostgresStore(good.toString());
    expect(store.where).not.toContain(decodeURIComponent(good.password));
    await store.close();
    await expect(store.ping()).rejects.toMatchObject({ code: 'WNW_ERR_STORE_UNAVAILABLE' });
  });
});
