/**
 * Three `winnower serve` processes on one real Postgres database, as an operator runs them behind
 * a load balancer: jobs sent round-robin; one replica SIGKILLed mid-job, another stopped with
 * SIGTERM; a cancel sent to a replica that does not run the job; an SSE client of the killed
 * replica reconnecting to another with Last-Event-ID. Every job must end once, with each of its
 * candidates once and the patch its seed replays. 9 jobs of 2 rollouts (about 2 s each): enough
 * for every replica to hold jobs when one dies, and under a minute on two cores.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { request } from 'undici';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { demoRecordings } from '../../src/cli/demo-task.js';
import { startServeProcess, type ServeProcess } from '../support/cli.js';
import { describeWithPostgres, freshDatabase } from '../support/postgres.js';
import { parseSse, type SseEvent } from '../support/sse.js';
import { createWorld, hasBubblewrap, solveBody, type TestWorld } from '../solve/helpers.js';

const JOBS = 9;

/** Reads an SSE stream until it ends or its server dies; the whole events received. */
async function readUntilGone(url: string, headers: Record<string, string> = {}, onEvent: (event: SseEvent) => void = () => {}) {
  const events: SseEvent[] = [];
  let text = '';
  try {
    const response = await request(url, { headers: { accept: 'text/event-stream', ...headers } });
    for await (const chunk of response.body) {
      text += chunk.toString();
      const cut = text.lastIndexOf('\n\n');
      if (cut < 0) continue;
      for (const event of parseSse(text.slice(0, cut + 2))) {
        events.push(event);
        onEvent(event);
      }
      text = text.slice(cut + 2);
    }
  } catch {
    // The replica was killed: the stream breaks off.
  }
  return events;
}

describeWithPostgres('three winnower serve replicas on one Postgres store', () => {
  let world: TestWorld;
  let database: { url: string; drop: () => Promise<void> };
  let db: pg.Client;
  const dirs: string[] = [];
  const replicas: ServeProcess[] = [];

  beforeAll(async () => {
    world = await createWorld();
    database = await freshDatabase();
  }, 60_000);
  afterAll(async () => {
    for (const replica of replicas) replica.child.kill('SIGKILL');
    await db?.end().catch(() => undefined);
    await world?.close();
    await database?.drop();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it.skipIf(!hasBubblewrap())(
    'finishes every job once across a SIGKILL and a SIGTERM, cancels from anywhere, and resumes an SSE stream on another replica',
    async () => {
      const env = { WINNOWER_STORE: database.url, WINNOWER_LEASE_S: '2', WINNOWER_MAX_JOBS: '2' };
      for (let i = 0; i < 3; i++) {
        const dir = mkdtempSync(join(tmpdir(), 'wnw-replica-'));
        dirs.push(dir);
        replicas.push(startServeProcess(dir, env, 90_000));
      }
      const bases = await Promise.all(replicas.map((replica) => replica.base));
      const ids = await Promise.all(
        bases.map(async (base) => ((await (await request(`${base}/readyz`)).body.json()) as { replica: string }).replica),
      );
      expect(new Set(ids).size).toBe(3);
      db = new pg.Client({ connectionString: database.url });
      await db.connect();
      const owners = async () =>
        new Map(
          (await db.query<{ id: string; owner: string | null; status: string }>('SELECT id, owner, status FROM jobs')).rows.map((row) => [
            row.id,
            row,
          ]),
        );

      const correct = demoRecordings()['correct-fix']!;
      // Each rollout waits 2 s first, so jobs are mid-run when a replica dies.
      const slow = {
        ...correct,
        messages: [
          {
            role: 'assistant' as const,
            content: 'Wait.',
            tool_calls: [{ id: 'w', type: 'function' as const, function: { name: 'bash', arguments: '{"command":"sleep 2"}' } }],
          },
          ...correct.messages,
        ],
      };
      const submit = async (base: string, recording: typeof slow) => {
        const body = solveBody(world.repo, { n: 2, policy: { kind: 'replay', recordings: [recording] }, verify: { enabled: false } });
        const posted = await request(`${base}/solve`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
        const answer = (await posted.body.json()) as { job_id: string };
        expect(posted.statusCode, JSON.stringify(answer)).toBe(202);
        return answer.job_id;
      };

      // A cancel sent to a replica that does not run the job stops it there.
      const stuck = {
        ...correct,
        messages: [
          {
            ...slow.messages[0]!,
            tool_calls: [{ ...slow.messages[0]!.tool_calls![0]!, function: { name: 'bash', arguments: '{"command":"sleep 120"}' } }],
          },
        ],
      };
      const cancelled = await submit(bases[0]!, stuck);
      let runner = -1;
      for (let i = 0; i < 200 && runner < 0; i++) {
        const row = (await owners()).get(cancelled);
        if (row?.status === 'running') runner = ids.indexOf(row.owner!);
        else await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(runner).toBeGreaterThanOrEqual(0);
      const other = bases[(runner + 1) % 3]!;
      const deleted = await request(`${other}/jobs/${cancelled}`, { method: 'DELETE' });
      expect(((await deleted.body.json()) as { status: string }).status).toBe('cancelled');

      const jobs: string[] = [];
      for (let i = 0; i < JOBS; i++) jobs.push(await submit(bases[i % 3]!, slow));

      // Wait until the first replica runs a job, follow it there, then kill that replica.
      let followed: string | undefined;
      for (let i = 0; i < 300 && !followed; i++) {
        followed = [...(await owners()).values()].find(
          (row) => row.owner === ids[0] && row.status === 'running' && jobs.includes(row.id),
        )?.id;
        if (!followed) await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(followed).toBeDefined();
      let sawStart!: () => void;
      const started = new Promise<void>((resolve) => (sawStart = resolve));
      const before = readUntilGone(`${bases[0]}/jobs/${followed}/events`, {}, (event) => {
        if (event.event === 'rollout-start') sawStart();
      });
      await started;
      replicas[0]!.child.kill('SIGKILL');
      const first = await before;
      // The third replica leaves gracefully while it holds jobs: it hands them back.
      let held: string | undefined;
      for (let i = 0; i < 300 && !held; i++) {
        held = [...(await owners()).values()].find((row) => row.owner === ids[2] && row.status === 'running')?.id;
        if (!held) await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(held).toBeDefined();
      replicas[2]!.child.kill('SIGTERM');
      expect((await replicas[2]!.exited).code, replicas[2]!.output()).toBe(0);

      const lastSeen = first.at(-1)!.id!;
      const after = await readUntilGone(`${bases[1]}/jobs/${followed}/events`, { 'last-event-id': String(lastSeen) });
      const seqs = [...first, ...after].map((event) => event.id);
      expect(seqs).toEqual(seqs.map((_, i) => i));
      expect(after.at(-1)?.event).toBe('job-finish');
      expect(after.map((event) => event.event)).toContain('taken-over');

      const survivor = bases[1]!;
      const patches = new Set<string>();
      for (const id of jobs) {
        let view: { status: string; result: { rollouts: { finished: number; planned: number }; candidates: Array<{ index: number }> } };
        for (;;) {
          view = (await (await request(`${survivor}/jobs/${id}`)).body.json()) as typeof view;
          if (view.status !== 'queued' && view.status !== 'running') break;
          await new Promise((resolve) => setTimeout(resolve, 200));
        }
        expect([id, view.status], JSON.stringify(view)).toEqual([id, 'succeeded']);
        const stored = (
          await db.query<{ idx: number; status: string; error: string | null }>(
            'SELECT idx, status, error FROM candidates WHERE job_id = $1',
            [id],
          )
        ).rows;
        expect(view.result.rollouts, JSON.stringify(stored)).toMatchObject({ planned: 2, finished: 2 });
        // The end and its job-finish are stored in one statement: a replica killed at any moment
        // leaves both or neither.
        const finishes = await db.query<{ type: string }>("SELECT type FROM job_events WHERE job_id = $1 AND type = 'job-finish'", [id]);
        expect(finishes.rows.length).toBe(1);
        const candidates = (
          await db.query<{ idx: number; status: string; trajectory: string }>(
            'SELECT idx, status, trajectory FROM candidates WHERE job_id = $1 ORDER BY idx',
            [id],
          )
        ).rows;
        expect(
          candidates.map((candidate) => [candidate.idx, candidate.status]),
          JSON.stringify(
            await db.query('SELECT seq, event FROM job_events WHERE job_id = $1 ORDER BY seq', [id]).then((result) => result.rows),
          ),
        ).toEqual([
          [0, 'finished'],
          [1, 'finished'],
        ]);
        for (const candidate of candidates) patches.add(JSON.parse(candidate.trajectory).patch);
      }
      const handedBack = (
        await db.query<{ event: string }>("SELECT event FROM job_events WHERE job_id = $1 AND type = 'job-requeued'", [held])
      ).rows;
      expect(handedBack.map((row) => JSON.parse(row.event).replica)).toEqual([ids[2]]);
      // Every seed replays one recording: rerun or not, on whichever replica, each candidate has the same patch.
      expect(patches.size).toBe(1);
      expect([...patches][0]).toContain('diff --git');
    },
    240_000,
  );
});
