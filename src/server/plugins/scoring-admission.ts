/**
 * How many `/score` and `/rerank` requests may be in progress at once
 * (`server.limits.max_scoring_requests`). Past it a new one is answered 503 with Retry-After in
 * `onRequest`, before its body is read or parsed: a server whose event loop is saturated then
 * refuses at the cost of a header, instead of queueing work whose latency only grows (issue 31).
 * A request holds its place until its response has ended or its client has gone.
 */
import type { FastifyInstance } from 'fastify';
import { wnwError } from '../../errors.js';
import type { LimitsConfig } from '../limits-config.js';

const SCORING_ROUTES = new Set(['/score', '/rerank']);
/** Seconds a refused client is told to wait: a scoring request lasts well under that when the server keeps up. */
export const BUSY_RETRY_AFTER_S = 1;

export function installScoringAdmission(app: FastifyInstance, limits: Pick<LimitsConfig, 'max_scoring_requests'>): void {
  const cap = limits.max_scoring_requests;
  if (cap <= 0) return;
  let active = 0;
  app.addHook('onRequest', async (request, reply) => {
    if (request.method !== 'POST' || !SCORING_ROUTES.has(request.url.split('?')[0]!)) return;
    if (active >= cap) {
      throw wnwError('WNW_ERR_LIMIT_BUSY', `${active} scoring requests are in progress (server.limits.max_scoring_requests); retry later`, {
        details: { limit: cap, setting: 'server.limits.max_scoring_requests', retry_after_s: BUSY_RETRY_AFTER_S },
        retryable: true,
      });
    }
    active += 1;
    // 'close' comes once, whether the answer was sent or the client left first.
    reply.raw.once('close', () => {
      active -= 1;
    });
  });
}
