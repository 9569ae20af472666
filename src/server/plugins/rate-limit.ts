/**
 * Per-key rate limit: a token bucket per API key (per client address when the server has no
 * keys), refilled at `rate_per_minute`, holding at most `rate_burst`. A request finding the bucket
 * empty is refused with 429 and a Retry-After of the seconds until the next token. Health checks
 * and /metrics are exempt, so a limited key can still be watched.
 */
import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { wnwError } from '../../errors.js';
import { presentedKey } from './auth.js';
import type { LimitsConfig } from '../limits-config.js';

const EXEMPT_ROUTES = new Set(['/healthz', '/readyz', '/metrics']);
/** Buckets kept; past it the least recently used is dropped (it refills to full anyway when idle). */
const MAX_BUCKETS = 10_000;

interface Bucket {
  tokens: number;
  at: number;
}

export interface RateLimiter {
  /** Takes a token for `key`; 0 when granted, else the seconds until one is available. */
  take(key: string, now?: number): number;
}

export function createRateLimiter(ratePerMinute: number, burst: number): RateLimiter {
  const perMs = ratePerMinute / 60_000;
  const buckets = new Map<string, Bucket>();
  return {
    take(key, now = Date.now()) {
      const bucket = buckets.get(key) ?? { tokens: burst, at: now };
      buckets.delete(key);
      bucket.tokens = Math.min(burst, bucket.tokens + (now - bucket.at) * perMs);
      bucket.at = now;
      buckets.set(key, bucket);
      if (buckets.size > MAX_BUCKETS) buckets.delete(buckets.keys().next().value!);
      if (bucket.tokens >= 1) {
        bucket.tokens -= 1;
        return 0;
      }
      return Math.max(1, Math.ceil((1 - bucket.tokens) / perMs / 1000));
    },
  };
}

/**
 * Who a request counts against: on a server with keys, a digest of the key it sent (never the key
 * itself; authentication has already refused unknown ones); without keys, its address, since any
 * made-up key would otherwise get a fresh bucket.
 */
function clientKey(request: FastifyRequest, keyed: boolean): string {
  const given = keyed ? presentedKey(request) : undefined;
  return given ? `key:${createHash('sha256').update(given).digest('hex').slice(0, 32)}` : `ip:${request.ip}`;
}

/** Installs the limit after authentication (registered after installAuth), so only accepted keys spend tokens. `keyed`: the server has API keys. */
export function installRateLimit(app: FastifyInstance, limits: Pick<LimitsConfig, 'rate_per_minute' | 'rate_burst'>, keyed: boolean): void {
  if (limits.rate_per_minute <= 0) return;
  const burst = limits.rate_burst ?? Math.max(1, Math.floor(limits.rate_per_minute / 10));
  const limiter = createRateLimiter(limits.rate_per_minute, burst);
  app.addHook('onRequest', async (request) => {
    if (EXEMPT_ROUTES.has(request.url.split('?')[0]!)) return;
    const wait = limiter.take(clientKey(request, keyed));
    if (wait > 0) {
      throw wnwError(
        'WNW_ERR_LIMIT_RATE',
        `rate limit of ${limits.rate_per_minute} requests per minute reached (server.limits.rate_per_minute); retry in ${wait} s`,
        {
          details: { limit_per_minute: limits.rate_per_minute, burst, setting: 'server.limits.rate_per_minute', retry_after_s: wait },
          retryable: true,
        },
      );
    }
  });
}
