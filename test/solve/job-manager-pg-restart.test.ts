/**
 * A Postgres restart in the middle of a run: two job managers (replicas) on a Postgres server of
 * this file's own (.ci/postgres.sh, not the shared test server other files use), jobs running when
 * the server goes down for longer than a lease and comes back on the same data folder and port.
 * Every job must end once, succeeded, with each candidate stored once; the store's health (what
 * /readyz reports) says unavailable while it is down and recovers after.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { JobManager, type JobRunnerFactory } from '../../src/solve/job-manager.js';
import { createPostgresQueue } from '../../src/store/postgres-queue.js';
import { createPostgresStore, type PostgresStore, storeError } from '../../src/store/postgres-store.js';
import type { JobStore } from '../../src/store/types.js';

const run = promisify(execFile);
const SCRIPT = join(import.meta.dirname, '../../.ci/postgres.sh');
const POSTGRES = `${process.env.WINNOWER_POSTGRES_BIN ?? '/usr/lib/postgresql/15/bin'}/postgres`;
const LEASE_MS = 1500;

/** Why this machine cannot start its own server, or undefined when it can. */
function cannotRun(): string | undefined {
  if (!existsSync(POSTGRES)) return `${POSTGRES} is absent (Debian's postgresql-15)`;
  // As root the script runs Postgres as the `postgres` user (Postgres refuses root).
  if (process.getuid?.() === 0 && !existsSync('/usr/sbin/runuser')) return 'running as root without runuser to run Postgres as postgres';
  return undefined;
}

const reason = cannotRun();
const suite = reason ? describe.skip : describe;

suite(`job manager across a Postgres restart${reason ? ` (skipped: ${reason})` : ''}`, () => {
  let dir = '';
  let url = '';
  const pg = (command: 'halt' | 'resume') => run('bash', [SCRIPT, command, dir], { timeout: 60_000 });
  const cleanups: Array<() => Promise<unknown>> = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'wnw-pg-restart-'));
    url = (await run('bash', [SCRIPT, 'start', dir], { timeout: 60_000 })).stdout.trim();
  }, 70_000);
  // Each test's replicas stop with it: the next test's jobs are for its own replicas to claim.
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
  });
  afterAll(async () => {
    if (dir) await run('bash', [SCRIPT, 'stop', dir], { timeout: 60_000 });
  }, 70_000);

  /** Each job's candidates as stored by the runner, in order: `${replica}:${index}`. */
  const stored: Record<string, string[]> = {};
  const runner =
    (replica: string): JobRunnerFactory =>
    (job, { store, resume }) =>
    async (id, { signal, emit }) => {
      const { n, step_ms } = job.request as { n: number; step_ms: number };
      for (let index = 0; index < n; index++) {
        if (resume?.some((candidate) => candidate.index === index && candidate.status === 'finished')) continue;
        emit({ type: 'rollout-start', index, wave: 0 });
        await sleep(step_ms, undefined, { signal });
        await store.putCandidate(id, index, { status: 'finished' });
        // Counted once stored: a write the outage refused is not a candidate.
        (stored[id] ??= []).push(`${replica}:${index}`);
        emit({ type: 'rollout-finish', index, status: 'finished', exit: 'submitted', steps: 1, patch_bytes: 0 });
      }
      return { ran_on: replica };
    };

  async function replica(name: string, wrap: (store: PostgresStore) => JobStore = (store) => store) {
    const store: PostgresStore = await createPostgresStore(url);
    const queue = createPostgresQueue(store, url, name);
    const jobs = new JobManager(wrap(store), {
      maxRunning: 2,
      shared: { queue, leaseMs: LEASE_MS, onQueueError: () => undefined },
      onStoreError: () => undefined,
    });
    await jobs.serveQueue(runner(name));
    cleanups.push(
      () => store.close(),
      () => jobs.shutdown({ graceMs: 2000 }),
    );
    return { jobs, store };
  }

  const health = (store: PostgresStore) =>
    store.ping().then(
      () => 'ok',
      () => 'unavailable',
    );

  it('finishes every job exactly once, no candidate lost or doubled, when Postgres restarts mid-run', async () => {
    const a = await replica('a');
    const b = await replica('b');
    const N = 4;
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) ids.push((await (i % 2 ? b : a).jobs.start('solve', { n: N, step_ms: 250 }, async () => null)).id);
    // Down while every job has stored some candidates and has more to go.
    await expect.poll(() => ids.every((id) => (stored[id]?.length ?? 0) >= 1), { timeout: 15_000 }).toBe(true);
    expect(ids.some((id) => (stored[id]?.length ?? 0) < N)).toBe(true);
    await pg('halt');
    expect(await health(a.store)).toBe('unavailable');
    expect(await health(b.store)).toBe('unavailable');
    // Longer than a lease: the replicas must stop their jobs and take them back over afterwards.
    await sleep(2 * LEASE_MS);
    expect(await health(a.store)).toBe('unavailable');
    await pg('resume');
    await expect.poll(() => health(a.store), { timeout: 15_000 }).toBe('ok');
    await expect.poll(() => health(b.store), { timeout: 15_000 }).toBe('ok');

    const ended = await Promise.all(ids.map((id) => a.jobs.wait(id)));
    // The outage outlasted the leases: the jobs went on by takeover, from what was stored.
    const logs = await Promise.all(ids.map((id) => b.store.listEvents(id)));
    expect(logs.some((log) => log.some((event) => event.type === 'taken-over'))).toBe(true);
    expect(ended.map((job) => job.status)).toEqual(ids.map(() => 'succeeded'));
    for (const id of ids) {
      const indices = stored[id]!.map((step) => Number(step.split(':')[1]));
      expect(indices.sort()).toEqual([0, 1, 2, 3]);
      const candidates = await b.store.listCandidates(id);
      expect(candidates.map((candidate) => [candidate.index, candidate.status])).toEqual([
        [0, 'finished'],
        [1, 'finished'],
        [2, 'finished'],
        [3, 'finished'],
      ]);
      const log = await b.store.listEvents(id);
      expect(log.map((event) => event.seq)).toEqual(log.map((_, i) => i));
      expect(log.filter((event) => event.type === 'job-finish')).toHaveLength(1);
      expect(
        log
          .filter((event) => event.type === 'rollout-finish')
          .map((event) => (event as unknown as { index: number }).index)
          .sort(),
      ).toEqual([0, 1, 2, 3]);
    }
    // Both replicas claim again after the outage: a new job runs.
    const after = await b.jobs.start('solve', { n: 1, step_ms: 10 }, async () => null);
    expect((await a.jobs.wait(after.id)).status).toBe('succeeded');
  }, 60_000);

  it("waits for a job's job-finish to be stored, not only its status, when another replica ran it", async () => {
    // The status is written a moment before the job-finish event: here that moment is 600 ms.
    const slow = await replica('slow-finish', (store) => ({
      ...store,
      appendEvent: async (jobId, event) => {
        if (event.type === 'job-finish') await sleep(600);
        return store.appendEvent(jobId, event);
      },
    }));
    const job = await slow.jobs.start('solve', { n: 1, step_ms: 10 }, async () => null);
    const watcher = await replica('watcher');
    const ended = await watcher.jobs.wait(job.id);
    expect(ended.status).toBe('succeeded');
    const log = await watcher.store.listEvents(job.id);
    expect(log.at(-1)?.type).toBe('job-finish');
  }, 30_000);

  it('hands a job back, not failed, when one of its writes finds the store unreachable', async () => {
    // One refused write while the database is up again (a connection the restart dropped): the
    // job's end would be recorded `failed` were the refusal taken as the job's own failure.
    let refuse = true;
    const flaky = await replica('flaky', (store) => ({
      ...store,
      putCandidate: (jobId, index, update) => {
        if (index !== 1 || !refuse) return store.putCandidate(jobId, index, update);
        refuse = false;
        return Promise.reject(storeError(new Error('Connection terminated unexpectedly'), store.where));
      },
    }));
    const job = await flaky.jobs.start('solve', { n: 3, step_ms: 20 }, async () => null);
    const ended = await flaky.jobs.wait(job.id);
    expect([ended.status, refuse]).toEqual(['succeeded', false]);
    expect(stored[job.id]!.map((step) => Number(step.split(':')[1])).sort()).toEqual([0, 1, 2]);
    const log = await flaky.store.listEvents(job.id);
    expect(log.map((event) => event.seq)).toEqual(log.map((_, i) => i));
    expect(
      log.map((event) => event.type).filter((type) => type === 'job-requeued' || type === 'taken-over' || type === 'job-finish'),
    ).toEqual(['job-requeued', 'taken-over', 'job-finish']);
    expect(log.find((event) => event.type === 'taken-over')).toMatchObject({ kept: [0] });
  }, 30_000);
});
