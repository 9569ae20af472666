/** API keys: when configured, every route but health checks and routes marked `config.open` needs `Authorization: Bearer <key>` or `X-API-Key`. */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { wnwError } from '../../errors.js';
import { secretMatcher } from '../../util/secret-compare.js';

const OPEN_ROUTES = new Set(['/healthz', '/readyz']);

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Served without an API key: a route that holds no data (the web inspector's page shell and bundle, src/server/ui). */
    open?: boolean;
  }
}

/** The key a request presents: `Authorization: Bearer <key>` (the scheme in any case, RFC 9110) or `X-API-Key`. */
export function presentedKey(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  const bearer = header === undefined ? undefined : /^bearer +(.*)$/is.exec(header)?.[1];
  return bearer ?? (request.headers['x-api-key'] as string | undefined);
}

export function installAuth(app: FastifyInstance, apiKeys: string[]): void {
  if (apiKeys.length === 0) return;
  const matches = secretMatcher(apiKeys);
  app.addHook('onRequest', async (request) => {
    if (OPEN_ROUTES.has(request.url.split('?')[0]!) || request.routeOptions.config?.open === true) return;
    const given = presentedKey(request);
    if (!given) throw wnwError('WNW_ERR_AUTH_MISSING', 'API key required: send Authorization: Bearer <key> or X-API-Key');
    if (!matches(given)) throw wnwError('WNW_ERR_AUTH_INVALID');
  });
}
