/**
 * A client shaped like Orchard Env's Python SDK (`SandboxClient`), written from its published
 * behaviour (shared/design/orchard-real-behaviour.md §19.2), not from its code: every request is
 * tried 3 times (connection errors back off 1 s then 2 s; a 503 waits Retry-After plus jitter);
 * `exec` always POSTs with `wait: true` first and, on any error, POSTs again without it; jobs are
 * polled with GET /jobs/{id} every 0.1 s; readiness is `/wait?timeout=<create timeout>`, with a
 * 404/405 there falling back to polling GET; a 408 deletes the sandbox and raises. Used to check
 * that `winnower sandbox serve` tolerates exactly what the SDK does.
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

export interface SdkJob {
  job_id: string;
  sandbox_id: string;
  command: string;
  status: 'queued' | 'running' | 'succeeded' | 'failed';
  stdout: string;
  stderr: string;
  exit_code: number | null;
  created_at: number;
  error: string | null;
}

export class OrchardSdkClient {
  readonly created = new Set<string>();
  /** Every request sent, in order (method and path). */
  readonly sent: string[] = [];

  constructor(
    readonly baseUrl: string,
    readonly apiKey: string | undefined,
  ) {}

  async request(method: string, path: string, body?: unknown): Promise<any> {
    let lastError: unknown;
    for (let attempt = 1; attempt <= 3; attempt++) {
      let response: Response;
      try {
        this.sent.push(`${method} ${path}`);
        response = await fetch(this.baseUrl + path, {
          method,
          headers: { ...(this.apiKey ? { 'X-API-Key': this.apiKey } : {}), ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        });
      } catch (error) {
        lastError = error;
        await sleep(1000 * attempt);
        continue;
      }
      // The SDK calls .json() on every answer (aiohttp refuses other content types).
      if (!/^application\/json/.test(response.headers.get('content-type') ?? '')) throw new Error(`${method} ${path}: not JSON (${response.headers.get('content-type')})`);
      const json: unknown = await response.json();
      if (response.status === 503 && attempt < 3) {
        await sleep(Number(response.headers.get('retry-after') ?? 5) * 1000 + Math.random() * 50);
        lastError = new SdkHttpError(503, json, method, path);
        continue;
      }
      if (response.status >= 400) throw new SdkHttpError(response.status, json, method, path);
      return json;
    }
    throw lastError;
  }

  async createSandbox(image: string, options: { timeout?: number; blockNetwork?: boolean; sandboxId?: string } = {}): Promise<string> {
    const timeout = options.timeout ?? 3600;
    const created = await this.request('POST', '/sandboxes', { image, block_network: options.blockNetwork ?? true, timeout, ...(options.sandboxId ? { sandbox_id: options.sandboxId } : {}) });
    const id = created.sandbox_id as string;
    this.created.add(id);
    let info: any;
    try {
      info = await this.request('GET', `/sandboxes/${id}/wait?timeout=${timeout}`);
    } catch (error) {
      if (error instanceof SdkHttpError && error.status === 408) {
        await this.deleteSandbox(id);
        throw new Error(`TimeoutError: sandbox ${id} not ready within ${timeout}s`);
      }
      if (!(error instanceof SdkHttpError) || (error.status !== 404 && error.status !== 405)) throw error;
      do {
        await sleep(1000);
        info = await this.request('GET', `/sandboxes/${id}`);
      } while (!info.ready && info.status === 'pending');
    }
    if (info.status === 'failed') throw new Error(`RuntimeError: ${info.status_message}`);
    if (!(info.ready === true || info.status === 'ready')) throw new Error(`sandbox ${id} is ${info.status}`);
    return id;
  }

  async exec(id: string, command: string | string[], options: { timeout?: number; env?: Record<string, string>; cwd?: string; loginShell?: boolean; wait?: boolean } = {}): Promise<SdkJob> {
    const timeout = options.timeout ?? 300;
    const body = { command, timeout_seconds: timeout, ...(options.env ? { env: options.env } : {}), ...(options.cwd ? { cwd: options.cwd } : {}), login_shell: options.loginShell ?? false };
    let job: any;
    try {
      job = await this.request('POST', `/sandboxes/${id}/exec`, { ...body, wait: true });
    } catch {
      job = await this.request('POST', `/sandboxes/${id}/exec`, body);
    }
    if (options.wait === false) return job as SdkJob;
    const deadline = Date.now() + (timeout + 60) * 1000;
    while (job.status !== 'succeeded' && job.status !== 'failed') {
      if (Date.now() > deadline) throw new Error(`job ${job.job_id} did not finish`);
      await sleep(100);
      job = await this.request('GET', `/jobs/${job.job_id}`);
    }
    for (const field of ['job_id', 'sandbox_id', 'command', 'status', 'created_at']) if (!(field in job)) throw new Error(`KeyError: ${field}`);
    return job as SdkJob;
  }

  async writeFile(id: string, path: string, content: string | Uint8Array): Promise<{ success: boolean; path: string; size: number }> {
    return this.request('POST', `/sandboxes/${id}/files`, { path, content: Buffer.from(content).toString('base64') });
  }

  async readFile(id: string, path: string): Promise<Buffer> {
    const answer = await this.request('GET', `/sandboxes/${id}/files?path=${encodeURIComponent(path)}`);
    return Buffer.from(answer.content as string, 'base64');
  }

  async listFiles(id: string, path = '/workspace'): Promise<{ name: string; type: string; size: number; modified: string }[]> {
    return (await this.request('GET', `/sandboxes/${id}/files/list?path=${encodeURIComponent(path)}`)).files;
  }

  async applyPatch(id: string, patch: string): Promise<{ success: boolean; stdout: string; stderr: string; exit_code: number | null; error: string | null }> {
    return this.request('POST', `/sandboxes/${id}/apply_patch`, { patch, timeout_seconds: 30 });
  }

  async heartbeat(id: string): Promise<unknown> {
    return this.request('POST', `/sandboxes/${id}/heartbeat`);
  }

  async deleteSandbox(id: string): Promise<unknown> {
    this.created.delete(id);
    return this.request('DELETE', `/sandboxes/${id}`);
  }

  /** What the SDK does at exit. */
  async close(): Promise<void> {
    await Promise.allSettled([...this.created].map((id) => this.deleteSandbox(id)));
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
