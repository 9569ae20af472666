/**
 * Builds the HTTP app from its dependencies without listening (tests use `app.inject()`;
 * src/cli/serve.ts listens). One plugin per route group in routes/.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import { serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';
import { collectDefaultMetrics, Histogram, Registry } from 'prom-client';
import type { JobManager } from '../solve/job-manager.js';
import type { SolveDeps } from '../solve/run-solve.js';
import type { JobStore } from '../store/types.js';
import { installAuth } from './auth.js';
import { installErrorHandler } from './error-handler.js';
import { clientErrorHandler, frameworkErrors, MAX_PARAM_LENGTH } from './framework-errors.js';
import { openapiOptions } from './openapi.js';
import { healthRoutes } from './routes/health.js';
import { jobRoutes } from './routes/jobs.js';
import { rerankRoutes } from './routes/rerank.js';
import { solveRoutes } from './routes/solve.js';

export interface AppDeps {
  jobs: JobManager;
  store: JobStore;
  solveDeps: SolveDeps;
  apiKeys?: string[];
  bodyLimitBytes?: number;
  /** Folders a request's host repository (repo.path, file:// URL) must lie under; empty = any (local use). */
  repoRoots?: string[];
  /** pino options, or false for silence (tests). */
  logger?: boolean | Record<string, unknown>;
}

export interface AppContext {
  jobs: JobManager;
  store: JobStore;
  solveDeps: SolveDeps;
  metrics: Registry;
  closing: () => boolean;
  repoRoots: string[];
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
    // Errors raised before routing answer in the project's shape too (src/server/framework-errors.ts).
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    frameworkErrors,
    clientErrorHandler,
  });
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);

  const metrics = new Registry();
  collectDefaultMetrics({ register: metrics });
  const duration = new Histogram({
    name: 'winnower_http_request_duration_seconds',
    help: 'HTTP request duration by route and status',
    labelNames: ['method', 'route', 'status'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [metrics],
  });
  let closing = false;
  app.decorate('winnower', { jobs: deps.jobs, store: deps.store, solveDeps: deps.solveDeps, metrics, closing: () => closing, repoRoots: deps.repoRoots ?? [] });
  app.addHook('onResponse', async (request, reply) => {
    duration.observe({ method: request.method, route: request.routeOptions.url ?? 'unknown', status: reply.statusCode }, reply.elapsedTime / 1000);
  });
  // Before the server stops: an SSE stream or a `?wait=true` request on a running job ends only
  // with the job, and the server's close waits for every open connection. Bounded, so that a
  // job slow to stop cannot hold the shutdown past fastify's own limit for close hooks.
  app.addHook('preClose', async () => {
    closing = true;
    const late = await deps.jobs.shutdown();
    if (late.length > 0) app.log.warn({ jobs: late }, 'jobs still stopping after the shutdown grace; the next start records them as interrupted');
  });

  installErrorHandler(app);
  installAuth(app, deps.apiKeys ?? []);
  // The OpenAPI description is generated from the same zod schemas that validate requests.
  await app.register(swagger, openapiOptions({ apiKeys: (deps.apiKeys ?? []).length > 0 }));
  await app.register(healthRoutes);
  await app.register(solveRoutes);
  await app.register(jobRoutes);
  await app.register(rerankRoutes);
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  return app;
}
