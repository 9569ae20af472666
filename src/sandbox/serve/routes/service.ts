/** `GET /` and `/health` (open without a key, as Orchard's), and `GET /resources`: how many sandboxes are open against the limit. */
import type { FastifyPluginAsync } from 'fastify';
import type { RouteContext } from './common.js';

const VERSION = '0.1.0';

export const serviceRoutes: FastifyPluginAsync<RouteContext> = async (app, { table }) => {
  app.get('/', { config: { orchardOpen: true } }, async () => ({
    service: 'winnower sandbox serve (Orchard Env API)',
    version: VERSION,
    status: 'running',
  }));
  app.get('/health', { config: { orchardOpen: true } }, async () => ({ status: 'healthy' }));
  app.get('/resources', async () => ({
    status: 'ok',
    sandboxes: table.size,
    max_sandboxes: table.limits.maxSandboxes,
    ttl_seconds: table.limits.ttlS,
  }));
};
