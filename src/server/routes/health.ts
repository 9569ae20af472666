/** Liveness, readiness and Prometheus metrics. */
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { openSandboxCount } from '../../sandbox/lifecycle.js';

export const healthRoutes: FastifyPluginAsyncZod = async (app) => {
  app.get('/healthz', async () => ({ status: 'ok' }));

  app.get('/readyz', async (_request, reply) => {
    const { solveDeps, closing } = app.winnower;
    const ready = !closing();
    return reply.status(ready ? 200 : 503).send({
      status: ready ? 'ready' : 'shutting-down',
      scorer: solveDeps.scorer ? { backend: solveDeps.scorer.backend, model: solveDeps.scorer.model } : null,
      sandbox: solveDeps.sandboxes.name,
      open_sandboxes: openSandboxCount(),
    });
  });

  app.get('/metrics', async (_request, reply) => {
    const { metrics } = app.winnower;
    return reply.header('content-type', metrics.contentType).send(await metrics.metrics());
  });
};
