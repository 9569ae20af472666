/**
 * The SQLite job store (better-sqlite3, WAL), one file in the data directory. Its internals stay
 * synchronous; the seam's promises are settled from them with nothing awaited in between, so
 * writes land in the order they were called.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { wnwError } from '../errors.js';
import { preparePrivateDatabase } from './private-files.js';
import { type CandidateRow, JOB_STATUSES, type JobRow, json, toCandidate, toJob } from './store-rows.js';
import {
  TERMINAL_JOB_STATUSES,
  type CandidateRecord,
  type CandidateUpdate,
  type JobEventRecord,
  type JobStatus,
  type JobStore,
  type JobUpdate,
  type ListJobsOptions,
} from './types.js';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS jobs (
  id TEXT PRIMARY KEY,
  kind TEXT NOT NULL,
  status TEXT NOT NULL,
  request TEXT NOT NULL,
  progress TEXT NOT NULL DEFAULT '{}',
  result TEXT,
  error TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS jobs_status ON jobs(status);
CREATE INDEX IF NOT EXISTS jobs_created ON jobs(created_at, id);
CREATE TABLE IF NOT EXISTS candidates (
  job_id TEXT NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
  idx INTEGER NOT NULL,
  status TEXT NOT NULL,
  trajectory TEXT,
  score TEXT,
  verify TEXT,
  error TEXT,
  reused_from TEXT,
  updated_at TEXT NOT NULL,
  PRIMARY KEY (job_id, idx)
);
CREATE TABLE IF NOT EXISTS job_events (
  job_id TEXT NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
  seq INTEGER NOT NULL,
  type TEXT NOT NULL,
  event TEXT NOT NULL,
  PRIMARY KEY (job_id, seq)
);
`;

const TERMINAL = TERMINAL_JOB_STATUSES.map((status) => `'${status}'`).join(', ');

/** The SELECT of one page of jobs: filters and the keyset cursor as bound values, never spliced in. */
function listJobsQuery(options: ListJobsOptions): { sql: string; values: unknown[] } {
  const where: string[] = [];
  const values: unknown[] = [];
  const add = (condition: string, ...bound: unknown[]) => {
    where.push(condition);
    values.push(...bound);
  };
  if (options.status) add('status = ?', options.status);
  if (options.kind) add('kind = ?', options.kind);
  if (options.createdAfter) add('created_at > ?', options.createdAfter);
  if (options.before)
    add('(created_at < ? OR (created_at = ? AND id < ?))', options.before.created_at, options.before.created_at, options.before.id);
  values.push(options.limit ?? 100);
  return {
    sql: `SELECT * FROM jobs${where.length ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY created_at DESC, id DESC LIMIT ?`,
    values,
  };
}

/**
 * Columns added after a table was first released: CREATE TABLE IF NOT EXISTS leaves an older
 * database's table as it was, so each is added here when missing (null in the rows it already has).
 */
const ADDED_COLUMNS: ReadonlyArray<{ table: string; column: string; type: string }> = [
  { table: 'candidates', column: 'reused_from', type: 'TEXT' },
];

function addMissingColumns(db: Database.Database): void {
  for (const { table, column, type } of ADDED_COLUMNS) {
    const have = db.prepare<[], { name: string }>(`SELECT name FROM pragma_table_info('${table}')`).all();
    if (!have.some((row) => row.name === column)) db.exec(`ALTER TABLE ${table} ADD COLUMN ${column} ${type}`);
  }
}

/** The seam with every answer given at once. */
type SyncJobStore = { [K in keyof JobStore]: JobStore[K] extends (...args: infer A) => Promise<infer R> ? (...args: A) => R : never };

/** Opens (or creates) `<dataDir>/winnower.db`; `:memory:` for an in-memory store. */
export function createSqliteStore(dataDir: string): JobStore {
  const sync = createSyncSqliteStore(dataDir);
  const wrapped = {} as Record<keyof JobStore, unknown>;
  for (const name of Object.keys(sync) as Array<keyof JobStore>) {
    const method = sync[name] as (...args: unknown[]) => unknown;
    // An async function runs its body at the call: the write happens now, a throw becomes a rejection.
    wrapped[name] = async (...args: unknown[]) => method(...args);
  }
  return wrapped as JobStore;
}

function createSyncSqliteStore(dataDir: string): SyncJobStore {
  let file = ':memory:';
  if (dataDir !== ':memory:') {
    file = join(dataDir, 'winnower.db');
    preparePrivateDatabase(dataDir, file);
  }
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  db.exec(SCHEMA);
  addMissingColumns(db);

  const statements = {
    insertJob: db.prepare(
      'INSERT INTO jobs (id, kind, status, request, progress, created_at, updated_at) VALUES (@id, @kind, @status, @request, @progress, @now, @now)',
    ),
    getJob: db.prepare<[string], JobRow>('SELECT * FROM jobs WHERE id = ?'),
    updateJob: db.prepare(
      'UPDATE jobs SET status = @status, progress = @progress, result = @result, error = @error, updated_at = @now WHERE id = @id',
    ),
    countByStatus: db.prepare<[], { status: string; count: number }>('SELECT status, COUNT(*) AS count FROM jobs GROUP BY status'),
    deleteJob: db.prepare<[string]>('DELETE FROM jobs WHERE id = ?'),
    finishedBefore: db.prepare<[string], { id: string }>(`SELECT id FROM jobs WHERE status IN (${TERMINAL}) AND updated_at < ?`),
    finishedBeyond: db.prepare<[number], { id: string }>(
      `SELECT id FROM jobs WHERE status IN (${TERMINAL}) ORDER BY created_at DESC, id DESC LIMIT -1 OFFSET ?`,
    ),
    getCandidate: db.prepare<[string, number], CandidateRow>('SELECT * FROM candidates WHERE job_id = ? AND idx = ?'),
    upsertCandidate: db.prepare(
      `INSERT INTO candidates (job_id, idx, status, trajectory, score, verify, error, reused_from, updated_at)
       VALUES (@job_id, @idx, @status, @trajectory, @score, @verify, @error, @reused_from, @now)
       ON CONFLICT (job_id, idx) DO UPDATE SET status = excluded.status, trajectory = excluded.trajectory,
         score = excluded.score, verify = excluded.verify, error = excluded.error, reused_from = excluded.reused_from,
         updated_at = excluded.updated_at`,
    ),
    listCandidates: db.prepare<[string], CandidateRow>('SELECT * FROM candidates WHERE job_id = ? ORDER BY idx'),
    unfinished: db.prepare<[], JobRow>("SELECT * FROM jobs WHERE status IN ('queued', 'running')"),
    insertEvent: db.prepare('INSERT INTO job_events (job_id, seq, type, event) VALUES (@job_id, @seq, @type, @event)'),
    listEvents: db.prepare<[string, number], { event: string }>('SELECT event FROM job_events WHERE job_id = ? AND seq > ? ORDER BY seq'),
    lastEventSeq: db.prepare<[string], { seq: number | null }>('SELECT MAX(seq) AS seq FROM job_events WHERE job_id = ?'),
  };

  const now = () => new Date().toISOString();
  // One prepared statement per combination of filters (at most 16).
  const listStatements = new Map<string, Database.Statement<unknown[], JobRow>>();

  const store: SyncJobStore = {
    createJob(job) {
      statements.insertJob.run({
        id: job.id,
        kind: job.kind,
        status: job.status ?? 'queued',
        request: JSON.stringify(job.request ?? null),
        progress: JSON.stringify(job.progress ?? {}),
        now: now(),
      });
      return store.getJob(job.id)!;
    },
    updateJob(id, update: JobUpdate) {
      const current = store.getJob(id);
      if (!current) throw wnwError('WNW_ERR_JOB_NOT_FOUND', `job ${id} not found`, { details: { job_id: id } });
      const next = { ...current, ...update };
      statements.updateJob.run({
        id,
        status: next.status,
        progress: JSON.stringify(next.progress),
        result: json(next.result),
        error: json(next.error),
        now: now(),
      });
      return store.getJob(id)!;
    },
    getJob(id) {
      const row = statements.getJob.get(id);
      return row ? toJob(row) : undefined;
    },
    listJobs(options = {}) {
      const { sql, values } = listJobsQuery(options);
      let statement = listStatements.get(sql);
      if (!statement) listStatements.set(sql, (statement = db.prepare<unknown[], JobRow>(sql)));
      return statement.all(...values).map(toJob);
    },
    countJobsByStatus() {
      const counts = Object.fromEntries(JOB_STATUSES.map((status) => [status, 0])) as Record<JobStatus, number>;
      for (const row of statements.countByStatus.all()) counts[row.status as JobStatus] = row.count;
      return counts;
    },
    deleteJob(id) {
      return statements.deleteJob.run(id).changes > 0;
    },
    purgeFinished(options) {
      return db.transaction(() => {
        const ids = new Set<string>();
        if (options.finishedBefore !== undefined) for (const row of statements.finishedBefore.all(options.finishedBefore)) ids.add(row.id);
        if (options.keepNewest !== undefined) for (const row of statements.finishedBeyond.all(options.keepNewest)) ids.add(row.id);
        for (const id of ids) statements.deleteJob.run(id);
        return [...ids];
      })();
    },
    putCandidate(jobId, index, update: CandidateUpdate) {
      const row = statements.getCandidate.get(jobId, index);
      const current: Omit<CandidateRecord, 'updated_at'> = row
        ? toCandidate(row)
        : { job_id: jobId, index, status: 'pending', trajectory: null, score: null, verify: null, error: null, reused_from: null };
      const next = { ...current, ...update };
      statements.upsertCandidate.run({
        job_id: jobId,
        idx: index,
        status: next.status,
        trajectory: json(next.trajectory),
        score: json(next.score),
        verify: json(next.verify),
        error: json(next.error),
        reused_from: json(next.reused_from),
        now: now(),
      });
      return toCandidate(statements.getCandidate.get(jobId, index)!);
    },
    listCandidates(jobId) {
      return statements.listCandidates.all(jobId).map(toCandidate);
    },
    appendEvent(jobId, event: JobEventRecord) {
      statements.insertEvent.run({ job_id: jobId, seq: event.seq, type: event.type, event: JSON.stringify(event) });
    },
    listEvents(jobId, afterSeq = -1) {
      return statements.listEvents.all(jobId, afterSeq).map((row) => JSON.parse(row.event) as JobEventRecord);
    },
    markInterrupted() {
      const ids: string[] = [];
      const error = { code: 'WNW_ERR_JOB_STATE', message: 'the server stopped while this job was running; partial results are kept' };
      db.transaction(() => {
        for (const row of statements.unfinished.all()) {
          ids.push(row.id);
          // Nothing of that process runs any more: the counters say so.
          const progress = toJob(row).progress;
          store.updateJob(row.id, {
            status: 'interrupted',
            error,
            progress: 'rollouts_running' in progress ? { ...progress, rollouts_running: 0 } : progress,
          });
          for (const candidate of store.listCandidates(row.id)) {
            if (candidate.status === 'pending' || candidate.status === 'running') {
              store.putCandidate(row.id, candidate.index, {
                status: 'cancelled',
                error: { code: 'WNW_ERR_OP_ABORTED', message: 'interrupted by a server restart' },
              });
            }
          }
          // The event log ends as a live stream would have: with the job's end.
          const seq = (statements.lastEventSeq.get(row.id)?.seq ?? -1) + 1;
          store.appendEvent(row.id, { type: 'job-finish', status: 'interrupted', error: error.message, seq, time: now() });
        }
      })();
      return ids;
    },
    close() {
      if (db.open) db.close();
    },
  };
  return store;
}
