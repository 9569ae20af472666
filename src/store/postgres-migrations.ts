/**
 * The Postgres schema as numbered migrations, applied in order at start-up. Several replicas may
 * start at once: each takes one transaction-scoped advisory lock first, so exactly one applies a
 * migration and the others then find it recorded in `winnower_migrations`. A migration is never
 * edited once released; a change is a new one.
 */
import type { PoolClient } from 'pg';

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'jobs, candidates and events',
    // JSON kept as text, as the SQLite store keeps it: a request is returned as it was received.
    // Times are ISO strings and ids compare byte by byte (COLLATE "C"), so keyset paging orders
    // them as SQLite does whatever the database's locale.
    sql: `
      CREATE TABLE jobs (
        id text COLLATE "C" PRIMARY KEY,
        kind text NOT NULL,
        status text NOT NULL,
        request text NOT NULL,
        progress text NOT NULL DEFAULT '{}',
        result text,
        error text,
        created_at text COLLATE "C" NOT NULL,
        updated_at text COLLATE "C" NOT NULL
      );
      CREATE INDEX jobs_status ON jobs (status);
      CREATE INDEX jobs_created ON jobs (created_at, id);
      CREATE TABLE candidates (
        job_id text NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
        idx integer NOT NULL,
        status text NOT NULL,
        trajectory text,
        score text,
        verify text,
        error text,
        updated_at text NOT NULL,
        PRIMARY KEY (job_id, idx)
      );
      CREATE TABLE job_events (
        job_id text NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
        seq integer NOT NULL,
        type text NOT NULL,
        event text NOT NULL,
        PRIMARY KEY (job_id, seq)
      );`,
  },
  {
    version: 2,
    name: 'leases of the shared queue',
    // owner: the replica running the job (kept after a hand-back, so a takeover can name it);
    // lease_until: when another replica may take it over; cancel_requested: a DELETE that reached
    // a replica other than the owner, seen by the owner's heartbeat even if the NOTIFY was missed.
    sql: `
      ALTER TABLE jobs ADD COLUMN owner text;
      ALTER TABLE jobs ADD COLUMN lease_until timestamptz;
      ALTER TABLE jobs ADD COLUMN cancel_requested boolean NOT NULL DEFAULT false;
      ALTER TABLE jobs ADD COLUMN takeovers integer NOT NULL DEFAULT 0;
      CREATE INDEX jobs_claimable ON jobs (created_at, id) WHERE status IN ('queued', 'running');`,
  },
  {
    version: 3,
    name: 'where a retry reused a candidate from',
    // JSON text as the other candidate columns: { job_id, index } of the earlier job's candidate.
    sql: 'ALTER TABLE candidates ADD COLUMN reused_from text;',
  },
];

/** An arbitrary constant naming winnower's migration lock among the database's advisory locks. */
const MIGRATION_LOCK = 0x77_6e_77_31;

/** Applies the migrations this database lacks; returns the versions applied by this call. */
export async function migrate(client: PoolClient, migrations: readonly Migration[] = MIGRATIONS): Promise<number[]> {
  const applied: number[] = [];
  await client.query('BEGIN');
  try {
    await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    await client.query(
      'CREATE TABLE IF NOT EXISTS winnower_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())',
    );
    const { rows } = await client.query<{ version: number }>('SELECT version FROM winnower_migrations');
    const have = new Set(rows.map((row) => row.version));
    for (const migration of migrations) {
      if (have.has(migration.version)) continue;
      await client.query(migration.sql);
      await client.query('INSERT INTO winnower_migrations (version, name) VALUES ($1, $2)', [migration.version, migration.name]);
      applied.push(migration.version);
    }
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
  return applied;
}
