/**
 * A fake Orchard Env orchestrator: node:http on port 0 speaking the documented REST contract
 * (shared/design/orchard-env-api.md), quirks included. Commands really run (`bash -c` on this
 * host) in a per-sandbox temp dir; absolute paths in API fields (cwd, file paths) are mapped
 * under that dir, so `/testbed` is `<root>/testbed`. Paths written inside commands are host paths.
 *
 * Faults: the first K creates answer 503 with Retry-After; images that never get ready (408 on
 * /wait) or fail; `wait` answering early with `running` (another replica); a POST exec whose
 * `wait` gives up while the job runs; sandboxes that die mid-exec (exit_code null + error); and
 * per-route rules answering 500, malformed JSON, hanging, or dropping the connection (before the
 * request is handled, or after: `drop-after`, `hang-after`).
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cp, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, normalize, relative } from 'node:path';

export type FakeOrchardFault = '500' | 'malformed' | 'hang' | 'drop' | 'drop-after' | 'hang-after';

export interface FakeOrchardRule {
  method?: string;
  path: RegExp;
  fault: FakeOrchardFault;
  /** How many matching requests get the fault (default: all). */
  times?: number;
}

export interface FakeOrchardOptions {
  /** Required X-API-Key (default 'test-key'); null turns auth off. */
  apiKey?: string | null;
  /** Image name → host directory copied as the sandbox's root filesystem. */
  images?: Record<string, string>;
  /** Pending → ready after this long (default 30 ms). */
  readyDelayMs?: number;
  /** Images that stay pending forever. */
  neverReady?: string[];
  /** Retry-After sent with the 503s (default '5', as the real server). */
  retryAfter?: string;
}

export interface RecordedRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  headers: IncomingMessage['headers'];
  body: unknown;
}

interface FakeSandbox {
  id: string;
  image: string;
  root: string;
  status: 'pending' | 'ready' | 'failed';
  statusMessage: string | null;
  cpu: string;
  memory: string;
  blockNetwork: boolean;
  createdAt: number;
  queue: Promise<void>;
  changed: Set<() => void>;
}

interface FakeJob {
  job_id: string;
  sandbox_id: string;
  command: string;
  status: 'queued' | 'running' | 'succeeded' | 'failed';
  stdout: string;
  stderr: string;
  exit_code: number | null;
  created_at: number;
  started_at: number | null;
  completed_at: number | null;
  error: string | null;
  child?: ChildProcess;
  done: Promise<void>;
  finish: () => void;
  killedBecause?: string;
}

type Reply = { status: number; body?: unknown; headers?: Record<string, string>; raw?: string } | 'hang' | 'drop';

export class FakeOrchard {
  readonly requests: RecordedRequest[] = [];
  readonly deleted: string[] = [];
  readonly heartbeats = new Map<string, number>();
  readonly sandboxes = new Map<string, FakeSandbox>();
  readonly jobs = new Map<string, FakeJob>();
  readonly rules: FakeOrchardRule[] = [];
  /** The next K creates answer 503 with Retry-After. */
  createUnavailable = 0;
  /** The next K GET /jobs/{id}/wait answer at once, whatever the job's state (another replica). */
  earlyWaits = 0;
  /** POST exec with wait:true gives up after this long and answers the job as it is (running). */
  execWaitCapMs: number | undefined;
  #server: Server;
  #sockets = new Set<Socket>();
  #requestCounter = 0;
  #options: Required<Omit<FakeOrchardOptions, 'apiKey'>> & { apiKey: string | null };
  url = '';

  private constructor(options: FakeOrchardOptions) {
    this.#options = {
      apiKey: options.apiKey === undefined ? 'test-key' : options.apiKey,
      images: options.images ?? {},
      readyDelayMs: options.readyDelayMs ?? 30,
      neverReady: options.neverReady ?? [],
      retryAfter: options.retryAfter ?? '5',
    };
    this.#server = createServer((request, response) => void this.#handle(request, response));
    this.#server.on('connection', (socket) => {
      this.#sockets.add(socket);
      socket.on('close', () => this.#sockets.delete(socket));
    });
  }

  static async start(options: FakeOrchardOptions = {}): Promise<FakeOrchard> {
    const fake = new FakeOrchard(options);
    await new Promise<void>((resolve) => fake.#server.listen(0, '127.0.0.1', resolve));
    fake.url = `http://127.0.0.1:${(fake.#server.address() as AddressInfo).port}`;
    return fake;
  }

  /** Adds a fault rule; returns it so a test can change `times`. */
  inject(rule: FakeOrchardRule): FakeOrchardRule {
    this.rules.push(rule);
    return rule;
  }

  /** Requests seen with this method whose path matches. */
  count(method: string, path: RegExp): number {
    return this.requests.filter((request) => request.method === method && path.test(request.path)).length;
  }

  /** Host directory holding a sandbox's files. */
  rootOf(id: string): string {
    const sandbox = this.sandboxes.get(id);
    if (!sandbox) throw new Error(`no sandbox ${id}`);
    return sandbox.root;
  }

  /** The pod dies: running commands are killed and their jobs fail with exit_code null. */
  killSandbox(id: string, reason = 'agent connection lost: pod terminated'): void {
    const sandbox = this.sandboxes.get(id);
    if (!sandbox) return;
    sandbox.status = 'failed';
    sandbox.statusMessage = reason;
    for (const job of this.jobs.values()) {
      if (job.sandbox_id === id && (job.status === 'running' || job.status === 'queued')) {
        job.killedBecause = reason;
        if (job.child?.pid) killGroup(job.child.pid);
        else this.#complete(job, { exit_code: null, error: reason });
      }
    }
  }

  async close(): Promise<void> {
    for (const job of this.jobs.values()) if (job.child?.pid && job.status === 'running') killGroup(job.child.pid);
    for (const socket of this.#sockets) socket.destroy();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
    await Promise.all([...this.sandboxes.values()].map((sandbox) => rm(sandbox.root, { recursive: true, force: true })));
  }

  async #handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const requestId = `req-${String(++this.#requestCounter).padStart(6, '0')}`;
    const url = new URL(request.url ?? '/', 'http://fake');
    const text = await readBody(request);
    let body: unknown;
    let bodyError = false;
    if (text !== '') {
      try {
        body = JSON.parse(text);
      } catch {
        bodyError = true;
      }
    }
    const recorded: RecordedRequest = {
      method: request.method ?? 'GET',
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      headers: request.headers,
      body,
    };
    this.requests.push(recorded);

    let reply: Reply;
    const rule = this.#matchRule(recorded);
    if (rule && rule.fault !== 'drop-after' && rule.fault !== 'hang-after') {
      reply = faultReply(rule.fault, requestId);
    } else {
      try {
        reply = bodyError ? { status: 422, body: { detail: 'invalid JSON body' } } : await this.#route(recorded);
      } catch (error) {
        reply = { status: 500, body: { error: 'Internal server error', detail: String(error), request_id: requestId } };
      }
      if (rule?.fault === 'drop-after') reply = 'drop';
      if (rule?.fault === 'hang-after') reply = 'hang';
    }
    if (reply === 'hang') return;
    if (reply === 'drop') {
      request.socket.destroy();
      return;
    }
    response.writeHead(reply.status, { 'content-type': 'application/json', 'x-request-id': requestId, ...reply.headers });
    response.end(reply.raw ?? JSON.stringify(reply.body ?? {}));
  }

  #matchRule(request: RecordedRequest): FakeOrchardRule | undefined {
    const rule = this.rules.find((candidate) => (candidate.times ?? Infinity) > 0 && (!candidate.method || candidate.method === request.method) && candidate.path.test(request.path));
    if (rule && rule.times !== undefined) rule.times--;
    return rule;
  }

  async #route(request: RecordedRequest): Promise<Exclude<Reply, 'hang' | 'drop'>> {
    const { method, path } = request;
    if (method === 'GET' && path === '/') return { status: 200, body: { service: 'fake-orchard', version: '0.1.0', status: 'running' } };
    if (method === 'GET' && path === '/health') return { status: 200, body: { status: 'healthy' } };
    const key = request.headers['x-api-key'];
    if (this.#options.apiKey !== null) {
      if (!key) return { status: 401, body: { detail: 'Missing API key. Please provide X-API-Key header.' } };
      if (key !== this.#options.apiKey) return { status: 403, body: { detail: 'Invalid API key' } };
    }
    let match: RegExpExecArray | null;
    if (method === 'POST' && path === '/sandboxes') return this.#create(request.body);
    if ((match = /^\/sandboxes\/([^/]+)$/.exec(path))) {
      const id = decodeURIComponent(match[1] ?? '');
      if (method === 'GET') return this.#info(id);
      if (method === 'DELETE') return this.#delete(id);
    }
    if (method === 'GET' && (match = /^\/sandboxes\/([^/]+)\/wait$/.exec(path))) return this.#waitSandbox(decodeURIComponent(match[1] ?? ''), Number(request.query.timeout ?? 300));
    if (method === 'POST' && (match = /^\/sandboxes\/([^/]+)\/heartbeat$/.exec(path))) {
      const id = decodeURIComponent(match[1] ?? '');
      if (!this.sandboxes.has(id)) return notFound(`Sandbox ${id} not found`);
      this.heartbeats.set(id, (this.heartbeats.get(id) ?? 0) + 1);
      return { status: 200, body: { status: 'ok' } };
    }
    if (method === 'POST' && (match = /^\/sandboxes\/([^/]+)\/exec$/.exec(path))) return this.#exec(decodeURIComponent(match[1] ?? ''), request.body);
    if (method === 'GET' && (match = /^\/jobs\/([^/]+)$/.exec(path))) {
      const job = this.jobs.get(decodeURIComponent(match[1] ?? ''));
      return job ? { status: 200, body: jobBody(job) } : notFound('Job not found');
    }
    if (method === 'GET' && (match = /^\/jobs\/([^/]+)\/wait$/.exec(path))) {
      const job = this.jobs.get(decodeURIComponent(match[1] ?? ''));
      if (!job) return notFound('Job not found');
      if (this.earlyWaits > 0) {
        this.earlyWaits--;
        return { status: 200, body: jobBody(job) };
      }
      await waitFor(job.done, Number(request.query.timeout ?? 300) * 1000);
      return { status: 200, body: jobBody(job) };
    }
    if ((match = /^\/sandboxes\/([^/]+)\/files(\/list)?$/.exec(path))) {
      const sandbox = this.sandboxes.get(decodeURIComponent(match[1] ?? ''));
      if (!sandbox) return notFound('Sandbox not found');
      if (match[2]) return method === 'GET' ? this.#list(sandbox, request.query.path ?? '/workspace') : notFound('Not Found');
      if (method === 'POST') return this.#writeFile(sandbox, request.body);
      if (method === 'GET') return this.#readFile(sandbox, request.query.path);
    }
    return notFound('Not Found');
  }

  async #create(body: unknown): Promise<Exclude<Reply, 'hang' | 'drop'>> {
    if (this.createUnavailable > 0) {
      this.createUnavailable--;
      return { status: 503, body: { detail: 'Service temporarily overloaded, please retry: 429 Too Many Requests' }, headers: { 'retry-after': this.#options.retryAfter } };
    }
    const input = (body ?? {}) as Record<string, unknown>;
    if (typeof input.image !== 'string' || input.image === '') {
      return { status: 422, body: { detail: [{ type: 'missing', loc: ['body', 'image'], msg: 'Field required' }] } };
    }
    const id = typeof input.sandbox_id === 'string' ? input.sandbox_id : `sbx-${randomBytes(4).toString('hex')}`;
    if (!/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(id)) return { status: 422, body: { detail: `invalid sandbox_id ${id}` } };
    if (this.sandboxes.has(id)) return { status: 500, body: { error: 'Internal server error', detail: `pods "${id}" already exists` } };
    const sandbox: FakeSandbox = {
      id,
      image: input.image,
      root: await mkdtemp(join(tmpdir(), 'fake-orchard-')),
      status: 'pending',
      statusMessage: null,
      cpu: typeof input.cpu === 'string' ? input.cpu : '4',
      memory: typeof input.memory === 'string' ? input.memory : '16Gi',
      blockNetwork: input.block_network !== false,
      createdAt: Date.now() / 1000,
      queue: Promise.resolve(),
      changed: new Set(),
    };
    this.sandboxes.set(id, sandbox);
    if (!this.#options.neverReady.includes(sandbox.image)) {
      setTimeout(() => void this.#boot(sandbox), this.#options.readyDelayMs);
    }
    return {
      status: 200,
      body: {
        sandbox_id: id,
        namespace: 'sandboxes',
        image: sandbox.image,
        block_network: sandbox.blockNetwork,
        cpu: sandbox.cpu,
        memory: sandbox.memory,
        timeout: typeof input.timeout === 'number' ? input.timeout : 3600,
        status: 'pending',
      },
    };
  }

  async #boot(sandbox: FakeSandbox): Promise<void> {
    if (this.sandboxes.get(sandbox.id) !== sandbox) return; // deleted before it booted
    const template = this.#options.images[sandbox.image];
    if (template === undefined) {
      sandbox.status = 'failed';
      sandbox.statusMessage = `ErrImagePull: image ${sandbox.image} not found`;
    } else {
      await cp(template, sandbox.root, { recursive: true });
      await mkdir(join(sandbox.root, 'workspace'), { recursive: true });
      if (sandbox.status === 'pending') sandbox.status = 'ready';
    }
    for (const notify of sandbox.changed) notify();
  }

  #info(id: string): Exclude<Reply, 'hang' | 'drop'> {
    const sandbox = this.sandboxes.get(id);
    if (!sandbox) return { status: 200, body: { sandbox_id: id, status: 'not_found', ready: false } };
    return { status: 200, body: infoBody(sandbox) };
  }

  async #waitSandbox(id: string, timeoutS: number): Promise<Exclude<Reply, 'hang' | 'drop'>> {
    const sandbox = this.sandboxes.get(id);
    if (!sandbox) return notFound(`Sandbox ${id} not found`);
    if (sandbox.status === 'pending') {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, timeoutS * 1000);
        function done(): void {
          clearTimeout(timer);
          sandbox?.changed.delete(done);
          resolve();
        }
        sandbox.changed.add(done);
      });
    }
    if (sandbox.status === 'pending') return { status: 408, body: { detail: `Sandbox ${id} not ready within ${timeoutS}s` } };
    return { status: 200, body: infoBody(sandbox) };
  }

  async #delete(id: string): Promise<Exclude<Reply, 'hang' | 'drop'>> {
    this.deleted.push(id);
    const sandbox = this.sandboxes.get(id);
    if (sandbox) {
      this.killSandbox(id, 'sandbox deleted');
      this.sandboxes.delete(id);
      await rm(sandbox.root, { recursive: true, force: true });
    }
    return { status: 200, body: { status: 'deleted', sandbox_id: id } };
  }

  async #exec(id: string, body: unknown): Promise<Exclude<Reply, 'hang' | 'drop'>> {
    const sandbox = this.sandboxes.get(id);
    if (!sandbox) return notFound(`Sandbox ${id} not found`);
    if (sandbox.status !== 'ready') return notFound(`Sandbox ${id} agent not ready`);
    const input = (body ?? {}) as Record<string, unknown>;
    const command = Array.isArray(input.command) ? input.command.join(' ') : input.command;
    if (typeof command !== 'string') return { status: 422, body: { detail: [{ loc: ['body', 'command'], msg: 'Field required' }] } };
    const timeoutS = typeof input.timeout_seconds === 'number' ? input.timeout_seconds : 300;
    let finish = (): void => undefined;
    const done = new Promise<void>((resolve) => (finish = resolve));
    const job: FakeJob = {
      job_id: `job-${randomBytes(6).toString('hex')}`,
      sandbox_id: id,
      command,
      status: 'queued',
      stdout: '',
      stderr: '',
      exit_code: null,
      created_at: Date.now() / 1000,
      started_at: null,
      completed_at: null,
      error: null,
      done,
      finish,
    };
    this.jobs.set(job.job_id, job);
    const cwd = typeof input.cwd === 'string' ? input.cwd : '/workspace';
    const env = (input.env ?? {}) as Record<string, string>;
    // Execs within one sandbox run one at a time.
    const loginShell = input.login_shell === true;
    sandbox.queue = sandbox.queue.then(() => this.#run(sandbox, job, cwd, env, timeoutS, loginShell));
    if (input.wait !== true) return { status: 200, body: { job_id: job.job_id, status: 'queued' } };
    await waitFor(done, Math.min(this.execWaitCapMs ?? Infinity, (timeoutS + 30) * 1000));
    return { status: 200, body: jobBody(job) };
  }

  async #run(sandbox: FakeSandbox, job: FakeJob, cwd: string, env: Record<string, string>, timeoutS: number, loginShell: boolean): Promise<void> {
    if (job.killedBecause || job.status !== 'queued') return;
    let workdir = mapPath(sandbox.root, cwd);
    if (!(await isDirectory(workdir))) workdir = sandbox.root;
    job.status = 'running';
    job.started_at = Date.now() / 1000;
    // The agent runs `bash --login -i -c` with ~/.bashrc sourced; -i is left out here (no TTY noise to filter).
    const args = loginShell ? ['--login', '-c', `if [ -f ~/.bashrc ]; then . ~/.bashrc; fi; ${job.command}`] : ['-c', job.command];
    const child = spawn('bash', args, {
      cwd: workdir,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: sandbox.root, LANG: 'C.UTF-8', ...env },
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    job.child = child;
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    child.stdout?.on('data', (chunk: Buffer) => stdout.push(chunk));
    child.stderr?.on('data', (chunk: Buffer) => stderr.push(chunk));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      if (child.pid) killGroup(child.pid);
    }, timeoutS * 1000);
    const code = await new Promise<number | null>((resolve) => {
      child.on('error', () => resolve(127));
      child.on('close', (exitCode) => resolve(exitCode));
    });
    clearTimeout(timer);
    job.stdout = Buffer.concat(stdout).toString('utf8');
    job.stderr = Buffer.concat(stderr).toString('utf8');
    if (job.killedBecause) {
      this.#complete(job, { exit_code: null, error: job.killedBecause });
    } else if (timedOut) {
      job.stderr += `\nCommand timed out after ${timeoutS}s and was killed`;
      this.#complete(job, { exit_code: 124, error: `Command timed out after ${timeoutS}s` });
    } else {
      this.#complete(job, { exit_code: code ?? 137, error: null });
    }
  }

  #complete(job: FakeJob, result: { exit_code: number | null; error: string | null }): void {
    job.exit_code = result.exit_code;
    job.error = result.error;
    job.status = result.exit_code === 0 ? 'succeeded' : 'failed';
    job.completed_at = Date.now() / 1000;
    job.finish();
  }

  async #writeFile(sandbox: FakeSandbox, body: unknown): Promise<Exclude<Reply, 'hang' | 'drop'>> {
    const input = (body ?? {}) as Record<string, unknown>;
    if (typeof input.path !== 'string' || typeof input.content !== 'string') {
      return { status: 422, body: { detail: [{ loc: ['body', 'path'], msg: 'Field required' }] } };
    }
    const target = mapPath(sandbox.root, input.path);
    const content = Buffer.from(input.content, 'base64');
    await mkdir(dirname(target), { recursive: true });
    await writeFile(target, content);
    return { status: 200, body: { success: true, path: input.path, size: content.length } };
  }

  async #readFile(sandbox: FakeSandbox, path: string | undefined): Promise<Exclude<Reply, 'hang' | 'drop'>> {
    if (!path) return { status: 422, body: { detail: [{ loc: ['query', 'path'], msg: 'Field required' }] } };
    const target = mapPath(sandbox.root, path);
    const info = await stat(target).catch(() => undefined);
    if (!info) return notFound(`File not found: ${path}`);
    if (!info.isFile()) return { status: 400, body: { detail: `Not a file: ${path}` } };
    const content = await readFile(target);
    return { status: 200, body: { path, content: content.toString('base64'), size: content.length } };
  }

  async #list(sandbox: FakeSandbox, path: string): Promise<Exclude<Reply, 'hang' | 'drop'>> {
    const target = mapPath(sandbox.root, path);
    const info = await stat(target).catch(() => undefined);
    if (!info) return notFound(`Path not found: ${path}`);
    if (!info.isDirectory()) return { status: 400, body: { detail: `Not a directory: ${path}` } };
    const names = (await readdir(target)).sort();
    const files = await Promise.all(
      names.map(async (name) => {
        const entry = await stat(join(target, name));
        return { name, type: entry.isDirectory() ? 'directory' : 'file', size: entry.size, modified: entry.mtime.toISOString().slice(0, 19) };
      }),
    );
    return { status: 200, body: { path, files } };
  }
}

function infoBody(sandbox: FakeSandbox): Record<string, unknown> {
  return {
    sandbox_id: sandbox.id,
    namespace: 'sandboxes',
    image: sandbox.image,
    pod_name: `sandbox-${sandbox.id}`,
    block_network: sandbox.blockNetwork,
    cpu: sandbox.cpu,
    memory: sandbox.memory,
    created_at: sandbox.createdAt,
    ready: sandbox.status === 'ready',
    status: sandbox.status,
    status_message: sandbox.statusMessage,
  };
}

function jobBody(job: FakeJob): Record<string, unknown> {
  const { child: _child, done: _done, finish: _finish, killedBecause: _killed, ...body } = job;
  return body;
}

function faultReply(fault: Exclude<FakeOrchardFault, 'drop-after' | 'hang-after'>, requestId: string): Reply {
  switch (fault) {
    case '500':
      return { status: 500, body: { error: 'Internal server error', detail: 'injected failure', request_id: requestId } };
    case 'malformed':
      return { status: 200, raw: '{"job_id": "job-1", "status": ' };
    case 'hang':
      return 'hang';
    case 'drop':
      return 'drop';
  }
}

function notFound(detail: string): { status: number; body: unknown } {
  return { status: 404, body: { detail } };
}

/** `/testbed/a.py` → `<root>/testbed/a.py`; relative paths are under /workspace. Never escapes root. */
function mapPath(root: string, path: string): string {
  const absolute = path.startsWith('/') ? path : `/workspace/${path}`;
  const target = join(root, normalize(absolute));
  if (relative(root, target).startsWith('..')) throw new Error(`path escapes the sandbox: ${path}`);
  return target;
}

async function isDirectory(path: string): Promise<boolean> {
  return (await stat(path).catch(() => undefined))?.isDirectory() ?? false;
}

function killGroup(pid: number): void {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

async function waitFor(promise: Promise<void>, ms: number): Promise<void> {
  if (!Number.isFinite(ms)) return promise;
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([promise, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * A host directory to serve as an image: a git repository with `files` committed under
 * `/<repoDir>` (default /testbed, as in SWE-bench images). Used by the Docker fake as well.
 */
export async function createRepoImage(files: Record<string, string | Uint8Array>, repoDir = 'testbed'): Promise<string> {
  const image = await mkdtemp(join(tmpdir(), 'fake-image-'));
  const repo = join(image, repoDir);
  for (const [name, content] of Object.entries(files)) {
    await mkdir(dirname(join(repo, name)), { recursive: true });
    await writeFile(join(repo, name), content);
  }
  await mkdir(repo, { recursive: true });
  const git = (...args: string[]): void => {
    execFileSync('git', ['-c', 'user.name=fake', '-c', 'user.email=fake@example.com', '-c', 'init.defaultBranch=main', ...args], { cwd: repo, stdio: 'ignore' });
  };
  git('init', '-q');
  git('add', '-A');
  git('commit', '-q', '--allow-empty', '-m', 'base');
  return image;
}
