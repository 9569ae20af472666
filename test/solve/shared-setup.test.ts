/**
 * `setup` on /solve (docs/solve.md#shared-setup-and-forks): the commands run once, the rollouts and
 * the verifications start from forks of that sandbox (so the tests see what the rollouts saw), no
 * candidate's patch holds the setup's outputs, the snapshot is gone once the job ends (also after
 * a cancel), and a provider that cannot fork runs the setup in each sandbox and says so.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPolicyFactory } from '../../src/rollout/policy/policy-factory.js';
import type { SandboxProvider } from '../../src/sandbox/types.js';
import { buildApp } from '../../src/server/app.js';
import { JobManager } from '../../src/solve/job-manager.js';
import { createSqliteStore } from '../../src/store/sqlite-store.js';
import { createWorld, demoRecordings, demoTask, hasBubblewrap, solveBody, type TestWorld } from './helpers.js';

/** The setup: a marker the tests need, an untracked file and a build output, none of them the agent's. */
const SETUP = ['echo ready > SETUP_DONE', 'mkdir -p build && echo o > build/out.o && echo notes > setup-notes.txt'];

/** The demo's tests, run only where the setup's marker is: a verification outside the post-setup state fails. */
const testCommand = `test -f SETUP_DONE && ${demoTask().test_command}`;

/** A provider without `fork` (the local one with it taken away). */
function withoutFork(inner: SandboxProvider): SandboxProvider {
  return {
    name: 'nofork',
    describe: () => inner.describe(),
    create: (spec, options) => inner.create(spec, options),
    close: async () => {},
  };
}

async function snapshotsLeft(provider: SandboxProvider): Promise<string[]> {
  const forks = join(String((await provider.describe()).rootDir), 'forks');
  return existsSync(forks) ? readdirSync(forks) : [];
}

/** Polls until no snapshot folder is left (the job's end releases it; cancel answers before the runner's last step). */
async function expectNoSnapshot(provider: SandboxProvider): Promise<void> {
  const deadline = Date.now() + 15_000;
  while ((await snapshotsLeft(provider)).length > 0 && Date.now() < deadline) await new Promise((done) => setTimeout(done, 100));
  expect(await snapshotsLeft(provider)).toEqual([]);
}

describe.skipIf(!hasBubblewrap())('shared setup and forks', () => {
  let world: TestWorld;

  beforeAll(async () => {
    world = await createWorld();
  });

  afterAll(async () => {
    await world?.close();
  });

  async function appWith(sandboxes: SandboxProvider) {
    const store = createSqliteStore(':memory:');
    const jobs = new JobManager(store);
    const app = await buildApp({
      jobs,
      store,
      valueModel: world.valueModel,
      solveDeps: { sandboxes, store, createPolicy: createPolicyFactory() },
    });
    return { app, jobs, close: async () => (await app.close(), store.close()) };
  }

  const body = (extra: Record<string, unknown> = {}) => {
    const recordings = demoRecordings();
    const base = solveBody(world.repo, {
      n: 2,
      policy: { kind: 'replay', recordings: [recordings['plausible-wrong-fix']!, recordings['correct-fix']!] },
      setup: SETUP,
      ...extra,
    });
    return { ...base, verify: { ...(base.verify as Record<string, unknown>), test_command: testCommand } };
  };

  it('runs the setup once, forks every rollout and verification from it, keeps it out of the patches and releases it', {
    timeout: 240_000,
  }, async () => {
    const server = await appWith(world.sandboxes);
    try {
      const response = await server.app.inject({ method: 'POST', url: '/solve?wait=true', payload: body() });
      const job = response.json();
      expect(job.status, JSON.stringify(job.error)).toBe('succeeded');
      const types: string[] = [];
      await server.jobs.subscribe(
        job.job_id,
        (event) => types.push(event.type),
        () => undefined,
      );
      expect(types.filter((type: string) => type === 'setup-start')).toHaveLength(1);
      expect(types.indexOf('setup-finish')).toBeLessThan(types.indexOf('rollout-start'));
      // The tests ran in the post-setup state (they need SETUP_DONE): the correct fix is resolved.
      expect(job.candidates.map((candidate: { verify: { status: string } | null }) => candidate.verify?.status)).toEqual([
        'unresolved',
        'resolved',
      ]);
      for (const candidate of job.candidates as Array<{ patch: string }>) {
        expect(candidate.patch).toContain('durations.py');
        expect(candidate.patch).not.toMatch(/SETUP_DONE|setup-notes|build\/out/);
      }
      expect(job.result.setup).toMatchObject({ mode: 'fork', reason: 'the default with setup commands', commands: 2, runs: 1 });
      // Two rollouts and two verifications, each a fork.
      expect(job.result.setup.forks).toBe(4);
      expect(job.result.setup.saved_sandbox_ms).toBe(3 * job.result.setup.setup_ms);
      expect(job.result.compute).toMatchObject({ setup_runs: 1, setup_ms: job.result.setup.setup_ms });
      await expectNoSnapshot(world.sandboxes);
    } finally {
      await server.close();
    }
  });

  it('releases the snapshot when the job is cancelled while its forks run', { timeout: 240_000 }, async () => {
    const server = await appWith(world.sandboxes);
    try {
      const slow = {
        id: 'slow',
        instance_id: demoTask().instance_id,
        source: 'slow',
        messages: [
          {
            role: 'assistant',
            content: 'wait',
            tool_calls: [{ id: 'c0', type: 'function', function: { name: 'bash', arguments: JSON.stringify({ command: 'sleep 60' }) } }],
          },
        ],
      };
      const response = await server.app.inject({
        method: 'POST',
        url: '/solve',
        payload: body({ policy: { kind: 'replay', recordings: [slow, slow] } }),
      });
      expect(response.statusCode, response.body).toBe(202);
      const jobId = response.json().job_id as string;
      await new Promise<void>((resolve) => {
        const subscription = server.jobs.subscribe(
          jobId,
          (event) => {
            if (event.type === 'rollout-start') {
              queueMicrotask(() => void subscription.then((stop) => stop()));
              resolve();
            }
          },
          () => resolve(),
        );
      });
      expect(await snapshotsLeft(world.sandboxes)).toHaveLength(1);
      const stopped = await server.jobs.cancel(jobId, 'cancelled');
      expect(stopped.status).toBe('cancelled');
      await expectNoSnapshot(world.sandboxes);
    } finally {
      await server.close();
    }
  });

  it('where the provider cannot fork, runs the setup in each sandbox, says so, and still keeps it out of the patches', {
    timeout: 240_000,
  }, async () => {
    const server = await appWith(withoutFork(world.sandboxes));
    try {
      const job = (await server.app.inject({ method: 'POST', url: '/solve?wait=true', payload: body() })).json();
      expect(job.status, JSON.stringify(job.error)).toBe('succeeded');
      expect(job.result.setup.mode).toBe('each');
      expect(job.result.setup.reason).toContain('the nofork provider cannot fork');
      expect(job.result.setup).toMatchObject({ runs: 4, forks: 0, saved_sandbox_ms: 0, saved_wall_ms: 0 });
      expect(job.candidates[1].verify.status).toBe('resolved');
      expect(job.result.chosen.patch).not.toMatch(/SETUP_DONE|setup-notes/);
      // An explicit fork it cannot make is refused at submit, naming the field.
      const refused = await server.app.inject({ method: 'POST', url: '/solve', payload: body({ fork: { at: 'setup' } }) });
      expect(refused.statusCode).toBe(400);
      expect(refused.json().error.details.field).toBe('body.fork.at');
    } finally {
      await server.close();
    }
  });

  it('fork: false runs the setup in each sandbox; a failing setup command fails the job, naming it', { timeout: 240_000 }, async () => {
    const server = await appWith(world.sandboxes);
    try {
      const each = (await server.app.inject({ method: 'POST', url: '/solve?wait=true', payload: body({ fork: false, n: 1 }) })).json();
      expect(each.status, JSON.stringify(each.error)).toBe('succeeded');
      expect(each.result.setup).toMatchObject({ mode: 'each', reason: 'fork: false: each sandbox runs the setup', runs: 2 });
      const failed = (
        await server.app.inject({ method: 'POST', url: '/solve?wait=true', payload: body({ setup: ['true', 'echo broken >&2; exit 3'] }) })
      ).json();
      expect(failed.status).toBe('failed');
      expect(failed.error.code).toBe('WNW_ERR_SETUP_FAILED');
      expect(failed.error.message).toMatch(/^setup\.1 exited 3: broken/);
      await expectNoSnapshot(world.sandboxes);
    } finally {
      await server.close();
    }
  });
});
