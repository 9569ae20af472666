/**
 * `winnower serve` as an operator runs it: the real CLI in a child process, stopped by a signal
 * while a job runs. The graceful shutdown must finish (job recorded, exit 0) before the process
 * exits; the sandbox registry's own signal handler must not cut it short.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSqliteStore } from '../../src/store/sqlite-store.js';
import { startServeProcess } from '../support/cli.js';
import { createWorld, demoRecordings, hasBubblewrap, solveBody, type TestWorld } from '../solve/helpers.js';

describe.skipIf(!hasBubblewrap())('winnower serve', () => {
  let world: TestWorld;
  let dataDir: string;

  beforeAll(async () => {
    world = await createWorld();
    dataDir = mkdtempSync(join(tmpdir(), 'wnw-serve-'));
  });

  afterAll(async () => {
    await world?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('on SIGINT stops the running job, records it as interrupted and exits 0', async () => {
    const serve = startServeProcess(dataDir);
    const { child, exited } = serve;
    try {
      const base = await serve.base;
      const correct = demoRecordings()['correct-fix']!;
      const stuck = {
        ...correct,
        messages: [
          {
            role: 'assistant' as const,
            content: 'Wait.',
            tool_calls: [{ id: 'c', type: 'function' as const, function: { name: 'bash', arguments: '{"command":"sleep 60"}' } }],
          },
        ],
      };
      const posted = await request(`${base}/solve`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(solveBody(world.repo, { n: 2, policy: { kind: 'replay', recordings: [stuck] }, verify: { enabled: false } })),
      });
      const { job_id: jobId } = (await posted.body.json()) as { job_id: string };
      for (let i = 0; i < 200; i += 1) {
        const job = (await (await request(`${base}/jobs/${jobId}`)).body.json()) as { progress: { rollouts_running?: number } };
        if (job.progress.rollouts_running === 2) break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      await new Promise((resolve) => setTimeout(resolve, 300));

      child.kill('SIGINT');
      const { code } = await exited;
      expect(code, serve.output()).toBe(0);
      const store = createSqliteStore(dataDir);
      try {
        const job = (await store.getJob(jobId))!;
        expect(job.status).toBe('interrupted');
        expect(job.error?.code).toBe('WNW_ERR_JOB_STATE');
        expect((await store.listCandidates(jobId)).map((candidate) => candidate.status)).toEqual(['cancelled', 'cancelled']);
      } finally {
        store.close();
      }
    } finally {
      child.kill('SIGKILL');
    }
  }, 60_000);
});
