/**
 * The job-store seam: jobs, their candidates (trajectory, score, verification) and results.
 * Asynchronous, so a networked store fits behind it; SQLite answers from its synchronous
 * internals (better-sqlite3, a write is a few microseconds) without waiting on anything.
 */
import type { Score, Trajectory, VerifyResult } from '../types/index.js';

export type JobKind = 'solve' | 'rerank';
export type JobStatus = 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled' | 'interrupted';
export const TERMINAL_JOB_STATUSES: readonly JobStatus[] = ['succeeded', 'failed', 'cancelled', 'interrupted'];

export type CandidateStatus = 'pending' | 'running' | 'finished' | 'failed' | 'cancelled' | 'skipped';

export interface ErrorRecord {
  code: string;
  message: string;
}

export interface JobRecord {
  id: string;
  kind: JobKind;
  status: JobStatus;
  /** The validated request, as received. */
  request: unknown;
  /** Counters for progress reporting. */
  progress: Record<string, number>;
  /** The job's result (selection, chosen patch, ...) once finished. */
  result: unknown;
  error: ErrorRecord | null;
  created_at: string;
  updated_at: string;
}

export interface CandidateRecord {
  job_id: string;
  /** Rollout index within the job, from 0. */
  index: number;
  status: CandidateStatus;
  trajectory: Trajectory | null;
  score: Score | null;
  verify: VerifyResult | null;
  error: ErrorRecord | null;
  /** A retry's (`retry_of`) rollout taken as it was from the earlier job: that job and the index there; null for a rollout of this job. */
  reused_from: ReusedFrom | null;
  updated_at: string;
}

/** Where a reused candidate came from: the job it finished in (the one retried) and its index there. */
export interface ReusedFrom {
  job_id: string;
  index: number;
}

/** One progress event of a job as it was streamed (src/solve/events.ts): its number in the job, its type, its fields. */
export type JobEventRecord = { seq: number; type: string; time: string } & Record<string, unknown>;

export interface ListJobsOptions {
  /** Default 100. */
  limit?: number;
  status?: JobStatus;
  kind?: JobKind;
  /** Jobs created after this time (ISO) only. */
  createdAfter?: string;
  before?: { created_at: string; id: string };
}

export type JobUpdate = Partial<Pick<JobRecord, 'status' | 'progress' | 'result' | 'error'>>;
export type CandidateUpdate = Partial<Omit<CandidateRecord, 'job_id' | 'index' | 'updated_at'>>;

export interface JobStore {
  createJob(job: Pick<JobRecord, 'id' | 'kind' | 'request'> & Partial<Pick<JobRecord, 'status' | 'progress'>>): Promise<JobRecord>;
  updateJob(id: string, update: JobUpdate): Promise<JobRecord>;
  getJob(id: string): Promise<JobRecord | undefined>;
  /** Newest first (created_at, then id, descending); `before` is the last job of the previous page (keyset paging). */
  listJobs(options?: ListJobsOptions): Promise<JobRecord[]>;
  /** How many jobs are in each status (every status present, 0 when none). */
  countJobsByStatus(): Promise<Record<JobStatus, number>>;
  /** Removes a job with its candidates and events; false when there was none. */
  deleteJob(id: string): Promise<boolean>;
  /**
   * Removes finished jobs (TERMINAL_JOB_STATUSES) that ended before `finishedBefore` (ISO time),
   * and those past the newest `keepNewest` finished ones. Queued and running jobs are never touched.
   * Returns the ids removed.
   */
  purgeFinished(options: { finishedBefore?: string; keepNewest?: number }): Promise<string[]>;
  /** Creates the candidate row when absent, else merges the update into it. */
  putCandidate(jobId: string, index: number, update: CandidateUpdate): Promise<CandidateRecord>;
  listCandidates(jobId: string): Promise<CandidateRecord[]>;
  /** Keeps an event of the job, so a client can replay it after the job ended or the server restarted. */
  appendEvent(jobId: string, event: JobEventRecord): Promise<void>;
  /** The job's events with `seq` above `afterSeq` (all by default), in order. */
  listEvents(jobId: string, afterSeq?: number): Promise<JobEventRecord[]>;
  /**
   * At start-up: jobs left queued or running by a previous process become `interrupted`, with what
   * they had: no rollout counts as running any more, unfinished candidates are `cancelled`, and the
   * event log ends with a `job-finish`. Returns their ids. A shared store (Postgres) returns none:
   * its unfinished jobs belong to the queue, and another replica may be running them.
   */
  markInterrupted(): Promise<string[]>;
  close(): Promise<void>;
}

/** A job a replica claimed from the shared queue. */
export interface ClaimedJob {
  job: JobRecord;
  /** The replica that held it before: set for a takeover (its lease lapsed) and for a job handed back at shutdown. */
  previousOwner: string | null;
  /** A DELETE reached another replica while nobody held the job: stop it at once. */
  cancelRequested: boolean;
}

/** What the shared queue tells every replica (Postgres LISTEN/NOTIFY). */
export type QueueNotice = { kind: 'queued' } | { kind: 'event'; jobId: string; seq: number } | { kind: 'cancel'; jobId: string };

/**
 * The job queue several replicas share (postgres-queue.ts): a replica claims a job with a lease
 * and renews it by heartbeat; a job whose lease lapsed is claimed again by another replica.
 */
export interface JobQueue {
  /** This replica's id, as leases and `taken-over` events name it. */
  readonly replica: string;
  /** The oldest job that is queued, or running under a lapsed lease; none when there is none. */
  claim(leaseMs: number): Promise<ClaimedJob | undefined>;
  /** Renews this replica's leases: the jobs it no longer holds, and those a client asked to cancel. */
  renew(ids: string[], leaseMs: number): Promise<{ lost: string[]; cancel: string[] }>;
  /**
   * Writes a job's end and its last event (`job-finish`) together while this replica holds it;
   * false when it no longer does (nothing written).
   */
  finish(id: string, update: JobUpdate, last: JobEventRecord): Promise<boolean>;
  /** Gives a running job back to the queue (a graceful shutdown): queued again, its owner kept for the takeover's event. */
  release(id: string): Promise<void>;
  /** Cancels a job nobody has claimed; false when it is no longer queued. */
  cancelQueued(id: string, error: ErrorRecord): Promise<JobRecord | undefined>;
  /** Asks the replica holding the job to stop it (a NOTIFY, and a flag its heartbeat reads). */
  requestCancel(id: string): Promise<void>;
  /** Tells idle replicas that a job is waiting. */
  announce(): Promise<void>;
  /** Jobs waiting for a replica. */
  depth(): Promise<number>;
  /** Hears notices until the returned function is called; a dropped connection is re-made. */
  listen(onNotice: (notice: QueueNotice) => void): Promise<() => Promise<void>>;
}
