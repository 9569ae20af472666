/**
 * The Postgres job store: the same tables as SQLite's (postgres-migrations.ts), on a connection
 * pool the shared queue (postgres-queue.ts) uses too. A merge (updateJob, putCandidate) is one
 * statement, so two replicas writing one row never lose each other's fields.
 */
import pg from 'pg';
import { wnwError } from '../errors.js';
import { migrate } from './postgres-migrations.js';
import { redactStoreUrl } from './store-url.js';
import { type CandidateRow, JOB_STATUSES, type JobRow, json, toCandidate, toJob } from './store-rows.js';
import {
  TERMINAL_JOB_STATUSES,
  type CandidateUpdate,
  type JobEventRecord,
  type JobStatus,
  type JobStore,
  type JobUpdate,
  type ListJobsOptions,
} from './types.js';

export const JOB_COLUMNS = 'id, kind, status, request, progress, result, error, created_at, updated_at';
const CANDIDATE_FIELDS = ['status', 'trajectory', 'score', 'verify', 'error', 'reused_from'] as const;
export const now = () => new Date().toISOString();

/**
 * The SET list of a job update: only the fields given, each bound after `values` (whose $2 is the
 * time), so one UPDATE merges them into the row as it is at that moment.
 */
export function jobUpdateSets(update: JobUpdate, values: unknown[]): string {
  const sets = ['updated_at = $2'];
  const set = (column: string, value: unknown) => {
    values.push(value);
    sets.push(`${column} = $${values.length}`);
  };
  if (update.status !== undefined) set('status', update.status);
  if (update.progress !== undefined) set('progress', JSON.stringify(update.progress));
  if ('result' in update) set('result', json(update.result));
  if ('error' in update) set('error', json(update.error));
  return sets.join(', ');
}

export interface PostgresStore extends JobStore {
  /** The pool the queue shares (one per replica). */
  readonly pool: pg.Pool;
  /** The store's URL without its credentials: what logs, errors and /readyz may show. */
  readonly where: string;
  /** One round trip to the database; rejects when it is unreachable. */
  ping(): Promise<void>;
}

/** A store error that names the database without its password. */
export function storeError(error: unknown, where: string): Error {
  if (error instanceof Error && 'code' in error && typeof error.code === 'string' && error.code.startsWith('WNW_ERR_')) return error;
  const message = error instanceof Error ? error.message : String(error);
  return wnwError('WNW_ERR_STORE_UNAVAILABLE', `the job store at ${where} failed: ${message}`, {
    details: { store: where },
    retryable: true,
  });
}

/** Connects, applies the migrations the database lacks, and returns the store. */
export async function createPostgresStore(url: string, options: { poolSize?: number } = {}): Promise<PostgresStore> {
  const where = redactStoreUrl(url);
  const pool = new pg.Pool({ connectionString: url, max: options.poolSize ?? 10, connectionTimeoutMillis: 5000 });
  // An idle connection the server drops (restart, network) is replaced on the next query.
  pool.on('error', () => undefined);
  const query = async <R extends pg.QueryResultRow>(sql: string, values: unknown[] = []): Promise<pg.QueryResult<R>> => {
    try {
      return await pool.query<R>(sql, values);
    } catch (error) {
      throw storeError(error, where);
    }
  };
  try {
    const client = await pool.connect();
    try {
      await migrate(client);
    } finally {
      client.release();
    }
  } catch (error) {
    await pool.end().catch(() => undefined);
    throw storeError(error, where);
  }

  const getJob = async (id: string) => {
    const { rows } = await query<JobRow>(`SELECT ${JOB_COLUMNS} FROM jobs WHERE id = $1`, [id]);
    return rows[0] ? toJob(rows[0]) : undefined;
  };

  let closed: Promise<void> | undefined;
  const store: PostgresStore = {
    pool,
    where,
    async ping() {
      await query('SELECT 1');
    },
    async createJob(job) {
      const time = now();
      const { rows } = await query<JobRow>(
        `INSERT INTO jobs (id, kind, status, request, progress, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $6) RETURNING ${JOB_COLUMNS}`,
        [job.id, job.kind, job.status ?? 'queued', JSON.stringify(job.request ?? null), JSON.stringify(job.progress ?? {}), time],
      );
      return toJob(rows[0]!);
    },
    async updateJob(id, update: JobUpdate) {
      const values: unknown[] = [id, now()];
      const { rows } = await query<JobRow>(
        `UPDATE jobs SET ${jobUpdateSets(update, values)} WHERE id = $1 RETURNING ${JOB_COLUMNS}`,
        values,
      );
      if (!rows[0]) throw wnwError('WNW_ERR_JOB_NOT_FOUND', `job ${id} not found`, { details: { job_id: id } });
      return toJob(rows[0]);
    },
    getJob,
    async listJobs(options: ListJobsOptions = {}) {
      const where: string[] = [];
      const values: unknown[] = [];
      const bind = (value: unknown) => {
        values.push(value);
        return `$${values.length}`;
      };
      if (options.status) where.push(`status = ${bind(options.status)}`);
      if (options.kind) where.push(`kind = ${bind(options.kind)}`);
      if (options.createdAfter) where.push(`created_at > ${bind(options.createdAfter)}`);
      if (options.before) {
        const at = bind(options.before.created_at);
        where.push(`(created_at < ${at} OR (created_at = ${at} AND id < ${bind(options.before.id)}))`);
      }
      const sql = `SELECT ${JOB_COLUMNS} FROM jobs${where.length ? ` WHERE ${where.join(' AND ')}` : ''}
        ORDER BY created_at DESC, id DESC LIMIT ${bind(options.limit ?? 100)}`;
      return (await query<JobRow>(sql, values)).rows.map(toJob);
    },
    async countJobsByStatus() {
      const counts = Object.fromEntries(JOB_STATUSES.map((status) => [status, 0])) as Record<JobStatus, number>;
      const { rows } = await query<{ status: string; count: string }>('SELECT status, COUNT(*) AS count FROM jobs GROUP BY status');
      for (const row of rows) counts[row.status as JobStatus] = Number(row.count);
      return counts;
    },
    async deleteJob(id) {
      return ((await query('DELETE FROM jobs WHERE id = $1', [id])).rowCount ?? 0) > 0;
    },
    async purgeFinished(options) {
      const conditions: string[] = [];
      const values: unknown[] = [TERMINAL_JOB_STATUSES];
      if (options.finishedBefore !== undefined) {
        values.push(options.finishedBefore);
        conditions.push(`updated_at < $${values.length}`);
      }
      if (options.keepNewest !== undefined) {
        values.push(options.keepNewest);
        conditions.push(`id IN (SELECT id FROM jobs WHERE status = ANY($1) ORDER BY created_at DESC, id DESC OFFSET $${values.length})`);
      }
      if (conditions.length === 0) return [];
      const { rows } = await query<{ id: string }>(
        `DELETE FROM jobs WHERE status = ANY($1) AND (${conditions.join(' OR ')}) RETURNING id`,
        values,
      );
      return rows.map((row) => row.id);
    },
    async putCandidate(jobId, index, update: CandidateUpdate) {
      const time = now();
      const given = CANDIDATE_FIELDS.filter((field) => field in update);
      const value = (field: (typeof CANDIDATE_FIELDS)[number]) => {
        const v = update[field];
        return field === 'status' ? (v ?? 'pending') : json(v);
      };
      const values: unknown[] = [
        jobId,
        index,
        time,
        ...CANDIDATE_FIELDS.map((field) => (given.includes(field) ? value(field) : field === 'status' ? 'pending' : null)),
      ];
      // Only the fields given are merged into an existing row; a new row starts pending and empty.
      const updates = [...given.map((field) => `${field} = EXCLUDED.${field}`), 'updated_at = EXCLUDED.updated_at'];
      const { rows } = await query<CandidateRow>(
        `INSERT INTO candidates (job_id, idx, updated_at, ${CANDIDATE_FIELDS.join(', ')}) VALUES (${values.map((_, i) => `$${i + 1}`).join(', ')})
         ON CONFLICT (job_id, idx) DO UPDATE SET ${updates.join(', ')} RETURNING *`,
        values,
      );
      return toCandidate(rows[0]!);
    },
    async listCandidates(jobId) {
      return (await query<CandidateRow>('SELECT * FROM candidates WHERE job_id = $1 ORDER BY idx', [jobId])).rows.map(toCandidate);
    },
    async appendEvent(jobId, event: JobEventRecord) {
      // The NOTIFY goes out with the commit: a replica that hears it finds the event stored.
      await query(
        `WITH added AS (INSERT INTO job_events (job_id, seq, type, event) VALUES ($1, $2, $3, $4) RETURNING job_id)
         SELECT pg_notify('winnower_events', $1 || ' ' || $2::text) FROM added`,
        [jobId, event.seq, event.type, JSON.stringify(event)],
      );
    },
    async listEvents(jobId, afterSeq = -1) {
      const { rows } = await query<{ event: string }>('SELECT event FROM job_events WHERE job_id = $1 AND seq > $2 ORDER BY seq', [
        jobId,
        afterSeq,
      ]);
      return rows.map((row) => JSON.parse(row.event) as JobEventRecord);
    },
    async markInterrupted() {
      // A shared store's unfinished jobs belong to the queue, not to this process: queued ones wait
      // for any replica, running ones are taken over when their lease lapses (postgres-queue.ts).
      return [];
    },
    close() {
      // Idempotent, as SQLite's close is.
      closed ??= pool.end();
      return closed;
    },
  };
  return store;
}
