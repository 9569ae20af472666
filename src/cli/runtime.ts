/**
 * The composition root: builds the value model, sandbox provider, job store, job manager and HTTP app
 * from one validated config. `serve` listens on it; `demo` runs a job through it.
 */
import type { FastifyInstance } from 'fastify';
import { createPolicyFactory } from '../rollout/policy/policy-factory.js';
import { DEFAULT_MODEL_DIR, type WinnowerConfig } from '../config.js';
import { serverJudge } from '../judge/judge-options.js';
import { loggerOptions } from '../observability/logger-options.js';
import { createServiceMetrics } from '../observability/metrics.js';
import { checkModelFolder } from '../scoring/model-folder.js';
import { createReloadableValueModel, type ReloadableValueModel } from '../scoring/reloadable.js';
import { loadValueModel } from '../scoring/value-model.js';
import { closeAllSandboxes } from '../sandbox/lifecycle.js';
import { createSandboxProvider } from '../sandbox/registry.js';
import { withObserver } from '../sandbox/with-observer.js';
import type { SandboxProvider } from '../sandbox/types.js';
import { buildApp } from '../server/app.js';
import { mountedSandboxApi } from './sandbox-serve-action.js';
import { JobManager } from '../solve/job-manager.js';
import { recoverInterrupted } from '../solve/partial-result.js';
import { scheduleRetention } from '../store/retention.js';
import { openJobStore } from '../store/open-store.js';
import type { JobStore } from '../store/types.js';
import { replicaId } from '../store/replica-id.js';
import { retryCandidates } from '../server/guards/retry-of.js';
import { solveJob } from '../server/solve-job.js';
import { withReadiness } from '../server/scorer-readiness.js';
import type { SolveRequest } from '../solve/solve-request.js';

export interface Runtime {
  app: FastifyInstance;
  store: JobStore;
  jobs: JobManager;
  /** Reloads its model folder on `reload()` (serve: SIGHUP, POST /admin/model) without a restart. */
  valueModel: ReloadableValueModel;
  sandboxes: SandboxProvider;
  /** Jobs found running from a previous process, now marked interrupted. */
  interrupted: string[];
  close(): Promise<void>;
}

export async function createRuntime(
  config: WinnowerConfig,
  options: {
    logger?: boolean | Record<string, unknown>;
    /** Fill Harbor tasks' `${VAR}` templates from this process's environment: the user's own runs, not a server. */
    harborHostEnv?: boolean;
  } = {},
): Promise<Runtime> {
  const scorerConfig = {
    ...config.scorer,
    model: config.scorer.model ?? (config.scorer.backend === 'onnx' ? DEFAULT_MODEL_DIR() : undefined),
  };
  const metrics = createServiceMetrics();
  // A reload (SIGHUP, POST /admin/model) loads the named folder, or the one serving; for a server
  // backend the model stays the served one and its configured files (selector, tokenizer) are re-read.
  const valueModel = await createReloadableValueModel((path, { reload }) => {
    const model = path ?? scorerConfig.model;
    if (reload && scorerConfig.backend === 'onnx' && model !== undefined) checkModelFolder(model);
    return loadValueModel({ ...scorerConfig, model } as Parameters<typeof loadValueModel>[0], { observer: metrics.scorer });
  });
  const sandboxes = withObserver(
    await createSandboxProvider(config.sandbox.provider, config.sandbox.settings, config.sandbox.patch),
    metrics.sandbox,
  );
  const opened = await openJobStore(config.server, replicaId());
  const { store, queue } = opened;
  const interrupted = await recoverInterrupted(store);
  const { limits, retention } = config.server;
  // The queue's troubles are logged once the app (and its logger) exists.
  let log: (error: unknown, what: string) => void = (error, what) => console.error(`winnower: job queue: ${what}:`, error);
  const jobs = new JobManager(store, {
    maxRunning: config.server.max_running_jobs,
    maxQueued: limits.max_queued_jobs,
    onEvent: (event, job) => metrics.onJobEvent(event, job),
    ...(queue
      ? {
          shared: {
            queue,
            leaseMs: config.server.lease_s * 1000,
            onTakeover: () => metrics.onTakeover(),
            onQueueError: (error: unknown, what: string) => log(error, what),
          },
        }
      : {}),
  });
  const createPolicy = createPolicyFactory(config.policy);
  const judge = serverJudge(config.judge);
  const app = await buildApp({
    jobs,
    store,
    ...(opened.ping ? { storeCheck: { where: opened.where, ping: opened.ping } } : {}),
    valueModel,
    solveDeps: {
      sandboxes,
      store,
      createPolicy,
      policyDefaults: config.policy,
      ...(judge ? { judge } : {}),
      ...(options.harborHostEnv ? { harborEnv: process.env } : {}),
    },
    apiKeys: config.server.api_keys,
    adminKeys: config.server.admin_keys,
    bodyLimitBytes: config.server.body_limit_bytes,
    requestTimeoutMs: config.server.request_timeout_s * 1000,
    repoRoots: config.server.repo_roots,
    policyHosts: config.server.policy_hosts,
    repoHosts: config.server.repo_hosts,
    limits,
    metrics,
    logger: options.logger ?? loggerOptions(config.log_level, config.log_format),
    sandboxApi: mountedSandboxApi(config, sandboxes),
    ui: config.server.ui,
  });
  if (queue) {
    log = (error, what) => app.log.warn({ err: error, store: opened.where }, `job queue: ${what}`);
    // A claimed job runs from its stored request; its store writes stop if another replica takes it over.
    await jobs.serveQueue((job, { store: held, resume }) => {
      if (job.kind !== 'solve') return async () => Promise.reject(new Error(`a ${job.kind} job cannot run from the shared queue`));
      const request = job.request as SolveRequest;
      const deps = withReadiness({ ...app.winnower.solveDeps, store: held }, app.winnower.scorerReadiness);
      // A retry's reused rollouts are read here, from the shared store, as its submit checked them.
      return async (jobId, hooks) => {
        const reuse = await retryCandidates(held, request);
        return solveJob(deps, app.winnower.valueModel, request, { ...(reuse ? { reuse } : {}), ...(resume ? { resume } : {}) })(
          jobId,
          hooks,
        );
      };
    });
  }
  const stopRetention = scheduleRetention(
    store,
    retention,
    (ids) => app.log.info({ purged: ids.length }, 'finished jobs past server.retention purged'),
    (error) => app.log.warn({ err: error }, 'the retention purge failed; tried again at the next interval'),
  );
  let closed: Promise<void> | undefined;
  return {
    app,
    store,
    jobs,
    valueModel,
    sandboxes,
    interrupted,
    close() {
      // Every step runs even when an earlier one fails; the first failure is reported at the end.
      closed ??= (async () => {
        stopRetention();
        const steps = [
          () => app.close(),
          () => createPolicy.close(),
          () => closeAllSandboxes(),
          () => sandboxes.close(),
          () => valueModel.close(),
          () => store.close(),
        ];
        const failures: unknown[] = [];
        for (const step of steps) {
          try {
            await step();
          } catch (error) {
            failures.push(error);
          }
        }
        if (failures.length) throw failures[0];
      })();
      return closed;
    },
  };
}
