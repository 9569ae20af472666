/**
 * Several job managers (replicas) on one real Postgres queue: any replica accepts a job and
 * whichever has room runs it; events, waits and cancels work from any replica; a lapsed lease is
 * taken over, keeping what was stored; a shutdown hands jobs back. The runner is a test double that
 * stores a candidate per step, so what a takeover keeps and reruns is visible.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, expect, it } from 'vitest';
import { JobManager, type JobRunnerFactory } from '../../src/solve/job-manager.js';
import type { JobEvent } from '../../src/solve/events.js';
import { createPostgresQueue } from '../../src/store/postgres-queue.js';
import { createPostgresStore, type PostgresStore } from '../../src/store/postgres-store.js';
import type { JobQueue } from '../../src/store/types.js';
import { describeWithPostgres, freshDatabase } from '../support/postgres.js';

const LEASE_MS = 900;

describeWithPostgres('job manager on a shared Postgres queue', () => {
  const drops: Array<() => Promise<void>> = [];
  const cleanups: Array<() => Promise<unknown>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
  });
  afterAll(async () => {
    for (const drop of drops) await drop();
  });

  /** Which replicas ran each job's steps, in order: `${replica}:${index}`. */
  let steps: Record<string, string[]> = {};
  const runner =
    (replica: string): JobRunnerFactory =>
    (job, { store, resume }) =>
    async (id, { signal, emit }) => {
      const { n, step_ms } = job.request as { n: number; step_ms: number | number[] };
      for (let index = 0; index < n; index++) {
        if (resume?.some((candidate) => candidate.index === index && candidate.status === 'finished')) continue;
        emit({ type: 'rollout-start', index, wave: 0 });
        await sleep(Array.isArray(step_ms) ? step_ms[index]! : step_ms, undefined, { signal });
        (steps[id] ??= []).push(`${replica}:${index}`);
        await store.putCandidate(id, index, { status: 'finished' });
        emit({ type: 'rollout-finish', index, status: 'finished', exit: 'submitted', steps: 1, patch_bytes: 0 });
      }
      return { ran_on: replica };
    };

  async function replica(
    url: string,
    name: string,
    options: { serve?: boolean; maxRunning?: number; leaseMs?: number; queue?: (q: JobQueue) => JobQueue } = {},
  ) {
    const store: PostgresStore = await createPostgresStore(url);
    const real = createPostgresQueue(store, url, name);
    const queue = options.queue ? options.queue(real) : real;
    const jobs = new JobManager(store, { maxRunning: options.maxRunning ?? 2, shared: { queue, leaseMs: options.leaseMs ?? LEASE_MS } });
    if (options.serve ?? true) await jobs.serveQueue(runner(name));
    else await jobs.followQueue();
    cleanups.push(
      () => store.close(),
      () => jobs.shutdown({ graceMs: 2000 }),
    );
    return { jobs, store };
  }

  async function database() {
    const fresh = await freshDatabase();
    drops.push(fresh.drop);
    steps = {};
    return fresh.url;
  }

  const events = (jobs: JobManager, id: string) =>
    new Promise<JobEvent[]>((resolve) => {
      const seen: JobEvent[] = [];
      void jobs.subscribe(
        id,
        (event) => seen.push(event),
        () => resolve(seen),
      );
    });

  it('runs a job accepted by one replica on another, which answers wait and events for it', async () => {
    const url = await database();
    const front = await replica(url, 'front', { serve: false });
    const worker = await replica(url, 'worker');
    const job = await front.jobs.start('solve', { n: 3, step_ms: 50 }, async () => {
      throw new Error('the accepting replica does not run it');
    });
    const streamed = events(front.jobs, job.id);
    const finished = await front.jobs.wait(job.id);
    expect([finished.status, finished.result]).toEqual(['succeeded', { ran_on: 'worker' }]);
    const seen = await streamed;
    expect(seen.map((event) => event.seq)).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(seen.at(-1)).toMatchObject({ type: 'job-finish', status: 'succeeded' });
    expect(steps[job.id]).toEqual(['worker:0', 'worker:1', 'worker:2']);
    // A late client replays the stored log from the other replica too.
    expect((await events(worker.jobs, job.id)).map((event) => event.seq)).toEqual([0, 1, 2, 3, 4, 5, 6]);
  });

  it('never runs one job on two replicas, and runs each exactly once', async () => {
    const url = await database();
    const replicas = [await replica(url, 'a'), await replica(url, 'b'), await replica(url, 'c')];
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) ids.push((await replicas[i % 3]!.jobs.start('solve', { n: 1, step_ms: 30 }, async () => null)).id);
    const ended = await Promise.all(ids.map((id, i) => replicas[(i + 1) % 3]!.jobs.wait(id)));
    expect(ended.map((job) => job.status)).toEqual(ids.map(() => 'succeeded'));
    for (const id of ids) expect(steps[id]).toHaveLength(1);
    // Each replica took some (max_running_jobs 2 each, 12 jobs).
    expect(new Set(ids.map((id) => steps[id]![0]!.split(':')[0])).size).toBeGreaterThan(1);
  });

  it('stops a job when the cancel reaches a replica that does not run it, by notice (not at the next heartbeat)', async () => {
    const url = await database();
    // A ten-minute lease: the worker's heartbeat (every 200 s) would read the cancel far past the test's timeout.
    const front = await replica(url, 'front', { serve: false, leaseMs: 600_000 });
    const worker = await replica(url, 'worker', { leaseMs: 600_000 });
    const job = await front.jobs.start('solve', { n: 1, step_ms: 60_000 }, async () => null);
    await expect.poll(async () => (await front.jobs.get(job.id)).status).toBe('running');
    const cancelled = await front.jobs.cancel(job.id);
    expect(cancelled.status).toBe('cancelled');
    await expect.poll(() => worker.jobs.isRunning(job.id)).toBe(false);
    await expect.poll(async () => (await front.store.listEvents(job.id)).at(-1)).toMatchObject({ type: 'job-finish', status: 'cancelled' });
    // A job nobody claimed is cancelled in the store, its log ended.
    await worker.jobs.shutdown();
    const queued = await front.jobs.start('solve', { n: 1, step_ms: 1 }, async () => null);
    expect((await front.jobs.cancel(queued.id)).status).toBe('cancelled');
    expect((await front.store.listEvents(queued.id)).map((event) => event.type)).toEqual(['job-finish']);
  });

  it('stops a job whose cancel notice came while its claim was still on its way', async () => {
    const url = await database();
    let claimed!: () => void;
    const wasClaimed = new Promise<void>((resolve) => {
      claimed = resolve;
    });
    let open!: () => void;
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    let asked!: () => void;
    const wasAsked = new Promise<void>((resolve) => {
      asked = resolve;
    });
    const front = await replica(url, 'front', {
      serve: false,
      leaseMs: 600_000,
      queue: (queue) => ({
        ...queue,
        replica: queue.replica,
        requestCancel: async (id) => {
          await queue.requestCancel(id);
          asked();
        },
      }),
    });
    // The claim is in the database, and the worker has not yet started the job when the notice comes.
    const worker = await replica(url, 'worker', {
      leaseMs: 600_000,
      queue: (queue) => ({
        ...queue,
        replica: queue.replica,
        claim: async (leaseMs) => {
          const claim = await queue.claim(leaseMs);
          if (claim) {
            claimed();
            await gate;
          }
          return claim;
        },
      }),
    });
    const job = await front.jobs.start('solve', { n: 1, step_ms: 60_000 }, async () => null);
    await wasClaimed;
    const cancelling = front.jobs.cancel(job.id);
    // Asked, and its notice given a moment to arrive, before the worker starts the job.
    await wasAsked;
    await sleep(300);
    open();
    // Without the notice kept, only the renewal 200 s on would have read the cancel.
    expect((await cancelling).status).toBe('cancelled');
    await expect.poll(() => worker.jobs.isRunning(job.id)).toBe(false);
    expect(steps[job.id]).toBeUndefined();
  });

  it('takes over a job whose replica stopped renewing: finished steps kept, the running one rerun, the old holder fenced off', async () => {
    const url = await database();
    // "dying" loses the store after its second step, as a replica that hangs or dies would: no
    // renewal and no claim (a replica that only missed its renewals may take its own job back).
    let alive = true;
    const dying = await replica(url, 'dying', {
      queue: (queue) => ({
        ...queue,
        replica: queue.replica,
        renew: (ids, leaseMs) => (alive ? queue.renew(ids, leaseMs) : Promise.reject(new Error('replica gone'))),
        claim: (leaseMs) => (alive ? queue.claim(leaseMs) : Promise.reject(new Error('replica gone'))),
      }),
    });
    // Step 2 is still running when the lease lapses (3 s against a 0.9 s lease).
    const job = await dying.jobs.start('solve', { n: 4, step_ms: [150, 150, 3000, 150] }, async () => null);
    await expect.poll(() => steps[job.id]?.length ?? 0, { timeout: 5000 }).toBe(2);
    // A client of the replica that loses the job keeps following it on the new holder.
    expect(dying.jobs.isRunning(job.id)).toBe(true);
    const onDying = events(dying.jobs, job.id);
    alive = false;
    const heir = await replica(url, 'heir');
    const finished = await heir.jobs.wait(job.id);
    expect([finished.status, finished.result]).toEqual(['succeeded', { ran_on: 'heir' }]);
    // Steps 0 and 1 were kept; 2 (running when the lease lapsed) and 3 ran on the heir, once each.
    expect(steps[job.id]!.filter((step) => step.startsWith('heir'))).toEqual(['heir:2', 'heir:3']);
    const log = await heir.store.listEvents(job.id);
    expect(log.map((event) => event.seq)).toEqual(log.map((_, i) => i));
    expect(log.find((event) => event.type === 'taken-over')).toMatchObject({ from: 'dying', to: 'heir', kept: [0, 1] });
    expect(log.filter((event) => event.type === 'job-finish')).toHaveLength(1);
    expect((await heir.store.listCandidates(job.id)).map((candidate) => candidate.status)).toEqual([
      'finished',
      'finished',
      'finished',
      'finished',
    ]);
    // The old holder stopped before the lease lapsed, and wrote nothing after.
    expect(dying.jobs.isRunning(job.id)).toBe(false);
    expect(steps[job.id]).toEqual(['dying:0', 'dying:1', 'heir:2', 'heir:3']);
    const followed = await onDying;
    expect(followed.map((event) => event.seq)).toEqual(log.map((event) => event.seq));
    expect(followed.at(-1)).toMatchObject({ type: 'job-finish', status: 'succeeded' });
  });

  it('hands running jobs back at shutdown; another replica takes them over from there', async () => {
    const url = await database();
    const leaving = await replica(url, 'leaving');
    const job = await leaving.jobs.start('solve', { n: 3, step_ms: 300 }, async () => null);
    await expect.poll(() => steps[job.id]?.length ?? 0, { timeout: 5000 }).toBe(1);
    expect(await leaving.jobs.shutdown()).toEqual([]);
    const handed = await leaving.jobs.get(job.id);
    expect(handed.status).toBe('queued');
    const staying = await replica(url, 'staying');
    const finished = await staying.jobs.wait(job.id);
    expect(finished.status).toBe('succeeded');
    const types = (await staying.store.listEvents(job.id)).map((event) => event.type);
    expect(types.filter((type) => type === 'job-requeued' || type === 'taken-over' || type === 'job-finish')).toEqual([
      'job-requeued',
      'taken-over',
      'job-finish',
    ]);
    expect(steps[job.id]).toEqual(['leaving:0', 'staying:1', 'staying:2']);
  });
});
