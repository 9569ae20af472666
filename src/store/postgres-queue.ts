/**
 * The shared job queue on Postgres: a replica claims the oldest waiting job with
 * `SELECT … FOR UPDATE SKIP LOCKED` (two replicas never claim one job), holds it under a lease it
 * renews, and writes its end only while it still holds it. A job whose lease lapsed (its replica
 * died) is claimable again: that is a takeover. Notices travel by LISTEN/NOTIFY on three channels:
 * `winnower_jobs` (a job is waiting), `winnower_events` (a job's event was stored: "<id> <seq>")
 * and `winnower_cancel` (a DELETE for "<id>").
 */
import pg from 'pg';
import { JOB_COLUMNS, jobUpdateSets, now, type PostgresStore, storeError } from './postgres-store.js';
import { type JobRow, toJob } from './store-rows.js';
import type { ClaimedJob, JobQueue, QueueNotice } from './types.js';

const CHANNELS = ['winnower_jobs', 'winnower_events', 'winnower_cancel'] as const;
/** How long a dropped LISTEN connection waits before it is made again. */
const RELISTEN_MS = 500;

export function createPostgresQueue(store: PostgresStore, url: string, replica: string): JobQueue {
  const { pool, where } = store;
  const query = async <R extends pg.QueryResultRow>(sql: string, values: unknown[] = []): Promise<pg.QueryResult<R>> => {
    try {
      return await pool.query<R>(sql, values);
    } catch (error) {
      throw storeError(error, where);
    }
  };
  const lease = (leaseMs: number) => `now() + ${Math.round(leaseMs)} * interval '1 millisecond'`;

  return {
    replica,
    async claim(leaseMs) {
      const { rows } = await query<JobRow & { previous: string | null; cancel_requested: boolean }>(
        `WITH next AS (
           SELECT id, owner FROM jobs
           WHERE status = 'queued' OR (status = 'running' AND lease_until < now())
           ORDER BY created_at, id LIMIT 1
           FOR UPDATE SKIP LOCKED)
         UPDATE jobs SET status = 'running', owner = $1, lease_until = ${lease(leaseMs)}, updated_at = $2,
           takeovers = takeovers + (CASE WHEN next.owner IS NULL THEN 0 ELSE 1 END)
         FROM next WHERE jobs.id = next.id
         RETURNING ${JOB_COLUMNS.split(', ')
           .map((column) => `jobs.${column}`)
           .join(', ')}, next.owner AS previous, jobs.cancel_requested`,
        [replica, now()],
      );
      const row = rows[0];
      if (!row) return undefined;
      const claimed: ClaimedJob = { job: toJob(row), previousOwner: row.previous, cancelRequested: row.cancel_requested };
      return claimed;
    },
    async renew(ids, leaseMs) {
      if (ids.length === 0) return { lost: [], cancel: [] };
      const { rows } = await query<{ id: string; cancel_requested: boolean }>(
        `UPDATE jobs SET lease_until = ${lease(leaseMs)} WHERE id = ANY($1) AND owner = $2 AND status = 'running' RETURNING id, cancel_requested`,
        [ids, replica],
      );
      const held = new Set(rows.map((row) => row.id));
      return { lost: ids.filter((id) => !held.has(id)), cancel: rows.filter((row) => row.cancel_requested).map((row) => row.id) };
    },
    async finish(id, update, last) {
      const values: unknown[] = [id, now(), replica];
      const sets = jobUpdateSets(update, values);
      values.push(last.seq, last.type, JSON.stringify(last));
      const at = values.length - 2;
      // One statement: a replica killed at any moment leaves either the job running (another takes
      // it over) or its end and its last event both stored, never a status without its job-finish.
      const { rowCount } = await query(
        `WITH ended AS (UPDATE jobs SET ${sets}, lease_until = NULL WHERE id = $1 AND owner = $3 AND status = 'running' RETURNING id),
         added AS (INSERT INTO job_events (job_id, seq, type, event) SELECT id, $${at}, $${at + 1}, $${at + 2} FROM ended RETURNING job_id)
         SELECT pg_notify('winnower_events', job_id || ' ' || $${at}::text) FROM added`,
        values,
      );
      return (rowCount ?? 0) > 0;
    },
    async release(id) {
      await query(
        `WITH back AS (UPDATE jobs SET status = 'queued', lease_until = NULL, updated_at = $3 WHERE id = $1 AND owner = $2 AND status = 'running' RETURNING id)
         SELECT pg_notify('winnower_jobs', id) FROM back`,
        [id, replica, now()],
      );
    },
    async cancelQueued(id, error) {
      // Its log ends as a running job's would, in the same statement (a job handed back may have
      // events already: the job-finish follows them).
      const time = now();
      const { rows } = await query<JobRow>(
        `WITH ended AS (UPDATE jobs SET status = 'cancelled', error = $2, updated_at = $3 WHERE id = $1 AND status = 'queued' RETURNING ${JOB_COLUMNS}),
         next AS (SELECT COALESCE(MAX(seq) + 1, 0) AS seq FROM job_events WHERE job_id = $1),
         added AS (INSERT INTO job_events (job_id, seq, type, event)
           SELECT ended.id, next.seq, 'job-finish',
             json_build_object('type', 'job-finish', 'status', 'cancelled', 'error', $4::text, 'seq', next.seq, 'time', $3::text)::text
           FROM ended, next RETURNING job_id, seq),
         told AS (SELECT pg_notify('winnower_events', job_id || ' ' || seq::text) FROM added)
         SELECT ended.*, (SELECT COUNT(*) FROM told) AS told FROM ended`,
        [id, JSON.stringify(error), time, error.message],
      );
      return rows[0] ? toJob(rows[0]) : undefined;
    },
    async requestCancel(id) {
      await query(
        `WITH asked AS (UPDATE jobs SET cancel_requested = true WHERE id = $1 AND status IN ('queued', 'running') RETURNING id)
         SELECT pg_notify('winnower_cancel', id) FROM asked`,
        [id],
      );
    },
    async announce() {
      await query("SELECT pg_notify('winnower_jobs', '')");
    },
    async depth() {
      const { rows } = await query<{ count: string }>("SELECT COUNT(*) AS count FROM jobs WHERE status = 'queued'");
      return Number(rows[0]?.count ?? 0);
    },
    async listen(onNotice) {
      let client: pg.Client | undefined;
      let stopped = false;
      let retry: NodeJS.Timeout | undefined;
      const connect = async (): Promise<void> => {
        const next = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
        let gone = false;
        // A dropped connection (a Postgres restart) is made again until `stopped`.
        const drop = () => {
          if (gone) return;
          gone = true;
          if (client === next) client = undefined;
          next.end().catch(() => undefined);
          if (stopped) return;
          retry = setTimeout(() => void connect().catch(() => undefined), RELISTEN_MS);
          retry.unref();
        };
        next.on('error', drop);
        next.on('end', drop);
        next.on('notification', (message) => {
          const notice = toNotice(message.channel, message.payload ?? '');
          if (notice) onNotice(notice);
        });
        try {
          await next.connect();
          for (const channel of CHANNELS) await next.query(`LISTEN ${channel}`);
        } catch (error) {
          drop();
          throw error;
        }
        client = next;
        // Whatever was announced while no connection listened is looked for now.
        onNotice({ kind: 'queued' });
      };
      try {
        await connect();
      } catch (error) {
        stopped = true;
        clearTimeout(retry);
        throw storeError(error, where);
      }
      return async () => {
        stopped = true;
        clearTimeout(retry);
        await client?.end().catch(() => undefined);
      };
    },
  };
}

function toNotice(channel: string, payload: string): QueueNotice | undefined {
  if (channel === 'winnower_jobs') return { kind: 'queued' };
  if (channel === 'winnower_cancel') return { kind: 'cancel', jobId: payload };
  if (channel === 'winnower_events') {
    const space = payload.lastIndexOf(' ');
    return { kind: 'event', jobId: payload.slice(0, space), seq: Number(payload.slice(space + 1)) };
  }
  return undefined;
}
