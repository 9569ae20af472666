/**
 * Runs jobs in the background and keeps them observable: state in the job store, progress
 * events in the store and, while the job runs, in memory for subscribers (SSE), cancellation
 * through one AbortController per job.
 */
import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { toWinnowerError, wnwError } from '../errors.js';
import { SerialWrites } from '../store/serial-writes.js';
import { TERMINAL_JOB_STATUSES, type JobRecord, type JobStore, type JobUpdate } from '../store/types.js';
import type { JobEvent, JobEventBody, JobEventListener } from './events.js';
import { partialSolveResult } from './partial-result.js';

interface RunningJob {
  controller: AbortController;
  /** What an abort records: a client's DELETE cancels, a server shutdown interrupts. */
  stopAs?: 'cancelled' | 'interrupted';
  events: JobEvent[];
  /** The job's events on their way to the store, in the order they were emitted. */
  appends: SerialWrites;
  emitter: EventEmitter;
  done: Promise<void>;
}

/** How long shutdown() waits for running jobs to stop (under fastify's 10 s limit for close hooks). */
export const DEFAULT_SHUTDOWN_GRACE_MS = 5000;

export type JobRunner = (jobId: string, hooks: { signal: AbortSignal; emit: (event: JobEventBody) => void }) => Promise<unknown>;

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
}

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

  constructor(store: JobStore, options: JobManagerOptions = {}) {
    this.#store = store;
    this.#maxRunning = options.maxRunning ?? 4;
    this.#onStoreError =
      options.onStoreError ?? ((error, jobId) => console.error(`winnower: could not record the end of job ${jobId}:`, error));
    this.#onEvent = options.onEvent;
    this.#maxQueued = options.maxQueued ?? Number.POSITIVE_INFINITY;
    this.#queueRetryAfterS = options.queueRetryAfterS ?? 10;
  }

  /** Jobs waiting for a slot. */
  get queued(): number {
    return this.#waiting.length;
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
    const entry: RunningJob = {
      controller: new AbortController(),
      events: [],
      appends: new SerialWrites(),
      emitter: new EventEmitter(),
      done: Promise.resolve(),
    };
    entry.emitter.setMaxListeners(0);
    this.#running.set(id, entry);
    const emit = (body: JobEventBody) => {
      const event = { ...body, seq: entry.events.length, time: new Date().toISOString() } as JobEvent;
      entry.events.push(event);
      // Kept with the job, so a client that reconnects after the end (or after a restart) can replay it;
      // queued, so the store gets the events in the order subscribers do.
      entry.appends.run(() => this.#store.appendEvent(id, event)).catch((storeError: unknown) => this.#onStoreError(storeError, id));
      entry.emitter.emit('event', event);
      this.#onEvent?.(event, { id, kind });
    };
    entry.done = (async () => {
      let holdsSlot = false;
      try {
        await this.#acquire(entry.controller.signal);
        holdsSlot = true;
        await this.#store.updateJob(id, { status: 'running' });
        const result = await run(id, { signal: entry.controller.signal, emit });
        await this.#store.updateJob(id, { status: 'succeeded', result });
        // A solve job that ran but chose nothing usable says so in its last event too (result.outcome).
        const outcome = (result as { outcome?: unknown } | null)?.outcome;
        emit({ type: 'job-finish', status: 'succeeded', ...(typeof outcome === 'string' ? { outcome } : {}) });
      } catch (caught) {
        const aborted = entry.controller.signal.aborted;
        const error = toWinnowerError(aborted ? entry.controller.signal.reason : caught);
        const status = aborted ? (entry.stopAs ?? 'cancelled') : 'failed';
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
          await this.#store.updateJob(id, update);
        } catch (storeError) {
          this.#onStoreError(storeError, id);
        }
        emit({ type: 'job-finish', status, error: error.message });
      } finally {
        if (holdsSlot) this.#release();
        // Every event is stored before the job stops counting as running: a subscriber that finds it
        // not running replays the store and misses nothing.
        await entry.appends.flush().catch(() => undefined);
        this.#running.delete(id);
        entry.emitter.emit('end');
      }
    })();
    return job;
  }

  async get(id: string): Promise<JobRecord> {
    const job = await this.#store.getJob(id);
    if (!job) throw wnwError('WNW_ERR_JOB_NOT_FOUND', `job ${id} not found`, { details: { job_id: id } });
    return job;
  }

  isRunning(id: string): boolean {
    return this.#running.has(id);
  }

  /** Cancels a running job; resolves once its rollouts have stopped and its sandboxes are closed. */
  async cancel(id: string, as: 'cancelled' | 'interrupted' = 'cancelled'): Promise<JobRecord> {
    const job = await this.get(id);
    const entry = this.#running.get(id);
    if (!entry) {
      if (TERMINAL_JOB_STATUSES.includes(job.status))
        throw wnwError('WNW_ERR_JOB_STATE', `job ${id} already ${job.status}`, { details: { job_id: id, status: job.status } });
      return job;
    }
    if (!entry.controller.signal.aborted) {
      entry.stopAs = as;
      entry.controller.abort(
        as === 'interrupted'
          ? wnwError('WNW_ERR_JOB_STATE', 'the server stopped while this job was running; partial results are kept')
          : wnwError('WNW_ERR_OP_ABORTED', 'job cancelled'),
      );
    }
    await entry.done;
    return this.get(id);
  }

  /** Resolves when the job is no longer running. */
  async wait(id: string): Promise<JobRecord> {
    await this.#running.get(id)?.done;
    return this.get(id);
  }

  /**
   * Past events of a running job, then live ones until it ends. For a job that is not running
   * (finished, or from before a restart) its stored events, then `onEnd`.
   */
  async subscribe(id: string, listener: JobEventListener, onEnd: () => void): Promise<() => void> {
    await this.get(id);
    // Looked up after the read: a job that ended meanwhile has every event stored (see `start`).
    const entry = this.#running.get(id);
    if (!entry) {
      for (const event of await this.#store.listEvents(id)) listener(event as JobEvent);
      onEnd();
      return () => {};
    }
    for (const event of entry.events) listener(event);
    entry.emitter.on('event', listener);
    entry.emitter.once('end', onEnd);
    return () => {
      entry.emitter.off('event', listener);
      entry.emitter.off('end', onEnd);
    };
  }

  /**
   * Stops every running job, recorded as interrupted (as after a crash), and waits for them, but
   * no longer than `graceMs` (server shutdown must end even if some step ignores its signal).
   * Returns the ids of the jobs still stopping when the grace ran out; the next start records
   * them as interrupted.
   */
  async shutdown(options: { graceMs?: number } = {}): Promise<string[]> {
    const ids = [...this.#running.keys()];
    const stopped = Promise.allSettled(ids.map((id) => this.cancel(id, 'interrupted')));
    let timer: NodeJS.Timeout | undefined;
    const grace = new Promise<void>((resolve) => (timer = setTimeout(resolve, options.graceMs ?? DEFAULT_SHUTDOWN_GRACE_MS)));
    await Promise.race([stopped, grace]);
    clearTimeout(timer);
    return ids.filter((id) => this.#running.has(id));
  }
}
