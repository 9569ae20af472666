/**
 * A sandbox whose close() fails (a remote provider's DELETE that errors) after the work in it is
 * done: the candidate, its verdict and the job are kept, and the failure is noted on the
 * candidate, not turned into a failed job with the other rollouts left running.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPolicyFactory } from '../../src/rollout/policy/policy-factory.js';
import { wnwError } from '../../src/errors.js';
import type { Sandbox, SandboxProvider } from '../../src/sandbox/types.js';
import { buildApp } from '../../src/server/app.js';
import { JobManager } from '../../src/solve/job-manager.js';
import { createSqliteStore } from '../../src/store/sqlite-store.js';
import { createWorld, demoRecordings, hasBubblewrap, solveBody, type TestWorld } from './helpers.js';

/** The world's provider, except that closing a sandbox whose label matches closes it and then throws. */
function failingClose(inner: SandboxProvider, failOn: (label: string) => boolean): SandboxProvider {
  return {
    name: inner.name,
    describe: () => inner.describe(),
    close: () => inner.close(),
    async create(spec, options) {
      const sandbox = await inner.create(spec, options);
      if (!failOn(spec.label ?? '')) return sandbox;
      const wrapped: Sandbox = Object.create(sandbox) as Sandbox;
      return Object.assign(wrapped, {
        exec: sandbox.exec.bind(sandbox),
        writeFile: sandbox.writeFile.bind(sandbox),
        readFile: sandbox.readFile.bind(sandbox),
        listFiles: sandbox.listFiles.bind(sandbox),
        diff: sandbox.diff.bind(sandbox),
        applyPatch: sandbox.applyPatch.bind(sandbox),
        async close() {
          await sandbox.close();
          throw wnwError('WNW_ERR_SBX_UPSTREAM', 'sandbox service failed to delete the sandbox');
        },
      });
    },
  };
}

describe.skipIf(!hasBubblewrap())('a sandbox that fails to close', () => {
  let world: TestWorld;

  beforeAll(async () => {
    world = await createWorld();
  });

  afterAll(async () => {
    await world?.close();
  });

  it('keeps the candidate, its verdict and the job', async () => {
    const store = createSqliteStore(':memory:');
    const jobs = new JobManager(store);
    // Every sandbox of this job fails to close: the rollouts' (labelled with the job id) and the verifications'.
    const sandboxes = failingClose(world.sandboxes, () => true);
    const app = await buildApp({
      jobs,
      store,
      valueModel: world.valueModel,
      solveDeps: { sandboxes, store, createPolicy: createPolicyFactory() },
    });
    try {
      const recordings = demoRecordings();
      const response = await app.inject({
        method: 'POST',
        url: '/solve?wait=true',
        payload: solveBody(world.repo, {
          n: 2,
          policy: { kind: 'replay', recordings: [recordings['plausible-wrong-fix']!, recordings['correct-fix']!] },
        }),
      });
      const job = response.json();
      expect(job.status).toBe('succeeded');
      expect(job.candidates.map((candidate: { status: string }) => candidate.status)).toEqual(['finished', 'finished']);
      expect(job.candidates.map((candidate: { verify: { status: string } | null }) => candidate.verify?.status)).toEqual([
        'unresolved',
        'resolved',
      ]);
      expect(job.result.chosen.index).toBe(1);
      for (const candidate of job.candidates) expect(candidate.error.message).toContain('sandbox close failed');
    } finally {
      await app.close();
      store.close();
    }
  }, 60_000);
});
