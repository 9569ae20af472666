/**
 * The HTTP client of the Orchard Env REST API: API key, per-request deadline, backoff on
 * connection errors (only where a repeat is harmless), response validation with zod, and the
 * `X-Request-ID` of the answer in every error's message and details.
 */
import { setTimeout as sleepTimer } from 'node:timers/promises';
import { Agent, request, type Dispatcher } from 'undici';
import type { z } from 'zod';
import { wnwError, WinnowerError, type ErrorCode } from '../../../errors.js';
import { readCapped } from '../../../util/read-capped.js';
import { OrchardErrorBody } from './api-types.js';

export interface OrchardClientOptions {
  baseUrl: string;
  apiKey?: string;
  /** Deadline of one request without a server-side wait, in ms. */
  requestTimeoutMs: number;
  /** Extra attempts after a connection error, for calls that may be repeated. */
  retries: number;
  /** undici dispatcher to send through (default: a keep-alive Agent owned by this client). */
  dispatcher?: Dispatcher;
  /** Largest answer body read, in bytes (default 128 MiB); a call may raise it. */
  maxResponseBytes?: number;
}

export const DEFAULT_MAX_RESPONSE_BYTES = 128 * 1024 * 1024;

/** How a status other than 200 becomes an error: code and message (detail and request id are appended). */
export type StatusErrors = Partial<
  Record<number, { code: ErrorCode; message: string; retryable?: boolean; details?: Record<string, unknown> }>
>;

export interface OrchardCall<T> {
  method: 'GET' | 'POST' | 'DELETE';
  path: string;
  query?: Record<string, string | number>;
  body?: unknown;
  schema: z.ZodType<T>;
  /** `connection`: repeat after a connection error with backoff; `none`: never (exec POSTs). */
  retry: 'connection' | 'none';
  /** Overrides requestTimeoutMs (calls that wait on the server). */
  timeoutMs?: number;
  /**
   * Overrides the client's maxResponseBytes. The server caps nothing (a job carries a command's
   * whole output): a larger answer is dropped unread with WNW_ERR_SBX_UPSTREAM.
   */
  maxResponseBytes?: number;
  signal?: AbortSignal;
  errors?: StatusErrors;
}

export interface OrchardReply<T> {
  status: number;
  requestId: string | undefined;
  data: T;
}

const CONNECTION_ERROR_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ETIMEDOUT',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_CLOSED',
]);

/** Whether `error` (or one of its causes) is a failure to reach the server or a dropped connection. */
export function isConnectionError(error: unknown): boolean {
  for (let current = error, depth = 0; current && depth < 5; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && CONNECTION_ERROR_CODES.has(code)) return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}

/** `(request id X)` when there is one. */
export function requestIdSuffix(requestId: string | undefined): string {
  return requestId ? ` (request id ${requestId})` : '';
}

export class OrchardClient {
  readonly baseUrl: string;
  readonly requestTimeoutMs: number;
  readonly retries: number;
  readonly maxResponseBytes: number;
  readonly #apiKey: string | undefined;
  #dispatcher: Dispatcher | undefined;
  readonly #ownsDispatcher: boolean;

  constructor(options: OrchardClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.#apiKey = options.apiKey;
    this.requestTimeoutMs = options.requestTimeoutMs;
    this.retries = options.retries;
    this.maxResponseBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
    this.#dispatcher = options.dispatcher;
    this.#ownsDispatcher = options.dispatcher === undefined;
  }

  get hasApiKey(): boolean {
    return this.#apiKey !== undefined && this.#apiKey !== '';
  }

  /** Sends one call; repeats it after connection errors when `retry` allows. */
  async call<T>(call: OrchardCall<T>): Promise<OrchardReply<T>> {
    const attempts = call.retry === 'connection' ? this.retries + 1 : 1;
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.#once(call);
      } catch (error) {
        const transient = WinnowerError.isInstance(error) && error.details.connection === true;
        if (!transient || attempt >= attempts) throw error;
        await sleep(backoffMs(attempt), call.signal);
      }
    }
  }

  async close(): Promise<void> {
    if (this.#ownsDispatcher && this.#dispatcher) {
      const dispatcher = this.#dispatcher;
      this.#dispatcher = undefined;
      await dispatcher.close();
    }
  }

  async #once<T>(call: OrchardCall<T>): Promise<OrchardReply<T>> {
    const url = new URL(this.baseUrl + call.path);
    for (const [key, value] of Object.entries(call.query ?? {})) url.searchParams.set(key, String(value));
    const where = `${call.method} ${url.pathname}`;
    const timeoutMs = call.timeoutMs ?? this.requestTimeoutMs;
    const timeout = AbortSignal.timeout(timeoutMs);
    const signal = call.signal ? AbortSignal.any([call.signal, timeout]) : timeout;
    const headers: Record<string, string> = { accept: 'application/json' };
    if (this.#apiKey) headers['x-api-key'] = this.#apiKey;
    if (call.body !== undefined) headers['content-type'] = 'application/json';
    const baseDetails = { url: url.toString(), method: call.method };

    let status: number;
    let requestId: string | undefined;
    let text: string | undefined;
    let retryAfter: string | undefined;
    const maxBytes = call.maxResponseBytes ?? this.maxResponseBytes;
    try {
      const response = await request(url, {
        method: call.method,
        headers,
        body: call.body === undefined ? null : JSON.stringify(call.body),
        signal,
        dispatcher: this.#getDispatcher(),
      });
      status = response.statusCode;
      requestId = headerValue(response.headers['x-request-id']);
      retryAfter = headerValue(response.headers['retry-after']);
      text = (await readCapped(response.body, maxBytes, response.headers['content-length']))?.toString('utf8');
    } catch (error) {
      if (call.signal?.aborted) {
        throw wnwError('WNW_ERR_OP_ABORTED', `${where} cancelled`, { cause: error, details: baseDetails });
      }
      if (timeout.aborted) {
        throw wnwError('WNW_ERR_SBX_TIMEOUT', `Orchard Env did not answer ${where} within ${timeoutMs} ms`, {
          cause: error,
          details: { ...baseDetails, timeoutMs },
          retryable: true,
        });
      }
      const connection = isConnectionError(error);
      const reason = error instanceof Error ? error.message : String(error);
      throw wnwError('WNW_ERR_SBX_UPSTREAM', `Orchard Env at ${this.baseUrl} unreachable during ${where}: ${reason}`, {
        cause: error,
        details: { ...baseDetails, connection },
        retryable: connection,
      });
    }

    const suffix = requestIdSuffix(requestId);
    const details = { ...baseDetails, status, requestId };
    if (text === undefined) {
      throw wnwError(
        'WNW_ERR_SBX_UPSTREAM',
        `Orchard Env's answer to ${where} is larger than ${maxBytes} bytes and was dropped unread${suffix}`,
        {
          details: { ...details, maxResponseBytes: maxBytes, tooLarge: true },
        },
      );
    }
    let json: unknown;
    try {
      json = text === '' ? undefined : JSON.parse(text);
    } catch (error) {
      throw wnwError('WNW_ERR_SBX_UPSTREAM', `Orchard Env sent a malformed (non-JSON) answer to ${where} with status ${status}${suffix}`, {
        cause: error,
        details: { ...details, body: text.slice(0, 500) },
        retryable: status >= 500,
      });
    }

    if (status !== 200) {
      const parsedError = OrchardErrorBody.safeParse(json);
      const detail = parsedError.success ? describeDetail(parsedError.data) : undefined;
      const withDetail = { ...details, ...(detail ? { detail } : {}), ...(retryAfter ? { retryAfter } : {}) };
      const tail = `${detail ? `: ${detail}` : ''}${suffix}`;
      const mapped = call.errors?.[status];
      if (mapped) {
        throw wnwError(mapped.code, `${mapped.message}${tail}`, {
          details: { ...mapped.details, ...withDetail },
          retryable: mapped.retryable ?? false,
        });
      }
      if (status === 401 || status === 403) {
        const what = status === 401 ? 'requires an API key' : 'rejected the API key';
        throw wnwError(
          'WNW_ERR_SBX_UPSTREAM',
          `Orchard Env ${what} (${status}) for ${where}; set SANDBOX_API_KEY or the provider's apiKey${tail}`,
          {
            details: withDetail,
          },
        );
      }
      throw wnwError('WNW_ERR_SBX_UPSTREAM', `Orchard Env answered ${status} to ${where}${tail}`, {
        details: withDetail,
        retryable: status >= 500 || status === 408 || status === 429,
      });
    }

    const parsed = call.schema.safeParse(json);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const at = issue ? `${issue.path.join('.') || '(root)'}: ${issue.message}` : 'invalid';
      throw wnwError('WNW_ERR_SBX_UPSTREAM', `Orchard Env sent an unexpected answer to ${where} (${at})${suffix}`, {
        details: { ...details, body: text.slice(0, 500) },
      });
    }
    return { status, requestId, data: parsed.data };
  }

  #getDispatcher(): Dispatcher {
    // No undici-level timeouts: each call carries its own deadline as a signal, and calls that
    // wait on the server (exec with wait, /wait) may legitimately take many minutes.
    this.#dispatcher ??= new Agent({ headersTimeout: 0, bodyTimeout: 0, keepAliveTimeout: 10_000 });
    return this.#dispatcher;
  }
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function describeDetail(body: OrchardErrorBody): string | undefined {
  const detail = body.detail;
  const text = typeof detail === 'string' ? detail : detail === undefined ? undefined : JSON.stringify(detail);
  if (body.error && text) return `${body.error}: ${text}`;
  return text ?? body.error;
}

/** Exponential backoff with jitter: ~200 ms, 400 ms, 800 ms ... capped at 5 s. */
export function backoffMs(attempt: number, random: () => number = Math.random): number {
  const base = Math.min(5_000, 200 * 2 ** (attempt - 1));
  return base / 2 + random() * (base / 2);
}

/** Sleeps, or throws WNW_ERR_OP_ABORTED when the signal fires first. */
export async function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  try {
    await sleepTimer(ms, undefined, signal ? { signal } : undefined);
  } catch (error) {
    throw wnwError('WNW_ERR_OP_ABORTED', 'operation cancelled', { cause: error });
  }
}
