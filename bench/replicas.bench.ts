/**
 * The shared job store (issue 28): jobs per minute through `winnower serve` processes (the built
 * CLI) on the demo task (replay policy, verification on, n = 2): SQLite with 1 replica (the
 * baseline), Postgres with 1 and with 3 replicas, each run in the same session; then takeover time:
 * a job running on one of two replicas, that replica SIGKILLed, until the other's `taken-over`
 * event, against the lease (goal: within 2 leases). The load average is recorded beside each row.
 *
 *   npm run build && npx tsx bench/replicas.bench.ts [--jobs 12] [--lease 2]
 *
 * Postgres: $WINNOWER_TEST_POSTGRES_URL (a database is made per run), else one started with
 * .ci/postgres.sh. Prints a markdown report and writes it to bench/results/replicas.md.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { request } from 'undici';
import { prepareDemoRepo } from '../src/cli/demo-repo.js';
import { demoDir } from '../src/cli/demo-task.js';
import { demoRecordings, root, solveBody } from './solve-world.js';

const { values: args } = parseArgs({ options: { jobs: { type: 'string', default: '12' }, lease: { type: 'string', default: '2' } } });
const JOBS = Number(args.jobs);
const LEASE_S = Number(args.lease);
const scratch = mkdtempSync(join(tmpdir(), 'winnower-replicas-bench-'));
const repo = prepareDemoRepo(join(demoDir(), 'repo'));
const correct = demoRecordings()['correct-fix']!;

let baseUrl = process.env.WINNOWER_TEST_POSTGRES_URL;
if (!baseUrl) baseUrl = execFileSync(join(root, '.ci/postgres.sh'), ['start', join(scratch, 'pg')], { encoding: 'utf8' }).trim();

async function database(): Promise<string> {
  const name = `wnw_bench_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: baseUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(baseUrl!);
  url.pathname = `/${name}`;
  return url.toString();
}

interface Replica {
  child: ChildProcess;
  base: string;
}

function serve(store: string): Promise<Replica> {
  const dataDir = mkdtempSync(join(scratch, 'data-'));
  const child = spawn(process.execPath, [join(root, 'bin/winnower.js'), 'serve', '--port', '0', '--data-dir', dataDir, '--store', store], {
    env: { ...process.env, WINNOWER_API_KEYS: '', WINNOWER_LOG_LEVEL: 'info', WINNOWER_LEASE_S: String(LEASE_S), WINNOWER_MAX_JOBS: '2' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const address = /Server listening at (http:\/\/[^"\s]+)/.exec(output)?.[1];
      if (address) resolve({ child, base: address });
    });
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('exit', () => reject(new Error(`serve exited: ${output}`)));
  });
}

async function submit(base: string, recording = correct): Promise<string> {
  const body = solveBody(repo, { n: 2, policy: { kind: 'replay', recordings: [recording] } });
  const posted = await request(`${base}/solve`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const answer = (await posted.body.json()) as { job_id?: string };
  if (!answer.job_id) throw new Error(`refused: ${JSON.stringify(answer)}`);
  return answer.job_id;
}

async function finished(base: string, id: string): Promise<string> {
  for (;;) {
    const job = (await (await request(`${base}/jobs/${id}`)).body.json()) as { status: string };
    if (job.status !== 'queued' && job.status !== 'running') return job.status;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Jobs per minute with `count` replicas on `store`, jobs sent round-robin. */
async function throughput(label: string, store: string, count: number) {
  const replicas = await Promise.all(Array.from({ length: count }, () => serve(store)));
  try {
    const load = loadavg()[0]!;
    const started = performance.now();
    const ids: Array<[string, string]> = [];
    for (let i = 0; i < JOBS; i++) {
      const base = replicas[i % count]!.base;
      ids.push([base, await submit(base)]);
    }
    const statuses = await Promise.all(ids.map(([base, id]) => finished(base, id)));
    const minutes = (performance.now() - started) / 60_000;
    const ok = statuses.filter((status) => status === 'succeeded').length;
    return { label, jobsPerMinute: JOBS / minutes, ok, load };
  } finally {
    for (const replica of replicas) replica.child.kill('SIGKILL');
  }
}

/** SIGKILL of the replica running a job → the other replica's taken-over event, in seconds. */
async function takeover(store: string): Promise<number> {
  const [a, b] = [await serve(store), await serve(store)];
  const db = new pg.Client({ connectionString: store });
  await db.connect();
  try {
    const slow = {
      ...correct,
      messages: [
        {
          role: 'assistant' as const,
          content: 'Wait.',
          tool_calls: [{ id: 'w', type: 'function' as const, function: { name: 'bash', arguments: '{"command":"sleep 20"}' } }],
        },
        ...correct.messages,
      ],
    };
    const id = await submit(a.base, slow);
    const owners = new Map<string, Replica>();
    for (const [replica, readyz] of await Promise.all(
      [a, b].map(
        async (replica) => [replica, (await (await request(`${replica.base}/readyz`)).body.json()) as { replica: string }] as const,
      ),
    ))
      owners.set(readyz.replica, replica);
    let owner: Replica | undefined;
    while (!owner) {
      const row = (await db.query<{ owner: string | null; status: string }>('SELECT owner, status FROM jobs WHERE id = $1', [id])).rows[0];
      if (row?.status === 'running' && row.owner) owner = owners.get(row.owner);
      else await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
    const killed = Date.now();
    owner.child.kill('SIGKILL');
    for (;;) {
      const row = (await db.query<{ event: string }>("SELECT event FROM job_events WHERE job_id = $1 AND type = 'taken-over'", [id]))
        .rows[0];
      if (row) return (Date.parse((JSON.parse(row.event) as { time: string }).time) - killed) / 1000;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  } finally {
    await db.end();
    a.child.kill('SIGKILL');
    b.child.kill('SIGKILL');
  }
}

const rows = [
  await throughput('SQLite, 1 replica (baseline)', 'sqlite', 1),
  await throughput('Postgres, 1 replica', await database(), 1),
  await throughput('Postgres, 3 replicas', await database(), 3),
];
const takeoverS = await takeover(await database());
const takeoverLoad = loadavg()[0]!;
const baseline = rows[0]!.jobsPerMinute;
const report = [
  '# Shared job store: replicas',
  '',
  `\`npx tsx bench/replicas.bench.ts --jobs ${JOBS} --lease ${LEASE_S}\` on ${cpus().length} cores, ${new Date().toISOString()}.`,
  `Demo task, replay policy (correct fix), n = 2, verification on, server.max_running_jobs 2 per replica, ${JOBS} jobs sent round-robin.`,
  '',
  '| store | jobs/min | vs SQLite 1 replica | succeeded | load avg (1 min) at start |',
  '|---|---|---|---|---|',
  ...rows.map(
    (row) =>
      `| ${row.label} | ${row.jobsPerMinute.toFixed(1)} | ${(row.jobsPerMinute / baseline).toFixed(2)}× | ${row.ok}/${JOBS} | ${row.load.toFixed(2)} |`,
  ),
  '',
  `Takeover: SIGKILL of the replica running a job → \`taken-over\` on the other: ${takeoverS.toFixed(2)} s with a ${LEASE_S} s lease (${(takeoverS / LEASE_S).toFixed(2)} leases; goal ≤ 2), load ${takeoverLoad.toFixed(2)}.`,
  '',
].join('\n');
console.log(report);
writeFileSync(join(root, 'bench/results/replicas.md'), report);
if (!process.env.WINNOWER_TEST_POSTGRES_URL) execFileSync(join(root, '.ci/postgres.sh'), ['stop', join(scratch, 'pg')]);
rmSync(scratch, { recursive: true, force: true });
