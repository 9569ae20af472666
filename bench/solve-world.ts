/**
 * Shared set-up of the /solve benchmarks: the demo task and its recordings, the demo repository,
 * and the real server (fastify app listening on 127.0.0.1) over local bubblewrap sandboxes, the
 * bundled ONNX value model and a SQLite store in a temporary folder. The job manager records
 * each job's events with a monotonic clock so a bench can split a makespan into phases.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { createPolicyFactory } from '../src/rollout/policy/policy-factory.js';
import { prepareDemoRepo } from '../src/cli/demo-repo.js';
import { demoDir, demoSolveBody } from '../src/cli/demo-task.js';
import { DEFAULT_MODEL_DIR } from '../src/config.js';
import { loadValueModel } from '../src/scoring/value-model.js';
import { closeAllSandboxes } from '../src/sandbox/lifecycle.js';
import { createLocalProvider } from '../src/sandbox/providers/local/provider.js';
import { buildApp } from '../src/server/app.js';
import type { JobEventBody } from '../src/solve/events.js';
import { JobManager, type JobRunner } from '../src/solve/job-manager.js';
import type { SolveResult } from '../src/solve/run-solve.js';
import { createSqliteStore } from '../src/store/sqlite-store.js';
import type { JobRecord } from '../src/store/types.js';

export const root = fileURLToPath(new URL('..', import.meta.url));
export { commandsOf, demoRecordings, demoTask, type DemoTask } from '../src/cli/demo-task.js';

/** A /solve body for the demo task with verification on, with the benches' generous limits. */
export function solveBody(repo: string, extra: Record<string, unknown>): Record<string, unknown> {
  return demoSolveBody(repo, { verifyTimeoutS: 120, agent: { time_limit_s: 300, command_timeout_s: 60 } }, extra);
}

/** One job event with the monotonic time (ms, performance.now()) it was emitted at. */
export type TimedEvent = JobEventBody & { at: number };

/** A job manager that also keeps every job's events with monotonic timestamps. */
export class TimedJobManager extends JobManager {
  readonly timeline = new Map<string, { startedAt: number; events: TimedEvent[] }>();

  override async start(kind: JobRecord['kind'], body: unknown, run: JobRunner): Promise<JobRecord> {
    const record = { startedAt: performance.now(), events: [] as TimedEvent[] };
    const job = await super.start(kind, body, (jobId, hooks) => {
      this.timeline.set(jobId, record);
      return run(jobId, {
        ...hooks,
        emit: (event) => {
          record.events.push({ ...event, at: performance.now() });
          hooks.emit(event);
        },
      });
    });
    this.timeline.set(job.id, record);
    return job;
  }
}

export interface SolveJobView {
  job_id: string;
  status: string;
  error: { message: string } | null;
  candidates: Array<{
    index: number;
    status: string;
    steps: number | null;
    value: number | null;
    verify: { status: string; resolved: boolean; duration_ms: number } | null;
    error: unknown;
  }>;
  result: SolveResult | null;
}

export interface SolveWorld {
  repo: string;
  address: string;
  jobs: TimedJobManager;
  /** POST /solve?wait=true; returns the job view and the client-side makespan in ms. */
  solve(body: Record<string, unknown>): Promise<{ job: SolveJobView; makespanMs: number; events: TimedEvent[]; startedAt: number }>;
  close(): Promise<void>;
}

/** `scorerCache: false` turns off the scorer's content-hash cache (identical rollouts would hit it). */
export async function createSolveWorld(options: { scorerCache?: boolean } = {}): Promise<SolveWorld> {
  const repo = prepareDemoRepo(join(demoDir(), 'repo'));
  const dataDir = mkdtempSync(join(tmpdir(), 'wnw-bench-data-'));
  const valueModel = await loadValueModel({
    backend: 'onnx',
    model: DEFAULT_MODEL_DIR(),
    ...(options.scorerCache === false ? { cacheEntries: 0 } : {}),
  });
  const sandboxes = createLocalProvider();
  const store = createSqliteStore(dataDir);
  const jobs = new TimedJobManager(store);
  const app = await buildApp({
    jobs,
    store,
    valueModel,
    solveDeps: { sandboxes, store, createPolicy: createPolicyFactory() },
    logger: false,
  });
  const address = await app.listen({ host: '127.0.0.1', port: 0 });
  return {
    repo,
    address,
    jobs,
    async solve(body) {
      const started = performance.now();
      const response = await request(`${address}/solve?wait=true`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
        headersTimeout: 0,
        bodyTimeout: 0,
      });
      const job = (await response.body.json()) as SolveJobView;
      const makespanMs = performance.now() - started;
      if (response.statusCode !== 200 || job.status !== 'succeeded' || !job.result) {
        throw new Error(
          `POST /solve?wait=true answered ${response.statusCode}, job ${job.status}: ${job.error?.message ?? JSON.stringify(job).slice(0, 400)}`,
        );
      }
      const timeline = jobs.timeline.get(job.job_id);
      return { job, makespanMs, events: timeline?.events ?? [], startedAt: timeline?.startedAt ?? started };
    },
    async close() {
      await app.close();
      await closeAllSandboxes();
      await sandboxes.close();
      await valueModel.scorer.close();
      await store.close();
      rmSync(dirname(repo), { recursive: true, force: true });
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export const median = (samples: number[]): number => {
  const sorted = [...samples].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};
export const mean = (samples: number[]): number => (samples.length ? samples.reduce((sum, value) => sum + value, 0) / samples.length : 0);
export const seconds = (ms: number, digits = 2): string => `${(ms / 1000).toFixed(digits)} s`;
