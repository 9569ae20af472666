/** Liveness, readiness and Prometheus metrics. */
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { openSandboxCount } from '../../sandbox/lifecycle.js';

const Readiness = z
  .looseObject({ status: z.enum(['ready', 'shutting-down']), scorer: z.looseObject({ backend: z.string(), model: z.string() }).nullable(), sandbox: z.string(), open_sandboxes: z.number().int() })
  .describe('Whether the server takes work: 200 ready, 503 shutting down');

/** Probes and scrapes arrive every few seconds: their requests log only warnings and errors, not a line each. */
const QUIET = 'warn';

export const healthRoutes: FastifyPluginAsyncZod = async (app) => {
  // Health checks need no API key (src/server/auth.ts).
  app.get('/healthz', { logLevel: QUIET, schema: { security: [], response: { 200: z.object({ status: z.literal('ok') }).describe('The process is up') } } }, async () => ({ status: 'ok' as const }));

  app.get('/readyz', { logLevel: QUIET, schema: { security: [], response: { 200: Readiness, 503: Readiness } } }, async (_request, reply) => {
    const { solveDeps, closing } = app.winnower;
    const ready = !closing();
    return reply.status(ready ? 200 : 503).send({
      status: ready ? 'ready' : 'shutting-down',
      scorer: solveDeps.scorer ? { backend: solveDeps.scorer.backend, model: solveDeps.scorer.model } : null,
      sandbox: solveDeps.sandboxes.name,
      open_sandboxes: openSandboxCount(),
    });
  });

  app.get('/metrics', { logLevel: QUIET }, async (_request, reply) => {
    const { registry } = app.winnower.metrics;
    return reply.header('content-type', registry.contentType).send(await registry.metrics());
  });
};
