/**
 * The Orchard Env API's `X-API-Key` auth: when a key is set, every route not marked
 * `config.orchardOpen` answers 401 without a key and 403 with a wrong one; the PTY route checks
 * its own three forms of the key (ptyKeyAccepted) after the WebSocket handshake.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { type SecretCheck, secretMatcher } from '../../util/secret-compare.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Answered without an API key. */
    orchardOpen?: boolean;
  }
}

/** Adds the key check to `app`; returns the comparison (undefined: no key, every route open). */
export function installApiKey(app: FastifyInstance, apiKey: string | undefined): SecretCheck | undefined {
  if (!apiKey) return undefined;
  const matches = secretMatcher([apiKey]);
  app.addHook('onRequest', async (request, reply) => {
    if (request.routeOptions.config?.orchardOpen) return;
    const given = request.headers['x-api-key'];
    if (typeof given !== 'string' || given === '')
      return reply.code(401).send({ detail: 'Missing API key. Please provide X-API-Key header.' });
    if (!matches(given)) return reply.code(403).send({ detail: 'Invalid API key' });
  });
  return matches;
}

/** `X-API-Key`, `?api_key=` or `Sec-WebSocket-Protocol: api_key.<key>` (the three forms Orchard's clients use). */
export function ptyKeyAccepted(request: FastifyRequest, matches: SecretCheck): boolean {
  const header = request.headers['x-api-key'];
  const query = (request.query as Record<string, unknown> | undefined)?.api_key;
  const protocols = String(request.headers['sec-websocket-protocol'] ?? '')
    .split(',')
    .map((protocol) => protocol.trim())
    .filter((protocol) => protocol.startsWith('api_key.'))
    .map((protocol) => protocol.slice('api_key.'.length));
  const given = [typeof header === 'string' ? header : undefined, typeof query === 'string' ? query : undefined, ...protocols];
  return given.some((candidate) => matches(candidate));
}
