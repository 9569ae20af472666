/**
 * The HTTP client of the Docker Engine API over its unix socket (undici Agent with
 * `connect.socketPath`): API version prefix, per-request deadline, error bodies mapped to coded
 * errors, and a clear WNW_ERR_SBX_UNAVAILABLE when there is no engine to talk to.
 */
import { stat } from 'node:fs/promises';
import { Agent, request, type Dispatcher } from 'undici';
import type { z } from 'zod';
import { wnwError, WinnowerError, type ErrorCode } from '../../errors.js';
import { DockerErrorBody } from './docker-api-types.js';

export interface DockerClientOptions {
  socketPath: string;
  /** `v1.43` */
  apiVersion: string;
  /** Deadline of one request that does not stream, in ms. */
  requestTimeoutMs: number;
}

export type DockerStatusErrors = Partial<Record<number, { code: ErrorCode; message: string; details?: Record<string, unknown> }>>;

export interface DockerCall {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE' | 'HEAD';
  path: string;
  query?: Record<string, string | number | boolean>;
  /** Sent as JSON. */
  json?: unknown;
  /** Sent as is (a tar archive). */
  body?: Buffer;
  /** Statuses that are not errors (default 200, 201, 204). */
  ok?: number[];
  /** Overrides requestTimeoutMs; null for none (streams that last as long as a command). */
  timeoutMs?: number | null;
  signal?: AbortSignal;
  errors?: DockerStatusErrors;
}

export interface DockerResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Dispatcher.ResponseData['body'];
}

/** Errors that mean there is no engine behind the socket (as opposed to a dropped connection). */
const UNAVAILABLE_CODES = new Set(['ENOENT', 'ECONNREFUSED', 'EACCES', 'ENOTSOCK']);

export class DockerClient {
  readonly socketPath: string;
  readonly apiVersion: string;
  readonly requestTimeoutMs: number;
  #dispatcher: Agent | undefined;
  #checked: Promise<void> | undefined;

  constructor(options: DockerClientOptions) {
    this.socketPath = options.socketPath;
    this.apiVersion = options.apiVersion.startsWith('v') ? options.apiVersion : `v${options.apiVersion}`;
    this.requestTimeoutMs = options.requestTimeoutMs;
  }

  /** Checks once that the socket exists; WNW_ERR_SBX_UNAVAILABLE otherwise. */
  ready(): Promise<void> {
    this.#checked ??= stat(this.socketPath).then(
      (info) => {
        if (!info.isSocket()) throw this.#unavailable(`${this.socketPath} is not a unix socket`);
      },
      (error: NodeJS.ErrnoException) => {
        this.#checked = undefined;
        throw this.#unavailable(error.code === 'ENOENT' ? `no Docker socket at ${this.socketPath}` : `cannot use ${this.socketPath}: ${error.message}`, error);
      },
    );
    return this.#checked;
  }

  /** Sends a call and returns the response with its body unread (for streams and archives). */
  async send(call: DockerCall): Promise<DockerResponse> {
    await this.ready();
    const path = `/${this.apiVersion}${call.path}`;
    const query = new URLSearchParams(Object.entries(call.query ?? {}).map(([key, value]): [string, string] => [key, String(value)]));
    const where = `${call.method} ${call.path}`;
    const timeoutMs = call.timeoutMs === undefined ? this.requestTimeoutMs : call.timeoutMs;
    const timeout = timeoutMs === null ? undefined : AbortSignal.timeout(timeoutMs);
    const signals = [call.signal, timeout].filter((signal): signal is AbortSignal => signal !== undefined);
    const signal = signals.length > 1 ? AbortSignal.any(signals) : signals[0];
    const headers: Record<string, string> = {};
    let body: string | Buffer | null = null;
    if (call.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(call.json);
    } else if (call.body !== undefined) {
      headers['content-type'] = 'application/x-tar';
      body = call.body;
    }
    let response: Dispatcher.ResponseData;
    try {
      response = await request(`http://docker${path}${query.size ? `?${query}` : ''}`, {
        method: call.method,
        headers,
        body,
        ...(signal ? { signal } : {}),
        dispatcher: this.#getDispatcher(),
      });
    } catch (error) {
      throw this.#transportError(error, where, call.signal, timeout, timeoutMs);
    }
    const ok = call.ok ?? [200, 201, 204];
    if (ok.includes(response.statusCode)) return { status: response.statusCode, headers: response.headers, body: response.body };

    let text = '';
    try {
      text = await response.body.text();
    } catch (error) {
      throw this.#transportError(error, where, call.signal, timeout, timeoutMs);
    }
    let message: string | undefined;
    try {
      const parsed = DockerErrorBody.safeParse(JSON.parse(text));
      message = parsed.success ? parsed.data.message : undefined;
    } catch {
      message = text.trim().slice(0, 300) || undefined;
    }
    const status = response.statusCode;
    const details = { method: call.method, path: call.path, status, ...(message ? { message } : {}) };
    const mapped = call.errors?.[status];
    if (mapped) throw wnwError(mapped.code, `${mapped.message}${message ? `: ${message}` : ''}`, { details: { ...mapped.details, ...details } });
    throw wnwError('WNW_ERR_SBX_UPSTREAM', `Docker Engine answered ${status} to ${where}${message ? `: ${message}` : ''}`, {
      details,
      retryable: status >= 500,
    });
  }

  /** Sends a call and parses its JSON answer with `schema`. */
  async json<T>(call: DockerCall, schema: z.ZodType<T>): Promise<T> {
    const response = await this.send(call);
    const where = `${call.method} ${call.path}`;
    let text: string;
    try {
      text = await response.body.text();
    } catch (error) {
      throw this.#transportError(error, where, call.signal, undefined, null);
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (error) {
      throw wnwError('WNW_ERR_SBX_UPSTREAM', `Docker Engine sent a malformed (non-JSON) answer to ${where}`, {
        cause: error,
        details: { method: call.method, path: call.path, status: response.status, body: text.slice(0, 300) },
      });
    }
    const parsed = schema.safeParse(json);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw wnwError('WNW_ERR_SBX_UPSTREAM', `Docker Engine sent an unexpected answer to ${where} (${issue ? `${issue.path.join('.') || '(root)'}: ${issue.message}` : 'invalid'})`, {
        details: { method: call.method, path: call.path, status: response.status, body: text.slice(0, 300) },
      });
    }
    return parsed.data;
  }

  /** Sends a call whose answer has no body worth reading; returns the status. */
  async empty(call: DockerCall): Promise<number> {
    const response = await this.send(call);
    await response.body.dump();
    return response.status;
  }

  async close(): Promise<void> {
    const dispatcher = this.#dispatcher;
    this.#dispatcher = undefined;
    await dispatcher?.close();
  }

  #getDispatcher(): Agent {
    // No undici-level timeouts: each call carries its own deadline, and exec streams last as long as the command.
    this.#dispatcher ??= new Agent({ connect: { socketPath: this.socketPath }, headersTimeout: 0, bodyTimeout: 0 });
    return this.#dispatcher;
  }

  #transportError(error: unknown, where: string, callSignal: AbortSignal | undefined, timeout: AbortSignal | undefined, timeoutMs: number | null): WinnowerError {
    if (WinnowerError.isInstance(error)) return error;
    if (callSignal?.aborted) return wnwError('WNW_ERR_OP_ABORTED', `${where} cancelled`, { cause: error });
    if (timeout?.aborted) {
      return wnwError('WNW_ERR_SBX_TIMEOUT', `Docker Engine did not answer ${where} within ${timeoutMs} ms`, {
        cause: error,
        details: { path: where, timeoutMs },
        retryable: true,
      });
    }
    const code = errorCode(error);
    if (code && UNAVAILABLE_CODES.has(code)) {
      return this.#unavailable(code === 'EACCES' ? `permission denied on ${this.socketPath} (add this user to the docker group)` : `cannot connect to ${this.socketPath} (${code})`, error);
    }
    const reason = error instanceof Error ? error.message : String(error);
    return wnwError('WNW_ERR_SBX_UPSTREAM', `connection to Docker Engine lost during ${where}: ${reason}`, {
      cause: error,
      details: { path: where, ...(code ? { errorCode: code } : {}), connection: true },
      retryable: true,
    });
  }

  #unavailable(what: string, cause?: unknown): WinnowerError {
    return wnwError(
      'WNW_ERR_SBX_UNAVAILABLE',
      `Docker Engine is not available: ${what}. Is the Docker engine running? Point DOCKER_HOST=unix:///path/to/docker.sock or the provider's socketPath at its socket.`,
      { cause, details: { socketPath: this.socketPath } },
    );
  }
}

function errorCode(error: unknown): string | undefined {
  for (let current = error, depth = 0; current && depth < 5; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}
