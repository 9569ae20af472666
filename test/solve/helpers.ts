/** Shared set-up of the solve and server tests: the demo task, its repository, an app on real components. */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { HarnessCatalog } from '../../src/rollout/harness/harness-catalog.js';
import { createPolicyFactory } from '../../src/rollout/policy/policy-factory.js';
import { prepareDemoRepo } from '../../src/cli/demo-repo.js';
import { demoDir, demoSolveBody } from '../../src/cli/demo-task.js';
import { DEFAULT_MODEL_DIR } from '../../src/config.js';
import { loadValueModel, type ValueModel } from '../../src/scoring/value-model.js';
import { createLocalProvider } from '../../src/sandbox/providers/local/provider.js';
import type { SandboxProvider } from '../../src/sandbox/types.js';
import { buildApp } from '../../src/server/app.js';
import { JobManager } from '../../src/solve/job-manager.js';
import { recoverInterrupted } from '../../src/solve/partial-result.js';
import { createSqliteStore } from '../../src/store/sqlite-store.js';

export const DEMO_DIR = `${demoDir()}/`;
export { commandsOf, demoRecordings, demoTask, type DemoTask } from '../../src/cli/demo-task.js';

export function hasBubblewrap(): boolean {
  try {
    execFileSync('bwrap', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/**
 * The demo task's /solve body (verification on, with its test list). The regression check, on by
 * default with verification, runs the demo suite on the base commit twice and again per candidate:
 * it is off here unless `extra` gives its own `verify`, or `regressionDefault` leaves the product's
 * default (tests of the check itself).
 */
export function solveBody(repo: string, extra: Record<string, unknown> = {}, options: { regressionDefault?: boolean } = {}) {
  const body = demoSolveBody(repo, { verifyTimeoutS: 60, agent: { time_limit_s: 60, command_timeout_s: 30 } }, extra);
  if (options.regressionDefault || 'verify' in extra) return body;
  return { ...body, verify: { ...(body.verify as Record<string, unknown>), regression: { enabled: false } } };
}

export interface TestWorld {
  repo: string;
  dataDir: string;
  valueModel: ValueModel;
  sandboxes: SandboxProvider;
  /** Builds an app (and its store and job manager) over the data dir; call again to simulate a restart. */
  start(options?: {
    harnesses?: HarnessCatalog;
  }): Promise<{ app: Awaited<ReturnType<typeof buildApp>>; jobs: JobManager; close(): Promise<void> }>;
  close(): Promise<void>;
}

/** `sandboxes`: a provider of the test's own (default: a local provider with default settings); the world closes it. */
export async function createWorld(options: { sandboxes?: SandboxProvider } = {}): Promise<TestWorld> {
  const repo = prepareDemoRepo(join(DEMO_DIR, 'repo'));
  const dataDir = mkdtempSync(join(tmpdir(), 'wnw-data-'));
  const valueModel = await loadValueModel({ backend: 'onnx', model: DEFAULT_MODEL_DIR() });
  const sandboxes = options.sandboxes ?? createLocalProvider();
  return {
    repo,
    dataDir,
    valueModel,
    sandboxes,
    async start(options = {}) {
      const store = createSqliteStore(dataDir);
      await recoverInterrupted(store);
      const jobs = new JobManager(store);
      const app = await buildApp({
        jobs,
        store,
        valueModel,
        solveDeps: { sandboxes, store, createPolicy: createPolicyFactory(), harnesses: options.harnesses },
      });
      return {
        app,
        jobs,
        async close() {
          await app.close();
          store.close();
        },
      };
    },
    async close() {
      await sandboxes.close();
      await valueModel.scorer.close();
      rmSync(dirname(repo), { recursive: true, force: true });
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
