/**
 * Test doubles of Orchard Env's Python SDK (`orchard_env.client.sandbox_client`): `SandboxClient`
 * and `AsyncSandboxClient` with their sandbox instances, written from the SDK's published behaviour
 * (docs/design/01-orchard-env-api.md#8, #9, #3) so that the requests `winnower sandbox
 * serve` gets are the SDK's, byte for byte where it matters:
 * - exec always sends `timeout_seconds`, `cwd` and `env`, as JSON null when unset; it POSTs with
 *   `wait: true` first (even for `wait=False`) and, on any error, POSTs again without `wait`, then
 *   polls `GET /jobs/{id}` every 0.1 s until `succeeded`/`failed` (deadline: timeout + 60 s);
 * - create sends `image` and `block_network`, plus `sandbox_id`/`cpu`/`memory`/`timeout` only when
 *   truthy; it waits with `/wait?timeout=<answered timeout>`, deletes and raises on 408, falls back
 *   to polling `GET /sandboxes/{id}` on 404/405 (1 s sync, 2 s async);
 * - every request is tried 3 times: connection errors back off 1 s then 2 s (async: plus up to 50%
 *   jitter); a 503 waits Retry-After plus 0–2 s; other statuses raise at once;
 * - the sync client reads any body as JSON (requests); the async one refuses a non-JSON content type
 *   (aiohttp's ContentTypeError), DELETE included;
 * - files: upload `{path, content}`, download and list with `?path=` (list defaults to `/`);
 * - at exit (atexit / `close()`), every sandbox still tracked is DELETEd and errors are ignored;
 *   an instance's own `delete()` raises on an error status (sync) or swallows it in `__aexit__` (async).
 */

export class SdkHttpError extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
    readonly method: string,
    readonly path: string,
  ) {
    super(`${method} ${path}: HTTP ${status} ${JSON.stringify(body)}`);
  }
}

/** What `JobResult(data)` reads; a missing required key is the SDK's KeyError. */
export interface SdkJob {
  job_id: string;
  sandbox_id: string;
  command: string;
  status: 'queued' | 'running' | 'succeeded' | 'failed';
  stdout: string;
  stderr: string;
  exit_code: number | null;
  error: string | null;
  created_at: number;
  started_at: number | null;
  completed_at: number | null;
}

export interface SdkOptions {
  /** Default request timeout in seconds (SDK: 1200). */
  timeoutS?: number;
  /** Upper bound of the random wait added to Retry-After on a 503 (SDK: 2 s). */
  retryJitterS?: number;
  /** Test hook: an error to raise instead of sending this request (a dropped connection, a read timeout). */
  fault?: (method: string, path: string, body: unknown) => Error | undefined;
}

export interface CreateOptions {
  blockNetwork?: boolean;
  sandboxId?: string;
  cpu?: string;
  memory?: string;
  timeout?: number;
  waitReady?: boolean;
  pollInterval?: number;
}

export interface ExecArgs {
  timeout?: number | null;
  cwd?: string | null;
  env?: Record<string, string> | null;
  wait?: boolean;
  pollInterval?: number;
  loginShell?: boolean;
}

interface RequestArgs {
  json?: unknown;
  params?: Record<string, string | number>;
  /** Seconds; the per-call timeout the SDK passes for exec's `wait: true` POST. */
  timeoutS?: number;
}

/** Retryable in the SDK: connection errors and timeouts (not HTTP statuses). */
class ConnectionFailure extends Error {}

abstract class BaseClient {
  /** Ids created and not yet deleted (`_created_sandboxes`). */
  readonly created = new Set<string>();
  /** Every request sent, in order: `METHOD path` (query included). */
  readonly sent: string[] = [];
  /** Every JSON body sent, in order, as sent (for wire checks). */
  readonly bodies: { path: string; text: string }[] = [];
  readonly timeoutS: number;
  readonly retryJitterS: number;
  readonly #fault: SdkOptions['fault'];
  protected abstract readonly async: boolean;
  /** Poll interval of create's fallback polling (sync 1 s, async 2 s). */
  protected abstract readonly createPollS: number;

  constructor(
    readonly baseUrl: string,
    readonly apiKey: string | undefined,
    options: SdkOptions = {},
  ) {
    this.timeoutS = options.timeoutS ?? 1200;
    this.retryJitterS = options.retryJitterS ?? 2;
    this.#fault = options.fault;
  }

  /** `_request`: three attempts, backoff on connection errors, Retry-After on 503, raise_for_status. */
  async request(method: string, path: string, args: RequestArgs = {}): Promise<any> {
    const query = args.params
      ? `?${new URLSearchParams(Object.entries(args.params).map(([key, value]): [string, string] => [key, String(value)])).toString()}`
      : '';
    let lastError: unknown;
    for (let attempt = 0; attempt < 3; attempt++) {
      const fault = this.#fault?.(method, path, args.json);
      if (fault) throw fault;
      let response: Response;
      try {
        this.sent.push(`${method} ${path}${query}`);
        const text = args.json === undefined ? undefined : JSON.stringify(args.json);
        if (text !== undefined) this.bodies.push({ path, text });
        response = await fetch(this.baseUrl + path + query, {
          method,
          headers: {
            ...(this.apiKey ? { 'X-API-Key': this.apiKey } : {}),
            ...(text === undefined ? {} : { 'Content-Type': 'application/json' }),
          },
          ...(text === undefined ? {} : { body: text }),
          signal: AbortSignal.timeout((args.timeoutS ?? this.timeoutS) * 1000),
        });
      } catch (error) {
        lastError = new ConnectionFailure(`${method} ${path}: ${(error as Error).message}`, { cause: error });
        if (attempt === 2) throw lastError;
        const base = 2 ** attempt;
        await sleep((base + (this.async ? Math.random() * base * 0.5 : 0)) * 1000);
        continue;
      }
      if (response.status === 503 && attempt < 2) {
        await response.arrayBuffer();
        const retryAfter = Number(response.headers.get('retry-after') ?? '5');
        await sleep(((Number.isFinite(retryAfter) ? retryAfter : 5) + Math.random() * this.retryJitterS) * 1000);
        continue;
      }
      const text = await response.text();
      if (response.status >= 400) throw new SdkHttpError(response.status, safeJson(text), method, path);
      // aiohttp's response.json() checks the content type; requests' does not.
      if (this.async && !/^application\/json/.test(response.headers.get('content-type') ?? '')) {
        throw new Error(`ContentTypeError: ${method} ${path} answered ${response.headers.get('content-type')}`);
      }
      return JSON.parse(text);
    }
    throw lastError;
  }

  /** `create_sandbox`. */
  async createSandbox(image: string, options: CreateOptions = {}): Promise<SdkSandbox> {
    const payload: Record<string, unknown> = { image, block_network: options.blockNetwork ?? true };
    if (options.sandboxId) payload.sandbox_id = options.sandboxId;
    if (options.cpu) payload.cpu = options.cpu;
    if (options.memory) payload.memory = options.memory;
    if (options.timeout) payload.timeout = options.timeout;
    let serverTimeout: number = options.timeout || 3600;
    let id: string | undefined;
    try {
      const response = await this.request('POST', '/sandboxes', { json: payload });
      id = response.sandbox_id as string;
      serverTimeout = response.timeout ?? serverTimeout;
      this.created.add(id);
      if (options.waitReady === false) return new SdkSandbox(this, id, response);
      try {
        const info = await this.request('GET', `/sandboxes/${id}/wait`, {
          params: { timeout: serverTimeout },
          ...(this.async ? { timeoutS: serverTimeout + 30 } : {}),
        });
        return this.#readyOrThrow(id, info, true);
      } catch (error) {
        if (error instanceof SdkHttpError && error.status === 408)
          throw new SdkTimeoutError(`Sandbox ${id} did not become ready within ${serverTimeout}s`);
        if (!(error instanceof SdkHttpError) || (error.status !== 404 && error.status !== 405)) throw error;
      }
      const started = Date.now();
      for (;;) {
        if ((Date.now() - started) / 1000 > serverTimeout)
          throw new SdkTimeoutError(`Sandbox ${id} did not become ready within ${serverTimeout}s`);
        const info = await this.request('GET', `/sandboxes/${id}`);
        const ready = this.#readyOrThrow(id, info, false);
        if (ready) return ready;
        await sleep((options.pollInterval ?? this.createPollS) * 1000);
      }
    } catch (error) {
      if (error instanceof SdkTimeoutError && id) await this.deleteSandbox(id);
      throw error;
    }
  }

  #readyOrThrow(id: string, info: any, fromWait: true): SdkSandbox;
  #readyOrThrow(id: string, info: any, fromWait: false): SdkSandbox | undefined;
  #readyOrThrow(id: string, info: any, fromWait: boolean): SdkSandbox | undefined {
    if (info.ready || info.status === 'ready') return new SdkSandbox(this, id, info);
    if (info.status === 'failed') throw new Error(`RuntimeError: Sandbox ${id} failed: ${info.status_message ?? 'Pod failed'}`);
    if (fromWait)
      throw new Error(`RuntimeError: Sandbox ${id} wait returned non-ready: status=${info.status}, message=${info.status_message ?? ''}`);
    return undefined;
  }

  /** `delete_sandbox`: untracks, DELETEs, ignores every error. */
  async deleteSandbox(id: string): Promise<void> {
    this.created.delete(id);
    await this.request('DELETE', `/sandboxes/${id}`).catch(() => undefined);
  }

  /** `get_sandbox`. */
  async getSandbox(id: string): Promise<SdkSandbox> {
    const response = await this.request('GET', `/sandboxes/${id}`);
    return new SdkSandbox(this, response.sandbox_id as string, response);
  }

  async health(): Promise<unknown> {
    return this.request('GET', '/health');
  }

  /** What the SDK does at exit (the atexit handler, or the async client's `close()`): DELETE every tracked sandbox, errors ignored. */
  async close(): Promise<void> {
    for (const id of [...this.created]) await this.deleteSandbox(id);
  }
}

export class SdkTimeoutError extends Error {
  override readonly name = 'TimeoutError';
  constructor(message: string) {
    super(`TimeoutError: ${message}`);
  }
}

/** `orchard_env.SandboxClient` (requests). */
export class OrchardSdkClient extends BaseClient {
  protected readonly async = false;
  protected readonly createPollS = 1;
}

/** `orchard_env.AsyncSandboxClient` (aiohttp): content types checked, jittered backoff, 2 s create polling. */
export class AsyncOrchardSdkClient extends BaseClient {
  protected readonly async = true;
  protected readonly createPollS = 2;
}

/** `SandboxInstance` / `AsyncSandboxInstance`. */
export class SdkSandbox {
  deleted = false;
  readonly namespace: unknown;
  readonly image: unknown;
  readonly blockNetwork: unknown;

  constructor(
    readonly client: BaseClient,
    readonly sandboxId: string,
    data: any,
  ) {
    this.namespace = data.namespace;
    this.image = data.image;
    this.blockNetwork = data.block_network;
  }

  #open(): void {
    if (this.deleted) throw new Error('RuntimeError: Sandbox has been deleted');
  }

  /** `exec`: the wait:true POST, the fallback POST on any error, then 0.1 s polling. */
  async exec(command: string | string[], args: ExecArgs = {}): Promise<SdkJob> {
    this.#open();
    const path = `/sandboxes/${this.sandboxId}/exec`;
    const fields = {
      command,
      timeout_seconds: args.timeout ?? null,
      cwd: args.cwd ?? null,
      env: args.env ?? null,
      login_shell: args.loginShell ?? false,
    };
    const execTimeout = args.timeout || 300;
    let jobId: string;
    try {
      const response = await this.client.request('POST', path, { json: { ...fields, wait: true }, timeoutS: execTimeout + 60 });
      if (response.status === 'succeeded' || response.status === 'failed') return jobResult(response);
      jobId = response.job_id as string;
    } catch {
      const response = await this.client.request('POST', path, { json: fields });
      jobId = response.job_id as string;
    }
    if (args.wait === false)
      return jobResult({
        job_id: jobId,
        sandbox_id: this.sandboxId,
        command: String(command),
        status: 'queued',
        created_at: Date.now() / 1000,
      });
    const deadline = Date.now() + (execTimeout + 60) * 1000;
    for (;;) {
      const result = await this.getJob(jobId);
      if (result.status === 'succeeded' || result.status === 'failed') return result;
      if (Date.now() >= deadline) throw new SdkTimeoutError(`Job ${jobId} did not complete within ${execTimeout}s`);
      await sleep((args.pollInterval ?? 0.1) * 1000);
    }
  }

  async getJob(jobId: string): Promise<SdkJob> {
    return jobResult(await this.client.request('GET', `/jobs/${jobId}`));
  }

  async applyPatch(
    patch: string,
    timeout = 30,
  ): Promise<{ success: boolean; stdout: string; stderr: string; exit_code: number | null; error: string | null }> {
    this.#open();
    return this.client.request('POST', `/sandboxes/${this.sandboxId}/apply_patch`, { json: { patch, timeout_seconds: timeout } });
  }

  /** `upload_content` (and `upload_file`, which reads the local file first). */
  async uploadContent(content: Uint8Array | string, remotePath: string): Promise<{ success: boolean; path: string; size: number }> {
    this.#open();
    return this.client.request('POST', `/sandboxes/${this.sandboxId}/files`, {
      json: { path: remotePath, content: Buffer.from(content).toString('base64') },
    });
  }

  /** `download_content` (and `download_file`, which writes it locally). */
  async downloadContent(remotePath: string): Promise<Buffer> {
    this.#open();
    const response = await this.client.request('GET', `/sandboxes/${this.sandboxId}/files`, { params: { path: remotePath } });
    return Buffer.from(response.content as string, 'base64');
  }

  async listFiles(remotePath = '/'): Promise<{ name: string; type: string; size: number; modified: string }[]> {
    this.#open();
    return (await this.client.request('GET', `/sandboxes/${this.sandboxId}/files/list`, { params: { path: remotePath } })).files;
  }

  async heartbeat(): Promise<void> {
    await this.client.request('POST', `/sandboxes/${this.sandboxId}/heartbeat`);
  }

  /** `delete()` (the sync `with` block's exit): untracks, then DELETE, which raises on an error status. */
  async delete(): Promise<void> {
    if (this.deleted) return;
    this.client.created.delete(this.sandboxId);
    await this.client.request('DELETE', `/sandboxes/${this.sandboxId}`);
    this.deleted = true;
  }

  /** The async instance's `__aexit__`: delete, errors ignored. */
  async aexit(): Promise<void> {
    await this.delete().catch(() => undefined);
  }
}

function jobResult(data: any): SdkJob {
  for (const field of ['job_id', 'sandbox_id', 'command', 'status', 'created_at'])
    if (!(field in data)) throw new Error(`KeyError: '${field}'`);
  return { stdout: '', stderr: '', exit_code: null, error: null, started_at: null, completed_at: null, ...data };
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
