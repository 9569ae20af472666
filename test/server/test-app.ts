/**
 * The HTTP app as the server tests build it: an in-memory job store, a JobManager on it, local
 * sandboxes, the real policy factory and, when asked, a value model. `close()` takes it down in the
 * order the server does: the app first (its preClose hook stops running jobs), then the sandboxes,
 * the store and a value model opened here.
 */
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { createPolicyFactory } from '../../src/rollout/policy/policy-factory.js';
import { DEFAULT_MODEL_DIR } from '../../src/config.js';
import type { JudgeOptions } from '../../src/judge/judge-options.js';
import { loadValueModel, type ValueModel } from '../../src/scoring/value-model.js';
import { createLocalProvider } from '../../src/sandbox/providers/local/provider.js';
import { type AppDeps, buildApp } from '../../src/server/app.js';
import type { SandboxProvider } from '../../src/sandbox/types.js';
import { JobManager, type JobManagerOptions } from '../../src/solve/job-manager.js';
import { createSqliteStore } from '../../src/store/sqlite-store.js';
import type { JobStore } from '../../src/store/types.js';

export interface TestAppOptions
  extends Pick<
    AppDeps,
    | 'apiKeys'
    | 'repoRoots'
    | 'bodyLimitBytes'
    | 'requestTimeoutMs'
    | 'limits'
    | 'metrics'
    | 'logger'
    | 'policyHosts'
    | 'repoHosts'
    | 'scorerProbe'
    | 'storeCheck'
  > {
  /** 'bundled': the default ONNX model, opened here and closed by `close()`; a ValueModel: the caller's, left open; absent: none. */
  valueModel?: 'bundled' | ValueModel;
  /** The job manager's options (queue cap, event hook); the metrics' event hook is added when `metrics` is given. */
  jobs?: JobManagerOptions;
  /** The sandbox provider (default: local, closed by `close()` either way). */
  sandboxes?: SandboxProvider;
  /** The job store (default: in memory, closed by `close()` either way). */
  store?: JobStore;
  /** The server's default pairwise judge (config `judge`). */
  judge?: JudgeOptions;
}

export interface TestApp {
  app: FastifyInstance;
  store: JobStore;
  jobs: JobManager;
  valueModel: ValueModel | undefined;
  close(): Promise<void>;
}

export async function startTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const {
    valueModel: modelOption,
    jobs: jobOptions,
    sandboxes = createLocalProvider(),
    store = createSqliteStore(':memory:'),
    judge,
    ...appOptions
  } = options;
  const valueModel =
    modelOption === 'bundled'
      ? await loadValueModel({ backend: 'onnx', model: DEFAULT_MODEL_DIR() }, { observer: options.metrics?.scorer })
      : modelOption;
  const metrics = options.metrics;
  const jobs = new JobManager(store, { ...(metrics ? { onEvent: (event, job) => metrics.onJobEvent(event, job) } : {}), ...jobOptions });
  const app = await buildApp({
    jobs,
    store,
    ...(valueModel ? { valueModel } : {}),
    solveDeps: { sandboxes, store, createPolicy: createPolicyFactory(), ...(judge ? { judge } : {}) },
    ...appOptions,
  });
  return {
    app,
    store,
    jobs,
    valueModel,
    async close() {
      await app.close();
      await app.winnower.solveDeps.sandboxes.close();
      store.close();
      if (modelOption === 'bundled') await valueModel?.scorer.close();
    },
  };
}

/** Listens on a free loopback port; the base URL and the port. */
export async function listenOnLoopback(app: FastifyInstance): Promise<{ base: string; port: number }> {
  await app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = app.server.address() as AddressInfo;
  return { base: `http://127.0.0.1:${port}`, port };
}
