/**
 * The HTTP client of the Docker Engine API over its unix socket (undici Agent with
 * `connect.socketPath`): API version negotiated with the engine on first use (or fixed by the
 * caller), per-request deadline, error bodies mapped to coded errors, and a clear
 * WNW_ERR_SBX_UNAVAILABLE when there is no engine to talk to, or none this client can speak to.
 */
import { stat } from 'node:fs/promises';
import { Agent, request, type Dispatcher } from 'undici';
import type { z } from 'zod';
import { wnwError, WinnowerError, type ErrorCode } from '../../../errors.js';
import { DockerErrorBody, DockerVersion } from './api-types.js';
import { chooseApiVersion, type EngineApiRange } from './api-version.js';

export interface DockerClientOptions {
  socketPath: string;
  /** A fixed version (`v1.43`); negotiated with the engine when absent. */
  apiVersion?: string;
  /** Deadline of one request that does not stream, in ms. */
  requestTimeoutMs: number;
}

export type DockerStatusErrors = Partial<Record<number, { code: ErrorCode; message: string; details?: Record<string, unknown> }>>;

export interface DockerCall {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE' | 'HEAD';
  path: string;
  /** Sent without the version prefix (`/_ping`, `/version`, which negotiation itself uses). */
  unversioned?: boolean;
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

/** The engine's refusal of the version prefix, whatever the endpoint: "client version 1.43 is too new. ..." */
const VERSION_REFUSED = /^client version \S+ is too (new|old)/i;

/** Errors that mean there is no engine behind the socket (as opposed to a dropped connection). */
const UNAVAILABLE_CODES = new Set(['ENOENT', 'ECONNREFUSED', 'EACCES', 'ENOTSOCK']);

export class DockerClient {
  readonly socketPath: string;
  readonly requestTimeoutMs: number;
  /** The caller's fixed version, when it gave one. */
  readonly #fixedVersion: string | undefined;
  #dispatcher: Agent | undefined;
  #checked: Promise<void> | undefined;
  #negotiated: Promise<string> | undefined;
  /** The version in use once known (for messages). */
  #version: string | undefined;

  constructor(options: DockerClientOptions) {
    this.socketPath = options.socketPath;
    this.#fixedVersion =
      options.apiVersion === undefined ? undefined : options.apiVersion.startsWith('v') ? options.apiVersion : `v${options.apiVersion}`;
    this.#version = this.#fixedVersion;
    this.requestTimeoutMs = options.requestTimeoutMs;
  }

  /** The API version prefix in use (`v1.41`): the fixed one, else negotiated once with the engine. */
  apiVersion(signal?: AbortSignal): Promise<string> {
    if (this.#fixedVersion) return Promise.resolve(this.#fixedVersion);
    this.#negotiated ??= this.#negotiate(signal).then(
      (version) => (this.#version = version),
      (error: unknown) => {
        // A later call may find the engine up (or a newer one): negotiate again then.
        this.#negotiated = undefined;
        throw error;
      },
    );
    return this.#negotiated;
  }

  /** The engine's range: `/_ping`'s Api-Version header (its newest), `/version` for its oldest too. */
  async #negotiate(signal: AbortSignal | undefined): Promise<string> {
    const ping = await this.send({
      method: 'GET',
      path: '/_ping',
      unversioned: true,
      timeoutMs: Math.min(this.requestTimeoutMs, 10_000),
      ...(signal ? { signal } : {}),
    });
    await ping.body.dump();
    const header = ping.headers['api-version'];
    const range: Partial<EngineApiRange> = { ...(typeof header === 'string' && header ? { max: header } : {}) };
    try {
      const version = await this.json(
        {
          method: 'GET',
          path: '/version',
          unversioned: true,
          timeoutMs: Math.min(this.requestTimeoutMs, 10_000),
          ...(signal ? { signal } : {}),
        },
        DockerVersion,
      );
      range.max ??= version.ApiVersion;
      if (version.MinAPIVersion) range.min = version.MinAPIVersion;
    } catch (error) {
      // Without /version the ping's header still names the newest version; the oldest stays unknown.
      if (!range.max || !WinnowerError.isInstance(error) || error.code !== 'WNW_ERR_SBX_UPSTREAM') throw error;
    }
    if (!range.max)
      throw wnwError(
        'WNW_ERR_SBX_UPSTREAM',
        `Docker Engine at ${this.socketPath} named no API version (no Api-Version header on /_ping, no ApiVersion in /version)`,
        { details: { socketPath: this.socketPath } },
      );
    const chosen = chooseApiVersion({ max: range.max, ...(range.min ? { min: range.min } : {}) });
    if ('problem' in chosen) throw this.#incompatible(chosen.problem, { engineApi: range });
    return chosen.version;
  }

  /** Checks once that the socket exists; WNW_ERR_SBX_UNAVAILABLE otherwise. */
  ready(): Promise<void> {
    this.#checked ??= stat(this.socketPath).then(
      (info) => {
        if (!info.isSocket()) throw this.#unavailable(`${this.socketPath} is not a unix socket`);
      },
      (error: NodeJS.ErrnoException) => {
        this.#checked = undefined;
        throw this.#unavailable(
          error.code === 'ENOENT' ? `no Docker socket at ${this.socketPath}` : `cannot use ${this.socketPath}: ${error.message}`,
          error,
        );
      },
    );
    return this.#checked;
  }

  /** Sends a call and returns the response with its body unread (for streams and archives). */
  async send(call: DockerCall): Promise<DockerResponse> {
    await this.ready();
    const path = call.unversioned ? call.path : `/${await this.apiVersion(call.signal)}${call.path}`;
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
    // The engine refusing the version is about the engine, not this call (a create, an exec).
    if (status === 400 && message && VERSION_REFUSED.test(message)) {
      throw this.#incompatible(
        `it refuses API ${this.#version ?? '(unversioned)'} (${message}); leave sandbox.settings.apiVersion unset to negotiate`,
        details,
      );
    }
    const mapped = call.errors?.[status];
    if (mapped)
      throw wnwError(mapped.code, `${mapped.message}${message ? `: ${message}` : ''}`, { details: { ...mapped.details, ...details } });
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
      throw wnwError(
        'WNW_ERR_SBX_UPSTREAM',
        `Docker Engine sent an unexpected answer to ${where} (${issue ? `${issue.path.join('.') || '(root)'}: ${issue.message}` : 'invalid'})`,
        {
          details: { method: call.method, path: call.path, status: response.status, body: text.slice(0, 300) },
        },
      );
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

  #transportError(
    error: unknown,
    where: string,
    callSignal: AbortSignal | undefined,
    timeout: AbortSignal | undefined,
    timeoutMs: number | null,
  ): WinnowerError {
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
      return this.#unavailable(
        code === 'EACCES'
          ? `permission denied on ${this.socketPath} (add this user to the docker group)`
          : `cannot connect to ${this.socketPath} (${code})`,
        error,
      );
    }
    const reason = error instanceof Error ? error.message : String(error);
    return wnwError('WNW_ERR_SBX_UPSTREAM', `connection to Docker Engine lost during ${where}: ${reason}`, {
      cause: error,
      details: { path: where, ...(code ? { errorCode: code } : {}), connection: true },
      retryable: true,
    });
  }

  /** An engine that answers but that this client cannot use: not retryable, and no "is it running?". */
  #incompatible(what: string, details: Record<string, unknown>): WinnowerError {
    return wnwError('WNW_ERR_SBX_UNAVAILABLE', `Docker Engine at ${this.socketPath} cannot be used: ${what}`, {
      details: { socketPath: this.socketPath, ...details },
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
