/**
 * Runs jobs in the background and keeps them observable: state in the job store, progress
 * events in the store and, while the job runs, in memory for subscribers (SSE), cancellation
 * through one AbortController per job. With a shared queue (several replicas on one Postgres
 * store, `shared`), a job accepted here is queued in the store and run by whichever replica
 * claims it; events, waits and cancels follow it through the store's notices (docs/deployment.md).
 */
import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { toWinnowerError, wnwError } from '../errors.js';
import { SerialWrites } from '../store/serial-writes.js';
import {
  TERMINAL_JOB_STATUSES,
  type CandidateRecord,
  type ClaimedJob,
  type JobQueue,
  type JobRecord,
  type JobStore,
  type JobUpdate,
  type QueueNotice,
} from '../store/types.js';
import { fencedStore } from './fenced-store.js';
import type { JobEvent, JobEventBody, JobEventListener } from './events.js';
import { partialSolveResult } from './partial-result.js';

interface RunningJob {
  controller: AbortController;
  /**
   * What an abort records: a client's DELETE cancels, a server shutdown interrupts (or, with a
   * shared queue, hands the job back: `requeued`); a lease another replica took over (`lost`)
   * records nothing.
   */
  stopAs?: 'cancelled' | 'interrupted' | 'requeued' | 'lost';
  events: JobEvent[];
  /** The next event's number (a taken-over job goes on from the last one stored). */
  nextSeq: number;
  /** The job's events on their way to the store, in the order they were emitted. */
  appends: SerialWrites;
  emitter: EventEmitter;
  done: Promise<void>;
}

/** How long shutdown() waits for running jobs to stop (under fastify's 10 s limit for close hooks). */
export const DEFAULT_SHUTDOWN_GRACE_MS = 5000;

export type JobRunner = (jobId: string, hooks: { signal: AbortSignal; emit: (event: JobEventBody) => void }) => Promise<unknown>;

/**
 * With a shared queue, how a replica runs a job it claimed, from the stored request alone: `store`
 * writes only while this replica holds the job; `resume` is what a previous holder had stored.
 */
export type JobRunnerFactory = (job: JobRecord, context: { store: JobStore; resume?: CandidateRecord[] }) => JobRunner;

export interface SharedQueueOptions {
  queue: JobQueue;
  /** How long a claim holds without a heartbeat; renewed every third of it. */
  leaseMs: number;
  /** Heard on each claim of a job another replica held (metrics). */
  onTakeover?: (jobId: string, from: string) => void;
  /** Where queue failures (the store unreachable) are reported, with what this replica does about them. */
  onQueueError?: (error: unknown, what: string) => void;
}

export interface JobManagerOptions {
  /** Jobs running at once; later ones wait as `queued` (each job runs up to n sandboxes). */
  maxRunning?: number;
  /** Jobs waiting for a slot before `start` refuses more with WNW_ERR_LIMIT_QUEUE (default: unbounded). */
  maxQueued?: number;
  /** The Retry-After that refusal suggests, in seconds (default 10). */
  queueRetryAfterS?: number;
  /** Where a failure to record a job's end is reported (the job itself has ended either way). */
  onStoreError?: (error: unknown, jobId: string) => void;
  /** Every progress event of every job, as it is emitted (metrics). */
  onEvent?: (event: JobEvent, job: { id: string; kind: JobRecord['kind'] }) => void;
  /** Several replicas share the store's queue; jobs start when `serveQueue` gives the runner factory. */
  shared?: SharedQueueOptions;
}

/** How often a follower of a job run elsewhere looks at the store when no notice came (a dropped LISTEN). */
const FOLLOW_POLL_MS = 1000;

export class JobManager {
  readonly #store: JobStore;
  readonly #running = new Map<string, RunningJob>();
  readonly #maxRunning: number;
  readonly #onStoreError: (error: unknown, jobId: string) => void;
  readonly #onEvent: JobManagerOptions['onEvent'];
  readonly #maxQueued: number;
  readonly #queueRetryAfterS: number;
  #active = 0;
  readonly #waiting: Array<() => void> = [];
  readonly #shared: SharedQueueOptions | undefined;
  #runnerFor: JobRunnerFactory | undefined;
  /** Notices of the shared queue, by job id (`event`) and for everyone (`queued`). */
  readonly #notices = new EventEmitter();
  #pumping = false;
  #pumpAgain = false;
  /** The claiming loop running now: shutdown waits for it, so no claimed job is left out. */
  #pumped: Promise<void> = Promise.resolve();
  #listening = false;
  #stopping = false;
  #queueDepth = 0;
  #lastRenew = Date.now();
  #stopQueue: Array<() => unknown> = [];
  /**
   * Cancel notices for jobs not running here, by when they came: a job claimed here a moment before
   * is not yet running when its notice arrives (the claim read no cancel; the next renewal, a third
   * of a lease later, would), so a claim looks here once it has started.
   */
  readonly #cancelsHeard = new Map<string, number>();

  constructor(store: JobStore, options: JobManagerOptions = {}) {
    this.#store = store;
    this.#maxRunning = options.maxRunning ?? 4;
    this.#onStoreError =
      options.onStoreError ?? ((error, jobId) => console.error(`winnower: could not record the end of job ${jobId}:`, error));
    this.#onEvent = options.onEvent;
    this.#maxQueued = options.maxQueued ?? Number.POSITIVE_INFINITY;
    this.#queueRetryAfterS = options.queueRetryAfterS ?? 10;
    this.#shared = options.shared;
    this.#notices.setMaxListeners(0);
  }

  /** Jobs waiting for a slot (with a shared queue: waiting for any replica, as of the last heartbeat). */
  get queued(): number {
    return this.#shared ? this.#queueDepth : this.#waiting.length;
  }

  /** This replica's id in the shared queue; undefined without one. */
  get replica(): string | undefined {
    return this.#shared?.queue.replica;
  }

  /** Jobs holding a slot. */
  get active(): number {
    return this.#active;
  }

  /** Waits for a free job slot; a job cancelled while queued leaves the queue at once. */
  async #acquire(signal: AbortSignal): Promise<void> {
    signal.throwIfAborted();
    if (this.#active < this.#maxRunning) {
      this.#active += 1;
      return;
    }
    await new Promise<void>((resolve, reject) => {
      const onAbort = () => {
        this.#waiting.splice(this.#waiting.indexOf(grant), 1);
        reject(signal.reason);
      };
      const grant = () => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      };
      this.#waiting.push(grant);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Hands the slot to the next queued job, or frees it. */
  #release(): void {
    const next = this.#waiting.shift();
    if (next) next();
    else this.#active -= 1;
  }

  /** Creates a job and starts `run` in the background; its result becomes the job's result. */
  async start(kind: JobRecord['kind'], request: unknown, run: JobRunner): Promise<JobRecord> {
    // With a shared queue the job is run from its stored request by whichever replica claims it
    // (the factory given to serveQueue), so `run` is not used: the submit refuses what the stored
    // request cannot carry (its secrets, src/server/plugins/redact-request.ts).
    if (this.#shared) return this.#enqueue(kind, request);
    // Refused before anything is stored: a client told to come back later has left no job behind.
    if (this.#active >= this.#maxRunning && this.#waiting.length >= this.#maxQueued) {
      throw wnwError(
        'WNW_ERR_LIMIT_QUEUE',
        `${this.#waiting.length} jobs are already queued (server.limits.max_queued_jobs); retry later`,
        {
          details: {
            queued: this.#waiting.length,
            limit: this.#maxQueued,
            setting: 'server.limits.max_queued_jobs',
            retry_after_s: this.#queueRetryAfterS,
          },
          retryable: true,
        },
      );
    }
    const id = randomUUID();
    const job = await this.#store.createJob({ id, kind, request, status: 'queued' });
    const entry = this.#entry([], 0);
    this.#running.set(id, entry);
    entry.done = this.#execute(id, kind, entry, run, this.#store, async (signal) => {
      await this.#acquire(signal);
      await this.#store.updateJob(id, { status: 'running' });
    });
    return job;
  }

  #entry(events: JobEvent[], nextSeq: number): RunningJob {
    const entry: RunningJob = {
      controller: new AbortController(),
      events,
      nextSeq,
      appends: new SerialWrites(),
      emitter: new EventEmitter(),
      done: Promise.resolve(),
    };
    entry.emitter.setMaxListeners(0);
    return entry;
  }

  /**
   * One job from its slot to its end: `begin` waits for the slot (a claimed job holds one already);
   * the end is recorded unless the job was handed back or lost to another replica.
   */
  async #execute(
    id: string,
    kind: JobRecord['kind'],
    entry: RunningJob,
    run: JobRunner,
    store: JobStore,
    begin: (signal: AbortSignal, emit: (event: JobEventBody) => void) => Promise<void>,
  ): Promise<void> {
    const emit = (body: JobEventBody) => {
      if (entry.stopAs === 'lost') return;
      const event = { ...body, seq: entry.nextSeq++, time: new Date().toISOString() } as JobEvent;
      this.#onEvent?.(event, { id, kind });
      // Kept with the job, so a client that reconnects after the end (or after a restart) can replay it;
      // queued, so the store gets the events in the order subscribers do.
      const stored = entry.appends.run(() => store.appendEvent(id, event));
      if (!this.#shared) {
        entry.events.push(event);
        entry.emitter.emit('event', event);
        stored.catch((storeError: unknown) => this.#onStoreError(storeError, id));
        return;
      }
      // Shared: an event reaches subscribers only once stored, so a client that reconnects to
      // another replica (this one killed) with Last-Event-ID finds every event it was sent.
      stored.then(
        () => {
          entry.events.push(event);
          entry.emitter.emit('event', event);
        },
        (storeError: unknown) => this.#onStoreError(storeError, id),
      );
    };
    /** Writes the job's end, then its last event; with a shared store both in one statement. */
    const finish = async (update: JobUpdate, last: JobEventBody) => {
      if (!this.#shared) {
        await store.updateJob(id, update);
        emit(last);
        return;
      }
      // Every earlier event is stored first, so the last one follows them in the log.
      await entry.appends.flush().catch(() => undefined);
      const event = { ...last, seq: entry.nextSeq++, time: new Date().toISOString() } as JobEvent;
      // Written only while this replica still holds the job's lease.
      if (!(await this.#shared.queue.finish(id, update, event))) {
        entry.stopAs = 'lost';
        throw wnwError('WNW_ERR_JOB_STATE', `job ${id} is held by another replica now; its end is theirs to record`);
      }
      this.#onEvent?.(event, { id, kind });
      entry.events.push(event);
      entry.emitter.emit('event', event);
    };
    let holdsSlot = false;
    try {
      holdsSlot = this.#shared !== undefined;
      await begin(entry.controller.signal, emit);
      holdsSlot = true;
      const result = await run(id, { signal: entry.controller.signal, emit });
      // A solve job that ran but chose nothing usable says so in its last event too (result.outcome).
      const outcome = (result as { outcome?: unknown } | null)?.outcome;
      await finish(
        { status: 'succeeded', result },
        { type: 'job-finish', status: 'succeeded', ...(typeof outcome === 'string' ? { outcome } : {}) },
      );
    } catch (caught) {
      const aborted = entry.controller.signal.aborted;
      const error = toWinnowerError(aborted ? entry.controller.signal.reason : caught);
      // Shared: a write the store refused because it was unreachable (a restart, a dropped
      // connection) is no failure of the job: it goes back to the queue with what it had stored.
      const storeDown = this.#shared !== undefined && !aborted && error.code === 'WNW_ERR_STORE_UNAVAILABLE';
      const stopAs = aborted ? (entry.stopAs ?? 'cancelled') : entry.stopAs === 'lost' ? 'lost' : storeDown ? 'requeued' : 'failed';
      if (stopAs === 'requeued') {
        // Handed back: no end recorded; the next replica to claim it takes it over from here (if the
        // store is still down, the release fails too and the lease lapses instead).
        emit({ type: 'job-requeued', replica: this.#shared!.queue.replica, reason: error.message });
        await entry.appends.flush().catch(() => undefined);
        await this.#shared!.queue.release(id).catch((storeError: unknown) => this.#onStoreError(storeError, id));
      } else if (stopAs !== 'lost') {
        const status = stopAs;
        const update: JobUpdate = { status, error: { code: error.code, message: error.message } };
        if ((status === 'interrupted' || status === 'cancelled') && kind === 'solve') {
          // A solve job stopped by a shutdown or a client's cancel still answers with the best of what had
          // finished and the checks' evidence so far, marked partial: stopping a job loses nothing.
          try {
            await entry.appends.flush();
            update.result = await partialSolveResult(
              this.#store,
              await this.get(id),
              `${error.message}; chosen among the candidates that had finished`,
            );
          } catch (partialError) {
            this.#onStoreError(partialError, id);
          }
        }
        try {
          await finish(update, { type: 'job-finish', status, error: error.message });
        } catch (storeError) {
          this.#onStoreError(storeError, id);
        }
      }
    } finally {
      if (holdsSlot) this.#release();
      // Every event is stored before the job stops counting as running: a subscriber that finds it
      // not running replays the store and misses nothing.
      await entry.appends.flush().catch(() => undefined);
      this.#running.delete(id);
      entry.emitter.emit('end');
      if (this.#shared) this.#pump();
    }
  }

  /** Shared queue: the job is stored as queued and every idle replica hears of it. */
  async #enqueue(kind: JobRecord['kind'], request: unknown): Promise<JobRecord> {
    const { queue } = this.#shared!;
    if (Number.isFinite(this.#maxQueued)) {
      const depth = await queue.depth();
      if (depth >= this.#maxQueued)
        throw wnwError('WNW_ERR_LIMIT_QUEUE', `${depth} jobs are already queued (server.limits.max_queued_jobs); retry later`, {
          details: {
            queued: depth,
            limit: this.#maxQueued,
            setting: 'server.limits.max_queued_jobs',
            retry_after_s: this.#queueRetryAfterS,
          },
          retryable: true,
        });
    }
    const job = await this.#store.createJob({ id: randomUUID(), kind, request, status: 'queued' });
    this.#pump();
    // The others hear of it too; one busy here is picked up there.
    await queue.announce().catch((error: unknown) => this.#shared!.onQueueError?.(error, 'announce'));
    return job;
  }

  /**
   * Shared queue: starts claiming jobs with `runnerFor`, renewing this replica's leases every
   * third of a lease and listening for the queue's notices. Resolves once listening.
   */
  async serveQueue(runnerFor: JobRunnerFactory): Promise<void> {
    await this.followQueue();
    this.#runnerFor = runnerFor;
    const timer = setInterval(() => void this.#heartbeat(), this.#heartbeatMs());
    timer.unref();
    this.#stopQueue.push(() => clearInterval(timer));
    this.#pump();
  }

  /** Shared queue: hears the queue's notices (events, ends, cancels) without claiming jobs. Once. */
  async followQueue(): Promise<void> {
    const shared = this.#shared;
    if (!shared) throw new Error('the job queue needs the shared option');
    if (this.#listening) return;
    this.#listening = true;
    const unlisten = await shared.queue.listen((notice) => this.#onNotice(notice));
    this.#stopQueue.push(() => unlisten());
  }

  #heartbeatMs(): number {
    return Math.max(100, this.#shared!.leaseMs / 3);
  }

  #onNotice(notice: QueueNotice): void {
    if (notice.kind === 'queued') this.#pump();
    else if (notice.kind === 'cancel') {
      if (this.#running.has(notice.jobId)) this.cancel(notice.jobId).catch(() => undefined);
      else this.#heardCancel(notice.jobId);
    } else this.#notices.emit(notice.jobId, notice.seq);
  }

  /** Keeps a cancel notice for a lease's time: after that, a claim's own read or a renewal has seen the cancel. */
  #heardCancel(id: string): void {
    const now = Date.now();
    for (const [heard, at] of this.#cancelsHeard) if (now - at > this.#shared!.leaseMs) this.#cancelsHeard.delete(heard);
    this.#cancelsHeard.set(id, now);
  }

  /** Renews the leases held here; stops jobs another replica took; claims what there is room for. */
  async #heartbeat(): Promise<void> {
    const shared = this.#shared!;
    const held = [...this.#running.entries()].filter(([, entry]) => entry.stopAs !== 'lost').map(([id]) => id);
    // Taken before the call: the lease runs from the database's clock when the renewal arrived.
    const sent = Date.now();
    try {
      const { lost, cancel } = await shared.queue.renew(held, shared.leaseMs);
      this.#lastRenew = sent;
      for (const id of lost) this.#lose(id);
      for (const id of cancel) this.cancel(id).catch(() => undefined);
      this.#queueDepth = await shared.queue.depth();
    } catch (error) {
      // Stopped before the lease can lapse (the next heartbeat would come after it): another
      // replica may take these jobs over then, and must never find them still running here.
      const late = Date.now() - this.#lastRenew + this.#heartbeatMs() >= shared.leaseMs;
      shared.onQueueError?.(error, late ? 'leases lapsed: stopping the jobs held here' : 'lease renewal failed; retrying');
      if (late) for (const id of held) this.#lose(id);
      return;
    }
    this.#pump();
  }

  /** A job this replica no longer holds stops here and writes nothing more. */
  #lose(id: string): void {
    const entry = this.#running.get(id);
    if (!entry || entry.controller.signal.aborted) return;
    entry.stopAs = 'lost';
    entry.controller.abort(wnwError('WNW_ERR_JOB_STATE', `job ${id} was taken over by another replica`));
  }

  /** Claims jobs while this replica has room for them (server.max_running_jobs). */
  #pump(): void {
    if (!this.#shared || !this.#runnerFor || this.#stopping) return;
    if (this.#pumping) {
      this.#pumpAgain = true;
      return;
    }
    this.#pumping = true;
    this.#pumped = (async () => {
      try {
        do {
          this.#pumpAgain = false;
          while (this.#active < this.#maxRunning && !this.#stopping) {
            const claimed = await this.#shared!.queue.claim(this.#shared!.leaseMs);
            if (!claimed) break;
            // A claim that was on its way when the shutdown began goes straight back.
            if (this.#stopping) {
              await this.#shared!.queue.release(claimed.job.id);
              break;
            }
            this.#active += 1;
            await this.#runClaimed(claimed);
          }
        } while (this.#pumpAgain && !this.#stopping);
      } catch (error) {
        this.#shared!.onQueueError?.(error, 'claiming jobs stopped; tried again at the next heartbeat');
      } finally {
        this.#pumping = false;
      }
    })();
  }

  /** Runs a claimed job; a takeover goes on from what its previous holder stored. */
  async #runClaimed({ job, previousOwner, cancelRequested }: ClaimedJob): Promise<void> {
    const shared = this.#shared!;
    const id = job.id;
    let entry: RunningJob | undefined;
    try {
      const stored = (await this.#store.listEvents(id)) as JobEvent[];
      entry = this.#entry(stored, (stored.at(-1)?.seq ?? -1) + 1);
      const current = entry;
      const store = fencedStore(this.#store, () => current.stopAs === 'lost');
      const resume = previousOwner === null ? undefined : await this.#store.listCandidates(id);
      const run = this.#runnerFor!(job, { store, ...(resume ? { resume } : {}) });
      this.#running.set(id, entry);
      entry.done = this.#execute(id, job.kind, entry, run, store, async (_signal, emit) => {
        if (previousOwner === null) return;
        shared.onTakeover?.(id, previousOwner);
        const kept = (resume ?? []).filter((candidate) => candidate.status === 'finished' || candidate.status === 'failed');
        emit({
          type: 'taken-over',
          from: previousOwner,
          to: shared.queue.replica,
          kept: kept.map((candidate) => candidate.index),
        });
      });
      const heard = this.#cancelsHeard.delete(id);
      if (cancelRequested || heard) void this.cancel(id).catch(() => undefined);
    } catch (error) {
      // Nothing started: the slot goes back, and the lease lapses for another replica to try.
      this.#active -= 1;
      if (entry) this.#running.delete(id);
      shared.onQueueError?.(error, `could not start job ${id}`);
    }
  }

  async get(id: string): Promise<JobRecord> {
    const job = await this.#store.getJob(id);
    if (!job) throw wnwError('WNW_ERR_JOB_NOT_FOUND', `job ${id} not found`, { details: { job_id: id } });
    return job;
  }

  isRunning(id: string): boolean {
    return this.#running.has(id);
  }

  /**
   * Cancels a running job; resolves once its rollouts have stopped and its sandboxes are closed.
   * With a shared queue: a job nobody claimed is cancelled in the store; one running on another
   * replica is asked to stop there (a notice, within a second), and this resolves when it has.
   */
  async cancel(id: string, as: 'cancelled' | 'interrupted' | 'requeued' = 'cancelled'): Promise<JobRecord> {
    const job = await this.get(id);
    const entry = this.#running.get(id);
    if (!entry) {
      if (TERMINAL_JOB_STATUSES.includes(job.status))
        throw wnwError('WNW_ERR_JOB_STATE', `job ${id} already ${job.status}`, { details: { job_id: id, status: job.status } });
      if (!this.#shared || as !== 'cancelled') return job;
      return this.#cancelElsewhere(job);
    }
    this.#abort(entry, as);
    await entry.done;
    return this.get(id);
  }

  #abort(entry: RunningJob, as: 'cancelled' | 'interrupted' | 'requeued'): void {
    if (entry.controller.signal.aborted) return;
    entry.stopAs = as;
    entry.controller.abort(
      as === 'cancelled'
        ? wnwError('WNW_ERR_OP_ABORTED', 'job cancelled')
        : as === 'requeued'
          ? wnwError('WNW_ERR_JOB_STATE', 'the replica running this job stopped; another one takes it over')
          : wnwError('WNW_ERR_JOB_STATE', 'the server stopped while this job was running; partial results are kept'),
    );
  }

  async #cancelElsewhere(job: JobRecord): Promise<JobRecord> {
    const { queue } = this.#shared!;
    if (job.status === 'queued') {
      const cancelled = await queue.cancelQueued(job.id, { code: 'WNW_ERR_OP_ABORTED', message: 'job cancelled' });
      if (cancelled) return cancelled;
    }
    // Claimed meanwhile, or running on another replica: that replica stops it.
    await queue.requestCancel(job.id);
    return this.wait(job.id);
  }

  /** Resolves when the job has ended (with a shared queue: on whichever replica runs it). */
  async wait(id: string): Promise<JobRecord> {
    await this.#running.get(id)?.done;
    if (!this.#shared) return this.get(id);
    for (;;) {
      // Listening before the read: an end announced while it is on its way is not missed.
      const notice = this.#nextNotice(id);
      const job = await this.get(id);
      if (TERMINAL_JOB_STATUSES.includes(job.status)) {
        notice.cancel();
        // A caller that reads the events next must find the job-finish: a run here ends flushing
        // its events; elsewhere the end and the job-finish are stored together (older versions
        // stored the job-finish a moment after).
        const running = this.#running.get(id);
        if (running) await running.done;
        else await this.#finishStored(id);
        return job;
      }
      const local = this.#running.get(id);
      if (local) {
        notice.cancel();
        await local.done;
      } else await notice.heard;
    }
  }

  /**
   * Waits, a few polls at most, until a terminal job's job-finish is stored by the replica that
   * ran it; a job stored by an older version may have none, and is not waited on longer.
   */
  async #finishStored(id: string): Promise<void> {
    for (let poll = 0; poll < 3; poll += 1) {
      const events = await this.#store.listEvents(id);
      if (events.at(-1)?.type === 'job-finish') return;
      const notice = this.#nextNotice(id);
      await notice.heard;
    }
  }

  /** The next event notice of a job, or FOLLOW_POLL_MS, whichever comes first. */
  #nextNotice(id: string): { heard: Promise<void>; cancel: () => void } {
    let done = () => {};
    const heard = new Promise<void>((resolve) => {
      done = () => {
        clearTimeout(timer);
        this.#notices.off(id, done);
        resolve();
      };
    });
    const timer = setTimeout(done, FOLLOW_POLL_MS);
    this.#notices.on(id, done);
    return { heard, cancel: done };
  }

  /**
   * Past events of a running job, then live ones until it ends. For a job that is not running
   * (finished, or from before a restart) its stored events, then `onEnd`. With a shared queue,
   * a job not running here is followed through the store until its `job-finish`, across takeovers.
   */
  async subscribe(id: string, listener: JobEventListener, onEnd: () => void): Promise<() => void> {
    await this.get(id);
    // Looked up after the read: a job that ended meanwhile has every event stored (see `start`).
    const entry = this.#running.get(id);
    if (!entry) {
      if (this.#shared) return this.#follow(id, listener, onEnd);
      for (const event of await this.#store.listEvents(id)) listener(event as JobEvent);
      onEnd();
      return () => {};
    }
    let last = -1;
    let finished = false;
    let following: (() => void) | undefined;
    const onEvent = (event: JobEvent) => {
      last = event.seq;
      if (event.type === 'job-finish') finished = true;
      listener(event);
    };
    // Shared: a job this replica lost to another goes on there; the stream follows it. One handed
    // back at shutdown ends here: the client reconnects to another replica.
    const onLocalEnd = () => {
      if (finished || !this.#shared || this.#stopping) return onEnd();
      following = this.#follow(id, listener, onEnd, last);
    };
    for (const event of entry.events) onEvent(event);
    entry.emitter.on('event', onEvent);
    entry.emitter.once('end', onLocalEnd);
    return () => {
      entry.emitter.off('event', onEvent);
      entry.emitter.off('end', onLocalEnd);
      following?.();
    };
  }

  /** Reads a job's stored events as notices say they land (or every FOLLOW_POLL_MS), until it ends. */
  #follow(id: string, listener: JobEventListener, onEnd: () => void, after = -1): () => void {
    let last = after;
    let endedAt: number | undefined;
    let stopped = false;
    let reading = false;
    let again = false;
    const stop = () => {
      stopped = true;
      clearInterval(timer);
      this.#notices.off(id, read);
    };
    const deliver = async (): Promise<boolean> => {
      for (const event of await this.#store.listEvents(id, last)) {
        if (stopped) return true;
        last = event.seq;
        listener(event as JobEvent);
        if (event.type === 'job-finish') return true;
      }
      return false;
    };
    const read = () => {
      if (stopped) return;
      if (reading) {
        again = true;
        return;
      }
      reading = true;
      void (async () => {
        try {
          do {
            again = false;
            if (await deliver()) return end();
            const job = await this.#store.getJob(id);
            if (!job) return end();
            // A job's end and its job-finish are stored together; older versions stored the
            // job-finish a moment after, or never (killed between): the stream ends after a grace.
            if (TERMINAL_JOB_STATUSES.includes(job.status)) {
              endedAt ??= Date.now();
              if (Date.now() - endedAt > 2 * FOLLOW_POLL_MS) return end();
            }
          } while (again && !stopped);
        } catch {
          // The store is unreachable for now: the next notice or poll tries again.
        } finally {
          reading = false;
        }
      })();
    };
    const end = () => {
      if (stopped) return;
      stop();
      onEnd();
    };
    this.#notices.on(id, read);
    const timer = setInterval(read, FOLLOW_POLL_MS);
    timer.unref();
    read();
    return stop;
  }

  /**
   * Stops every running job, recorded as interrupted (as after a crash), and waits for them, but
   * no longer than `graceMs` (server shutdown must end even if some step ignores its signal).
   * Returns the ids of the jobs still stopping when the grace ran out; the next start records
   * them as interrupted. With a shared queue the jobs are handed back instead, for another
   * replica to take over, and this replica stops claiming.
   */
  async shutdown(options: { graceMs?: number } = {}): Promise<string[]> {
    this.#stopping = true;
    const as = this.#shared ? 'requeued' : 'interrupted';
    // Aborted at once, before anything is awaited: a signal's other handler (the sandbox registry)
    // closes sandboxes next, and a rollout broken off by that is the job's stop, not a failure.
    for (const entry of this.#running.values()) this.#abort(entry, as);
    // A job claimed a moment ago is set up before the running ones are counted.
    await this.#pumped;
    const ids = [...this.#running.keys()];
    for (const entry of this.#running.values()) this.#abort(entry, as);
    const stopped = Promise.allSettled([...this.#running.values()].map((entry) => entry.done));
    let timer: NodeJS.Timeout | undefined;
    const grace = new Promise<void>((resolve) => (timer = setTimeout(resolve, options.graceMs ?? DEFAULT_SHUTDOWN_GRACE_MS)));
    await Promise.race([stopped, grace]);
    clearTimeout(timer);
    for (const stop of this.#stopQueue.splice(0)) await stop();
    return ids.filter((id) => this.#running.has(id));
  }
}
