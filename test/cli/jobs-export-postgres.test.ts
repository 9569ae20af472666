/** `winnower jobs export --store postgres://…`: the shared store's candidates, its password never printed. */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createPostgresStore } from '../../src/store/postgres-store.js';
import { toolsModeRollout } from '../formats/atif/trajectories.js';
import { readJsonl, runCli } from '../support/cli.js';
import { describeWithPostgres, freshDatabase } from '../support/postgres.js';

describeWithPostgres('winnower jobs export on a Postgres store', () => {
  let database: { url: string; drop: () => Promise<void> };
  beforeAll(async () => {
    database = await freshDatabase();
    const store = await createPostgresStore(database.url);
    await store.createJob({
      id: 'job-a',
      kind: 'solve',
      request: { issue: 'median is wrong', repo: { path: '/tmp/stats' } },
      status: 'succeeded',
    });
    await store.putCandidate('job-a', 0, { status: 'finished', trajectory: { ...toolsModeRollout(), id: 'job-a/0' } });
    await store.close();
  }, 60_000);
  afterAll(async () => {
    await database?.drop();
  });

  it('writes the shared store’s candidates, and names the store without its password', async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'jobs-export-pg-')), 'candidates.jsonl');
    const run = await runCli(['jobs', 'export', '--store', database.url, '--out', out]);
    expect(run.code, run.stderr).toBe(0);
    expect(readJsonl<{ id: string }>(out).map((row) => row.id)).toEqual(['job-a/0']);
    expect(readFileSync(`${out}.tasks.jsonl`, 'utf8')).toContain('median is wrong');

    const password = decodeURIComponent(new URL(database.url).password);
    const empty = await runCli(['jobs', 'export', '--store', database.url, '--job', 'nope', '--out', out]);
    expect(empty.code).not.toBe(0);
    expect(empty.stderr).toContain('no job nope in the job store at postgres://');
    expect(empty.stderr).not.toContain(password);
    const both = await runCli(['jobs', 'export', '--store', database.url, '--data-dir', '/tmp', '--out', out]);
    expect([both.code === 0, both.stderr.includes('not both')]).toEqual([false, true]);
  });
});
