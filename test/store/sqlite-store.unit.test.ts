import { chmodSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import { createSqliteStore } from '../../src/store/sqlite-store.js';
import { jobStoreContract } from './job-store-contract.js';

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
  let dir = '';
  jobStoreContract({
    open: async () => createSqliteStore((dir = dataDir())),
    reopen: async () => createSqliteStore(dir),
  });

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

  it('gives a database made before candidates had reused_from the column, its rows not reused', async () => {
    const dir = dataDir();
    // The candidates table as released before the column was added.
    const old = new Database(join(dir, 'winnower.db'));
    old.exec(`CREATE TABLE jobs (id TEXT PRIMARY KEY, kind TEXT NOT NULL, status TEXT NOT NULL, request TEXT NOT NULL,
        progress TEXT NOT NULL DEFAULT '{}', result TEXT, error TEXT, created_at TEXT NOT NULL, updated_at TEXT NOT NULL);
      CREATE TABLE candidates (job_id TEXT NOT NULL REFERENCES jobs(id) ON DELETE CASCADE, idx INTEGER NOT NULL, status TEXT NOT NULL,
        trajectory TEXT, score TEXT, verify TEXT, error TEXT, updated_at TEXT NOT NULL, PRIMARY KEY (job_id, idx));
      INSERT INTO jobs VALUES ('j', 'solve', 'succeeded', '{}', '{}', NULL, NULL, '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z');
      INSERT INTO candidates VALUES ('j', 0, 'finished', NULL, NULL, NULL, NULL, '2026-01-01T00:00:00.000Z');`);
    old.close();
    const store = createSqliteStore(dir);
    await store.putCandidate('j', 1, { status: 'finished', reused_from: { job_id: 'i', index: 1 } });
    expect((await store.listCandidates('j')).map((c) => c.reused_from)).toEqual([null, { job_id: 'i', index: 1 }]);
    await store.close();
    // Opened again: the column is there, nothing is added twice.
    await createSqliteStore(dir).close();
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
});
