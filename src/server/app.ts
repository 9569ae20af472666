/**
 * Builds the HTTP app from its dependencies without listening (tests use `app.inject()`;
 * src/cli/serve.ts listens). One plugin per route group in routes/.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import { serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';
import { createServiceMetrics, type ServiceMetrics } from '../observability/metrics.js';
import type { ServedValueModel } from '../scoring/reloadable.js';
import { openSandboxCount } from '../sandbox/lifecycle.js';
import type { JobManager } from '../solve/job-manager.js';
import type { SolveDeps } from '../solve/run-solve.js';
import type { JobStore } from '../store/types.js';
import { installAuth } from './plugins/auth.js';
import { DEFAULT_LIMITS, type LimitsConfig } from './limits-config.js';
import { installRateLimit } from './plugins/rate-limit.js';
import { installScoringAdmission } from './plugins/scoring-admission.js';
import { installRequestId, requestIdOf } from './plugins/request-id.js';
import { installErrorHandler } from './plugins/error-handler.js';
import { clientErrorHandler, frameworkErrors, MAX_PARAM_LENGTH } from './plugins/framework-errors.js';
import { openapiOptions } from './plugins/openapi.js';
import { requestTimeoutOptions } from './plugins/request-timeout.js';
import { createScorerReadiness, type ScorerProbeOptions, type ScorerReadiness } from './scorer-readiness.js';
import { healthRoutes } from './routes/health.js';
import { jobRoutes } from './routes/jobs.js';
import { harnessRoutes } from './routes/harnesses.js';
import { adminRoutes } from './routes/admin.js';
import { rerankRoutes } from './routes/rerank.js';
import { solveRoutes } from './routes/solve.js';
import { orchardEnvApi, type OrchardEnvApiOptions } from '../sandbox/serve/plugin.js';
import { inspectorRoutes } from './ui/ui-routes.js';

export interface AppDeps {
  jobs: JobManager;
  store: JobStore;
  /** A networked store's round trip (/readyz says when it fails) and its name without credentials. */
  storeCheck?: { where: string; ping: () => Promise<void> };
  /** The value model, absent when none is configured; each job and request pins the one serving (src/scoring/reloadable.ts). */
  valueModel?: ServedValueModel;
  /** What a job needs besides the value model (each job gets the model it pinned). */
  solveDeps: Omit<SolveDeps, 'valueModel'>;
  apiKeys?: string[];
  /** Keys that open the admin routes (server.admin_keys); an API key alone does not. */
  adminKeys?: string[];
  bodyLimitBytes?: number;
  /** How long a client has to send a whole request (server.request_timeout_s); 30 s when absent. */
  requestTimeoutMs?: number;
  /** Folders a request's host repository (repo.path, file:// URL) must lie under; empty = any (local use). */
  repoRoots?: string[];
  /** The scorer's readiness probe: how long a verdict holds and its deadline (src/server/scorer-readiness.ts). */
  scorerProbe?: ScorerProbeOptions;
  /** Hosts a request's policy.url and repo.url may name (server.policy_hosts, server.repo_hosts); empty = any. */
  policyHosts?: string[];
  repoHosts?: string[];
  /** pino options, or false for silence (tests). */
  logger?: boolean | Record<string, unknown>;
  /** Rate limit, queue and size caps (server.limits); the defaults when absent. */
  limits?: LimitsConfig;
  /** The metrics the scorer, sandboxes and jobs report to (src/observability/metrics.ts); a fresh set when absent. */
  metrics?: ServiceMetrics;
  /** The Orchard-Env-compatible sandbox API (src/sandbox/serve), mounted under `prefix`; behind the server's API keys too. */
  sandboxApi?: { prefix: string; options: OrchardEnvApiOptions };
  /** The web inspector under /ui (server.ui); on when absent. */
  ui?: boolean;
}

export interface AppContext {
  jobs: JobManager;
  store: JobStore;
  storeCheck?: { where: string; ping: () => Promise<void> };
  valueModel?: ServedValueModel;
  solveDeps: Omit<SolveDeps, 'valueModel'>;
  metrics: ServiceMetrics;
  limits: LimitsConfig;
  closing: () => boolean;
  repoRoots: string[];
  policyHosts: string[];
  repoHosts: string[];
  /** Whether the scorer answers (/readyz, and /score's fast failure); absent without a scorer. */
  scorerReadiness?: ScorerReadiness;
}

declare module 'fastify' {
  interface FastifyInstance {
    winnower: AppContext;
  }
}

export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const app = Fastify({
    logger: deps.logger ?? false,
    bodyLimit: deps.bodyLimitBytes ?? 16 * 1024 * 1024,
    ...requestTimeoutOptions(deps.requestTimeoutMs),
    // Errors raised before routing answer in the project's shape too (src/server/plugins/framework-errors.ts).
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    frameworkErrors,
    clientErrorHandler,
    // The id is chosen in requestIdOf (a client's own only when it is a plain token).
    requestIdHeader: false,
    genReqId: requestIdOf,
  });
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);

  const metrics = deps.metrics ?? createServiceMetrics();
  metrics.watch({
    jobsByStatus: () => deps.store.countJobsByStatus(),
    queuedJobs: () => deps.jobs.queued,
    leasesHeld: () => (deps.jobs.replica ? deps.jobs.active : 0),
    openSandboxes: openSandboxCount,
  });
  let closing = false;
  const limits = deps.limits ?? DEFAULT_LIMITS;
  app.decorate('winnower', {
    jobs: deps.jobs,
    store: deps.store,
    ...(deps.storeCheck ? { storeCheck: deps.storeCheck } : {}),
    ...(deps.valueModel ? { valueModel: deps.valueModel } : {}),
    solveDeps: deps.solveDeps,
    metrics,
    limits,
    closing: () => closing,
    repoRoots: deps.repoRoots ?? [],
    policyHosts: deps.policyHosts ?? [],
    repoHosts: deps.repoHosts ?? [],
    scorerReadiness: deps.valueModel ? createScorerReadiness(deps.valueModel, deps.scorerProbe) : undefined,
  });
  installRequestId(app);
  app.addHook('onResponse', async (request, reply) => {
    metrics.observeRequest(
      { method: request.method, route: request.routeOptions.url ?? 'unknown', status: reply.statusCode },
      reply.elapsedTime / 1000,
    );
  });
  // Before the server stops: an SSE stream or a `?wait=true` request on a running job ends only
  // with the job, and the server's close waits for every open connection. Bounded, so that a
  // job slow to stop cannot hold the shutdown past fastify's own limit for close hooks.
  app.addHook('preClose', async () => {
    closing = true;
    const late = await deps.jobs.shutdown();
    if (late.length > 0)
      app.log.warn({ jobs: late }, 'jobs still stopping after the shutdown grace; the next start records them as interrupted');
  });

  installErrorHandler(app);
  installAuth(app, [...(deps.apiKeys ?? []), ...(deps.adminKeys ?? [])]);
  installRateLimit(app, limits, (deps.apiKeys ?? []).length > 0);
  installScoringAdmission(app, limits);
  // The OpenAPI description is generated from the same zod schemas that validate requests.
  await app.register(swagger, openapiOptions({ apiKeys: (deps.apiKeys ?? []).length > 0 }));
  await app.register(healthRoutes);
  await app.register(solveRoutes);
  await app.register(jobRoutes);
  await app.register(rerankRoutes);
  await app.register(harnessRoutes);
  await app.register(adminRoutes, { adminKeys: deps.adminKeys ?? [] });
  if (deps.sandboxApi) await app.register(orchardEnvApi, { ...deps.sandboxApi.options, prefix: deps.sandboxApi.prefix });
  if (deps.ui ?? true) await app.register(inspectorRoutes, { keyRequired: (deps.apiKeys ?? []).length > 0 });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  return app;
}
