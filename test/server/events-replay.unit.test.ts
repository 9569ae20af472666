/**
 * A job's events are kept with it: a client that connects or reconnects after the job ended, or
 * after a restart, gets the events after its `Last-Event-ID` (all of them without one), with
 * their ids, as it would have live. `Last-Event-ID` is decimal digits: one past the last event
 * replays nothing, anything else (`abc`, `-1`, `0x2`) is a 400 naming the header (docs/api.md).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPolicyFactory } from '../../src/rollout/policy/policy-factory.js';
import { createLocalProvider } from '../../src/sandbox/providers/local/provider.js';
import type { SandboxProvider } from '../../src/sandbox/types.js';
import { buildApp } from '../../src/server/app.js';
import type { JobEventBody } from '../../src/solve/events.js';
import { JobManager } from '../../src/solve/job-manager.js';
import { createSqliteStore } from '../../src/store/sqlite-store.js';
import { parseSse } from '../support/sse.js';

/** What a small job emits: the shape of a real one, without sandboxes. */
const SCRIPT: JobEventBody[] = [
  { type: 'job-start', n: 1, waves: [1] },
  { type: 'rollout-start', index: 0, wave: 0 },
  { type: 'rollout-finish', index: 0, status: 'finished', exit: 'submitted', steps: 2, patch_bytes: 10 },
  { type: 'score-available', index: 0, value: 0.5 },
  { type: 'selection', chosen_index: 0, trajectory_id: 'j/0', reason: 'only candidate' },
];
const TYPES = [...SCRIPT.map((event) => event.type), 'job-finish'];

describe('SSE replay of stored events', () => {
  let dataDir: string;
  let sandboxes: SandboxProvider;

  beforeAll(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'wnw-events-'));
    sandboxes = createLocalProvider();
  });
  afterAll(async () => {
    await sandboxes.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  async function start() {
    const store = createSqliteStore(dataDir);
    await store.markInterrupted();
    const jobs = new JobManager(store);
    const app = await buildApp({ jobs, store, solveDeps: { sandboxes, store, createPolicy: createPolicyFactory() } });
    return {
      store,
      jobs,
      app,
      events: async (jobId: string, lastEventId?: string) => {
        const response = await app.inject({
          url: `/jobs/${jobId}/events`,
          headers: lastEventId === undefined ? {} : { 'last-event-id': lastEventId },
        });
        expect(response.statusCode).toBe(200);
        return parseSse(response.body);
      },
      refused: async (jobId: string, lastEventId: string) => {
        const response = await app.inject({ url: `/jobs/${jobId}/events`, headers: { 'last-event-id': lastEventId } });
        expect(response.statusCode, response.body).toBe(400);
        return response.json().error as { code: string; message: string; details: { field: string } };
      },
      async close() {
        await app.close();
        store.close();
      },
    };
  }

  async function finishedJob(server: Awaited<ReturnType<typeof start>>): Promise<string> {
    const job = await server.jobs.start('solve', {}, async (_id, { emit }) => {
      for (const event of SCRIPT) emit(event);
      return { ok: true };
    });
    await server.jobs.wait(job.id);
    return job.id;
  }

  it('gives a client arriving after the end every event, with its id', async () => {
    const server = await start();
    try {
      const jobId = await finishedJob(server);
      const events = await server.events(jobId);
      expect(events.map((event) => event.event)).toEqual(TYPES);
      expect(events.map((event) => event.id)).toEqual(TYPES.map((_, index) => index));
      expect(events.at(-1)!.data).toMatchObject({ type: 'job-finish', status: 'succeeded', seq: TYPES.length - 1 });
    } finally {
      await server.close();
    }
  });

  it('resumes after Last-Event-ID once the job has ended, and says nothing more to a client that saw the end', async () => {
    const server = await start();
    try {
      const jobId = await finishedJob(server);
      const resumed = await server.events(jobId, '2');
      expect(resumed.map((event) => event.id)).toEqual([3, 4, 5]);
      expect(resumed.map((event) => event.event)).toEqual(['score-available', 'selection', 'job-finish']);
      expect(await server.events(jobId, String(TYPES.length - 1))).toEqual([]);
    } finally {
      await server.close();
    }
  });

  it.each(['0x2', '1e0', '-1', '2.0', '+2', '2abc', 'abc', '1, 2'])(
    'refuses a Last-Event-ID that is not decimal digits, naming the header (%j)',
    async (header) => {
      const server = await start();
      try {
        const jobId = await finishedJob(server);
        const error = await server.refused(jobId, header);
        expect(error.code).toBe('WNW_ERR_INPUT_INVALID');
        expect(error.details.field).toBe('headers.last-event-id');
        expect(error.message.startsWith('headers.last-event-id:'), error.message).toBe(true);
      } finally {
        await server.close();
      }
    },
  );

  it('reads an empty Last-Event-ID as none, as server-sent events define it: every event', async () => {
    const server = await start();
    try {
      const jobId = await finishedJob(server);
      expect((await server.events(jobId, '')).map((event) => event.id)).toEqual(TYPES.map((_, index) => index));
    } finally {
      await server.close();
    }
  });

  it.each([
    ['one past the last', String(TYPES.length)],
    ['2^53 - 1', String(2 ** 53 - 1)],
    ['2^53', String(2 ** 53)],
    ['2^53 + 2', String(2 ** 53 + 2)],
    ['20 digits', '99999999999999999999'],
    ['400 digits', '9'.repeat(400)],
  ])('replays nothing for a Last-Event-ID past the last event (%s): the stream resumes after the end', async (_, header) => {
    const server = await start();
    try {
      const jobId = await finishedJob(server);
      expect(await server.events(jobId, header)).toEqual([]);
    } finally {
      await server.close();
    }
  });

  it('refuses a Last-Event-ID that is not decimal digits while the job runs too', async () => {
    const server = await start();
    try {
      let open!: () => void;
      const gate = new Promise<void>((resolve) => (open = resolve));
      const job = await server.jobs.start('solve', {}, async (_id, { emit }) => {
        for (const event of SCRIPT.slice(0, 3)) emit(event);
        await gate;
        return {};
      });
      expect((await server.refused(job.id, '0x2')).details.field).toBe('headers.last-event-id');
      // A client past the last event so far gets the events still to come, none twice.
      const reading = server.events(job.id, '2');
      await new Promise((resolve) => setTimeout(resolve, 50));
      open();
      expect((await reading).map((event) => event.id)).toEqual([3]);
    } finally {
      await server.close();
    }
  });

  it('replays the same events after a restart, and ends an interrupted job with its job-finish', async () => {
    const first = await start();
    const jobId = await finishedJob(first);
    const before = await first.events(jobId);
    // A job the process was running when it died: events stored up to the crash, no end.
    await first.store.createJob({ id: 'crashed', kind: 'solve', request: {}, status: 'running' });
    await first.store.appendEvent('crashed', { type: 'job-start', n: 1, waves: [1], seq: 0, time: new Date().toISOString() });
    await first.store.appendEvent('crashed', { type: 'rollout-start', index: 0, wave: 0, seq: 1, time: new Date().toISOString() });
    await first.close();

    const second = await start();
    try {
      expect(await second.events(jobId)).toEqual(before);
      const crashed = await second.events('crashed');
      expect(crashed.map((event) => [event.id, event.event])).toEqual([
        [0, 'job-start'],
        [1, 'rollout-start'],
        [2, 'job-finish'],
      ]);
      expect(crashed[2]!.data).toMatchObject({ status: 'interrupted' });
      expect(await second.events('crashed', '1')).toHaveLength(1);
    } finally {
      await second.close();
    }
  });

  it('still ends the stream of a job stored without events (an older version) with one job-finish', async () => {
    const server = await start();
    try {
      await server.store.createJob({ id: 'old', kind: 'solve', request: {}, status: 'succeeded' });
      const events = await server.events('old');
      expect(events).toEqual([{ event: 'job-finish', id: undefined, data: { type: 'job-finish', status: 'succeeded' } }]);
    } finally {
      await server.close();
    }
  });

  it('opens a database made before the events table existed, and adds it', async () => {
    const oldDir = mkdtempSync(join(tmpdir(), 'wnw-old-db-'));
    try {
      const db = new Database(join(oldDir, 'winnower.db'));
      db.exec(`CREATE TABLE jobs (id TEXT PRIMARY KEY, kind TEXT NOT NULL, status TEXT NOT NULL, request TEXT NOT NULL, progress TEXT NOT NULL DEFAULT '{}', result TEXT, error TEXT, created_at TEXT NOT NULL, updated_at TEXT NOT NULL);
        INSERT INTO jobs VALUES ('j', 'solve', 'running', '{}', '{"rollouts_running":2}', NULL, NULL, '2026-01-01', '2026-01-01');`);
      db.close();
      const store = createSqliteStore(oldDir);
      expect(await store.markInterrupted()).toEqual(['j']);
      expect((await store.listEvents('j')).map((event) => event.type)).toEqual(['job-finish']);
      store.close();
    } finally {
      rmSync(oldDir, { recursive: true, force: true });
    }
  });
});
