/**
 * `winnower serve` stopped by SIGTERM while a job clones from a remote that never answers (a
 * tarpit on loopback): the process exits 0 with the job recorded as interrupted, and no git
 * process of the clone is left behind.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSqliteStore } from '../../src/store/sqlite-store.js';
import { cloneHanging, gitProcessesFor, startTarpit, type Tarpit } from '../fakes/tarpit-server.js';
import { eventually } from '../sandbox/local-helpers.js';
import { startServeProcess } from '../support/cli.js';
import { createWorld, demoRecordings, hasBubblewrap, solveBody, type TestWorld } from '../solve/helpers.js';

describe.skipIf(!hasBubblewrap())('winnower serve during a hanging clone', () => {
  let world: TestWorld;
  let dataDir: string;
  let tarpit: Tarpit;

  beforeAll(async () => {
    world = await createWorld();
    dataDir = mkdtempSync(join(tmpdir(), 'wnw-serve-clone-'));
    tarpit = await startTarpit();
  });

  afterAll(async () => {
    await tarpit?.close();
    await world?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('on SIGTERM kills the clone, records the job as interrupted and exits 0', async () => {
    const serve = startServeProcess(dataDir);
    const { child, exited } = serve;
    try {
      const base = await serve.base;
      const body = solveBody(world.repo, {
        repo: { url: tarpit.url },
        n: 1,
        policy: { kind: 'replay', recordings: [demoRecordings()['correct-fix']] },
        verify: { enabled: false },
      });
      const posted = await request(`${base}/solve`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      const { job_id: jobId } = (await posted.body.json()) as { job_id: string };
      await cloneHanging(tarpit);

      child.kill('SIGTERM');
      const { code } = await exited;
      expect(code, serve.output()).toBe(0);
      expect(
        await eventually(
          () => gitProcessesFor(tarpit),
          (lines) => lines.length === 0,
        ),
      ).toEqual([]);
      const store = createSqliteStore(dataDir);
      try {
        expect((await store.getJob(jobId))?.status).toBe('interrupted');
      } finally {
        store.close();
      }
    } finally {
      child.kill('SIGKILL');
    }
  }, 90_000);
});
