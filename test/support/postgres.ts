/**
 * The real Postgres server the shared-store tests run against: `WINNOWER_TEST_POSTGRES_URL`, set
 * by `.ci/run` from `.ci/postgres.sh` (start one locally the same way). Its role may create
 * databases: each test file gets its own, dropped at the end. Without the variable these tests
 * skip, naming it.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { describe } from 'vitest';

export const POSTGRES_URL_VARIABLE = 'WINNOWER_TEST_POSTGRES_URL';
export const POSTGRES_URL = process.env[POSTGRES_URL_VARIABLE] || undefined;

/** `describe` when the server is there, else a skipped suite whose name says which variable is missing. */
export function describeWithPostgres(name: string, body: () => void): void {
  if (POSTGRES_URL) describe(name, body);
  else describe.skip(`${name} (skipped: ${POSTGRES_URL_VARIABLE} is not set; .ci/postgres.sh start DIR prints one)`, body);
}

/** A new, empty database on the test server; its URL and a function that drops it. */
export async function freshDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const base = new URL(POSTGRES_URL!);
  const name = `wnw_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: POSTGRES_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(base);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const client = new pg.Client({ connectionString: POSTGRES_URL });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await client.end();
    },
  };
}
