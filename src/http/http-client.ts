/**
 * The one HTTP client of winnower's outbound calls: the server scorers (SGLang, vLLM,
 * OpenAI-compatible), the policy clients and the recording proxy's upstream. One keep-alive
 * undici `Pool` per base URL; each call goes to the base URL with the fewest requests in flight
 * (passing over one that just failed), under one deadline that covers every attempt. Transient failures (connection errors, 408, 429,
 * 500, 502, 503, 504) are retried with exponential backoff and full jitter, honouring `Retry-After`;
 * other statuses (4xx, 501 Not Implemented, 505, ...) and malformed bodies never are. Every response
 * is validated with zod.
 */
import { Pool } from 'undici';
import type { z } from 'zod';
import { WinnowerError, wnwError, type ErrorCode } from '../errors.js';
import { DEFAULT_CONNECTIONS_PER_URL } from './connections.js';
import { requestIdHeaders } from '../observability/request-context.js';
import { readCapped } from '../util/read-capped.js';

export interface HttpClientOptions {
  /** Base URLs of interchangeable replicas (`http://host:port`, optionally with a path prefix). */
  urls: string[];
  /** Sent as `Authorization: Bearer <apiKey>`. */
  apiKey?: string;
  /** Extra headers on every request. */
  headers?: Record<string, string>;
  /** Deadline of one call, all attempts and waits included (ms). */
  timeoutMs: number;
  /** Extra attempts after a transient failure. */
  retries: number;
  /** First backoff step and cap (ms); defaults 200 and 5000. */
  backoff?: { initialMs?: number; maxMs?: number };
  /** Longest `Retry-After` honoured (ms, default 30000); a longer one ends the call. */
  maxRetryAfterMs?: number;
  /** Connections per base URL (default DEFAULT_CONNECTIONS_PER_URL). */
  connections?: number;
  /** Keep-alive of idle sockets (ms, default 30000). */
  keepAliveMs?: number;
  /** Largest answer body read (bytes); a larger one is a response error, not retried. Default: no cap. */
  maxResponseBytes?: number;
  /** Codes of the errors it throws; the scorers' by default, the policy client passes its own. */
  errorCodes?: { upstream: ErrorCode; response: ErrorCode; timeout: ErrorCode };
}

const SCORER_ERROR_CODES = {
  upstream: 'WNW_ERR_SCORE_UPSTREAM',
  response: 'WNW_ERR_SCORE_RESPONSE',
  timeout: 'WNW_ERR_SCORE_TIMEOUT',
} as const;

export interface PostJsonOptions<T> {
  /** Path below the base URL, starting with `/`. */
  path: string;
  body: unknown;
  /** Validates the response; a mismatch is WNW_ERR_SCORE_RESPONSE naming the field. */
  schema: z.ZodType<T>;
  signal?: AbortSignal;
}

/** Upstream statuses that repeating the same request may cure; 501, 505 and the like never will. */
const RETRYABLE_STATUSES = new Set([408, 429, 500, 502, 503, 504]);

/** An upstream status that repeating the same request may cure. */
export function isRetryableStatus(status: number): boolean {
  return RETRYABLE_STATUSES.has(status);
}

const CONNECTION_ERROR_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
]);

const BODY_EXCERPT_CHARS = 500;

interface Upstream {
  base: string;
  origin: string;
  prefix: string;
  pool: Pool;
  outstanding: number;
  /** Consecutive transient failures, and until when the replica is passed over because of them. */
  failures: number;
  restingUntil: number;
}

export class HttpClient {
  readonly #options: HttpClientOptions;
  readonly #upstreams: Upstream[];
  readonly #headers: Record<string, string>;
  /** The same without content-type: a GET has no body. */
  readonly #getHeaders: Record<string, string>;
  readonly #codes: NonNullable<HttpClientOptions['errorCodes']>;
  #next = 0;
  #closed = false;

  constructor(options: HttpClientOptions) {
    if (options.urls.length === 0) {
      throw wnwError('WNW_ERR_CFG_INVALID', 'scorer needs at least one base URL', { details: { field: 'urls' } });
    }
    this.#options = options;
    this.#codes = options.errorCodes ?? SCORER_ERROR_CODES;
    this.#headers = {
      'content-type': 'application/json',
      accept: 'application/json',
      ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}),
      ...options.headers,
    };
    const { 'content-type': _contentType, ...getHeaders } = this.#headers;
    this.#getHeaders = getHeaders;
    this.#upstreams = options.urls.map((base) => {
      let url: URL;
      try {
        url = new URL(base);
      } catch (error) {
        throw wnwError('WNW_ERR_CFG_INVALID', `not a URL: ${base}`, { cause: error, details: { field: 'urls' } });
      }
      const pool = new Pool(url.origin, {
        connections: options.connections ?? DEFAULT_CONNECTIONS_PER_URL,
        keepAliveTimeout: options.keepAliveMs ?? 30_000,
        // The call deadline bounds every wait; undici's own 300 s timers would only get in the way.
        headersTimeout: 0,
        bodyTimeout: 0,
      });
      return { base, origin: url.origin, prefix: url.pathname.replace(/\/+$/, ''), pool, outstanding: 0, failures: 0, restingUntil: 0 };
    });
  }

  /** Requests in flight per base URL, in the order given. */
  outstanding(): number[] {
    return this.#upstreams.map((upstream) => upstream.outstanding);
  }

  /** POSTs `body` as JSON and returns the validated response. */
  postJson<T>(options: PostJsonOptions<T>): Promise<T> {
    return this.#call('POST', options);
  }

  /** GETs `path` (a server's feature probe, e.g. `/v1/models`), with the same retries and checks as a POST. */
  getJson<T>(options: Omit<PostJsonOptions<T>, 'body'>): Promise<T> {
    return this.#call('GET', { ...options, body: undefined });
  }

  async #call<T>(method: 'GET' | 'POST', options: PostJsonOptions<T>): Promise<T> {
    if (this.#closed) throw wnwError('WNW_ERR_OP_ABORTED', 'HTTP client is closed');
    const { timeoutMs, retries } = this.#options;
    const deadline = AbortSignal.timeout(timeoutMs);
    const signal = options.signal ? AbortSignal.any([options.signal, deadline]) : deadline;
    const started = Date.now();
    const body = method === 'GET' ? undefined : JSON.stringify(options.body);
    let avoid: Upstream | undefined;
    for (let attempt = 0; ; attempt += 1) {
      const upstream = this.#pick(avoid);
      try {
        const result = await this.#attempt(method, upstream, options, body, signal);
        upstream.failures = 0;
        return result;
      } catch (error) {
        const failure = this.#classify(error, method, upstream, options.path, options.signal, deadline, timeoutMs);
        if (failure.retryable) this.#rest(upstream);
        if (!failure.retryable || attempt >= retries) throw failure.error;
        const waitMs = this.#backoffMs(attempt, failure.retryAfterMs);
        const remaining = timeoutMs - (Date.now() - started);
        if (waitMs === undefined || waitMs >= remaining) throw failure.error;
        avoid = upstream;
        await sleep(waitMs, signal).catch(() => {
          throw this.#classify(signal.reason, method, upstream, options.path, options.signal, deadline, timeoutMs).error;
        });
      }
    }
  }

  /** Closes every pool after its requests finish; idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await Promise.all(this.#upstreams.map((upstream) => upstream.pool.close()));
  }

  /**
   * Least outstanding requests among the replicas not resting after a transient failure (all of
   * them when every one rests); ties go round-robin, and `avoid` (the replica that just failed)
   * loses ties. Resting keeps a dead replica, always at 0 outstanding, from drawing every request.
   */
  #pick(avoid: Upstream | undefined): Upstream {
    const now = Date.now();
    const count = this.#upstreams.length;
    const awake = this.#upstreams.some((upstream) => upstream.restingUntil <= now);
    let best: Upstream | undefined;
    for (let offset = 0; offset < count; offset += 1) {
      const candidate = this.#upstreams[(this.#next + offset) % count]!;
      if (awake && candidate.restingUntil > now) continue;
      if (best === undefined || rank(candidate, avoid) < rank(best, avoid)) best = candidate;
    }
    this.#next = (this.#next + 1) % count;
    return best!;
  }

  /** Passes a replica over for 0.5 s after a transient failure, doubling per failure in a row up to 30 s. */
  #rest(upstream: Upstream): void {
    upstream.failures += 1;
    upstream.restingUntil = Date.now() + Math.min(30_000, 500 * 2 ** (upstream.failures - 1));
  }

  async #attempt<T>(
    method: 'GET' | 'POST',
    upstream: Upstream,
    options: PostJsonOptions<T>,
    body: string | undefined,
    signal: AbortSignal,
  ): Promise<T> {
    upstream.outstanding += 1;
    try {
      const response = await upstream.pool.request({
        method,
        path: upstream.prefix + options.path,
        // The id of the request this call serves (a batch: of the request that opened it), for the upstream's logs.
        headers: { ...(body === undefined ? this.#getHeaders : this.#headers), ...requestIdHeaders() },
        ...(body === undefined ? {} : { body }),
        signal,
      });
      const url = upstream.base.replace(/\/+$/, '') + options.path;
      const cap = this.#options.maxResponseBytes;
      let text: string;
      if (cap === undefined) text = await response.body.text();
      else {
        const bytes = await readCapped(response.body, cap, response.headers['content-length']);
        if (bytes === undefined) {
          throw wnwError(this.#codes.response, `${method} ${url}: answer is larger than ${cap} bytes`, {
            details: { url, status: response.statusCode, maxBytes: cap },
          });
        }
        text = bytes.toString('utf8');
      }
      if (response.statusCode >= 400) {
        throw new UpstreamStatus(response.statusCode, url, text, retryAfterMs(response.headers['retry-after']));
      }
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch (error) {
        throw wnwError(this.#codes.response, `${method} ${url}: body is not JSON: ${excerpt(text, 120)}`, {
          cause: error,
          details: { url, status: response.statusCode, body: excerpt(text) },
        });
      }
      const parsed = options.schema.safeParse(json);
      if (!parsed.success) {
        throw wnwError(this.#codes.response, `${method} ${url}: ${describeIssues(parsed.error)}`, {
          cause: parsed.error,
          details: { url, status: response.statusCode, body: excerpt(text) },
        });
      }
      return parsed.data;
    } finally {
      upstream.outstanding -= 1;
    }
  }

  #classify(
    error: unknown,
    method: 'GET' | 'POST',
    upstream: Upstream,
    path: string,
    callerSignal: AbortSignal | undefined,
    deadline: AbortSignal,
    timeoutMs: number,
  ): { error: WinnowerError; retryable: boolean; retryAfterMs?: number } {
    const url = upstream.base.replace(/\/+$/, '') + path;
    if (callerSignal?.aborted) {
      return {
        error: wnwError('WNW_ERR_OP_ABORTED', `${method} ${url} cancelled`, { cause: callerSignal.reason, details: { url } }),
        retryable: false,
      };
    }
    if (deadline.aborted) {
      return {
        error: wnwError(this.#codes.timeout, `${method} ${url}: no answer within ${timeoutMs} ms`, {
          cause: error,
          details: { url, timeoutMs },
        }),
        retryable: false,
      };
    }
    if (error instanceof UpstreamStatus) {
      const retryable = isRetryableStatus(error.status);
      return {
        error: wnwError(this.#codes.upstream, `${method} ${url} answered ${error.status}: ${excerpt(error.body, 200)}`, {
          retryable,
          details: { url, status: error.status, body: excerpt(error.body) },
        }),
        retryable,
        ...(error.retryAfterMs === undefined ? {} : { retryAfterMs: error.retryAfterMs }),
      };
    }
    if (WinnowerError.isInstance(error)) return { error, retryable: false };
    const code = (error as { code?: unknown } | null)?.code;
    const retryable = typeof code === 'string' && CONNECTION_ERROR_CODES.has(code);
    const message = error instanceof Error ? error.message : String(error);
    return {
      error: wnwError(this.#codes.upstream, `${method} ${url} failed: ${message}`, {
        cause: error,
        retryable,
        details: { url, ...(typeof code === 'string' ? { errorCode: code } : {}) },
      }),
      retryable,
    };
  }

  /** Full-jitter exponential backoff, at least `Retry-After`; undefined when that is too long. */
  #backoffMs(attempt: number, retryAfter: number | undefined): number | undefined {
    const initial = this.#options.backoff?.initialMs ?? 200;
    const max = this.#options.backoff?.maxMs ?? 5_000;
    const jittered = Math.random() * Math.min(max, initial * 2 ** attempt);
    if (retryAfter === undefined) return jittered;
    if (retryAfter > (this.#options.maxRetryAfterMs ?? 30_000)) return undefined;
    return Math.max(retryAfter, jittered);
  }
}

export function createHttpClient(options: HttpClientOptions): HttpClient {
  return new HttpClient(options);
}

class UpstreamStatus extends Error {
  constructor(
    readonly status: number,
    readonly url: string,
    readonly body: string,
    readonly retryAfterMs: number | undefined,
  ) {
    super(`status ${status}`);
  }
}

function rank(upstream: Upstream, avoid: Upstream | undefined): number {
  return upstream.outstanding * 2 + (upstream === avoid ? 1 : 0);
}

/** `Retry-After` as delta-seconds or an HTTP date, in ms. */
export function retryAfterMs(header: string | string[] | undefined, now = Date.now()): number | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined || value.trim() === '') return undefined;
  if (/^\d+(\.\d+)?$/.test(value.trim())) return Math.round(Number(value) * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** `data[0].probs: expected array, received undefined; ...` (first three issues). */
export function describeIssues(error: z.ZodError): string {
  const issues = error.issues.slice(0, 3).map((issue) => {
    const path = issue.path.map((part, index) => (typeof part === 'number' ? `[${part}]` : `${index ? '.' : ''}${String(part)}`)).join('');
    return `${path || '(root)'}: ${issue.message}`;
  });
  const more = error.issues.length > 3 ? ` (+${error.issues.length - 3} more)` : '';
  return `unexpected response: ${issues.join('; ')}${more}`;
}

function excerpt(text: string, chars = BODY_EXCERPT_CHARS): string {
  return text.length <= chars ? text : `${text.slice(0, chars)}…`;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
