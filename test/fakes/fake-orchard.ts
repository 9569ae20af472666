/**
 * A fake Orchard Env orchestrator and in-pod agent: node:http on port 0 speaking the REST API as
 * the real service behaves (docs/design/02-orchard-real-behaviour.md; §N here is its entry N), quirks
 * included. Each sandbox ("pod") is a host temp dir seen as `/` by its commands: every command
 * runs in bubblewrap with that dir bound as the root and the host's /usr and /etc read-only, so
 * commands and API paths agree (`/testbed`, `/workspace`, `/tmp`). A small Python agent inside
 * runs `bash -c` exactly as Orchard's does (returncode, so −N for a signal death; `/` for a cwd
 * that is not a directory) and writes its returncode to fd 3.
 *
 * Real semantics modelled: a command that reaches `timeout_seconds` kills the whole pod (§1);
 * `login_shell` rewrites stderr (§2); unknown images stay pending until `/wait` gives 408 (§4);
 * file-type errors are 500s wrapping the agent's 400, and the call after an agent error may get
 * `Connection reset by peer` (§5, §7); a dangling symlink fails a listing (§6); exec before ready
 * waits for the agent, then 404 (§16); heartbeats enrol a sandbox in heartbeat reaping, and a
 * TTL deletes it however many it sent (§10); execs queue per sandbox (§11); duplicate ids are
 * adopted, invalid ids are 500 (§13); `timeout` must be an integer (§14); `apply_patch` works in
 * `/workspace` (§15); GET of an unknown sandbox is 404 (§16).
 *
 * Faults for tests: the first K creates answer 503 with Retry-After; `wait` answering early with
 * `running` (another replica); a POST exec whose `wait` gives up while the job runs; pods that die
 * (killSandbox); per-route rules answering 500, malformed JSON, hanging, or dropping the
 * connection (before the request is handled, or after: `drop-after`, `hang-after`).
 */
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { cp, lstat, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
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
  /** Image name → host directory copied as the sandbox's root filesystem. Other images never get pulled. */
  images?: Record<string, string>;
  /** Pending → ready after this long (default 30 ms). */
  readyDelayMs?: number;
  /** Known images that stay pending forever anyway (an unschedulable pod). */
  neverReady?: string[];
  /** Retry-After sent with the 503s (default '5', as the real server). */
  retryAfter?: string;
  /** How long an exec waits for a pod's agent before answering 404 "agent not ready" (real: 15 s). */
  agentReadyWaitMs?: number;
  /** SANDBOX_TTL_HOURS in seconds (real default 7200). */
  ttlS?: number;
  /** HEARTBEAT_TIMEOUT_SECONDS (real default 180). */
  heartbeatTimeoutS?: number;
  /** PENDING_TIMEOUT_BUFFER_SECONDS (real default 600). */
  pendingBufferS?: number;
  /** CLEANUP_INTERVAL_SECONDS in ms (real default 300 000); 0: only `sweep()` reaps. */
  cleanupIntervalMs?: number;
  /**
   * Put the image-pull waiting reason into a pending sandbox's `status_message`. The real
   * orchestrator leaves it empty (docs/design/02-orchard-real-behaviour.md#4); a patched one may not.
   */
  reportPullErrors?: boolean;
  /**
   * After an agent-side error, the next file call gets 500 "Connection reset by peer" (default true;
   * docs/design/02-orchard-real-behaviour.md#7).
   */
  staleConnectionAfterAgentError?: boolean;
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
  statusMessage: string;
  cpu: string;
  memory: string;
  blockNetwork: boolean;
  createdAt: number;
  /** The create's `timeout` (for the pending sweep). */
  createTimeoutS: number;
  queue: Promise<void>;
  changed: Set<() => void>;
  /** Session ids of every process tree started in the pod (each exec is its own session). */
  sessions: Set<number>;
  /** Set by the first heartbeat to a ready sandbox: from then on a gap reaps it. */
  lastHeartbeat: number | undefined;
  /** The agent closed its connection after an error; the next file call hits the stale one. */
  staleConnection: boolean;
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
  done: Promise<void>;
  finish: () => void;
  killedBecause?: string;
}

type Answer = { status: number; body?: unknown; headers?: Record<string, string>; raw?: string };
type Reply = Answer | 'hang' | 'drop';

/** What the orchestrator's retry loop ends with after the agent killed its own pod (docs/design/02-orchard-real-behaviour.md#1). */
export const POD_KILLED_ERROR = 'int too large to convert to float';

/** The in-pod agent: `bash -c` as Orchard's runs it, returncode on fd 3. */
const AGENT_PY = [
  'import os, subprocess, sys',
  'command, cwd, login = sys.argv[1], sys.argv[2], sys.argv[3] == "1"',
  'os.chdir(cwd if os.path.isdir(cwd) else "/")',
  'args = ["bash", "--login", "-i", "-c", "if [ -f ~/.bashrc ]; then source ~/.bashrc; fi; " + command] if login else ["bash", "-c", command]',
  'proc = subprocess.run(args, stdin=subprocess.DEVNULL)',
  'os.write(3, str(proc.returncode).encode())',
].join('\n');

export class FakeOrchard {
  readonly requests: RecordedRequest[] = [];
  readonly deleted: string[] = [];
  /** Sandboxes the cleanup sweep removed, with why. */
  readonly reaped: { id: string; reason: 'ttl' | 'heartbeat' | 'pending' }[] = [];
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
  #sweeper: NodeJS.Timeout | undefined;
  /** close() removes every root, booting ones included. */
  #closed = false;
  #options: Required<Omit<FakeOrchardOptions, 'apiKey'>> & { apiKey: string | null };
  url = '';

  private constructor(options: FakeOrchardOptions) {
    this.#options = {
      apiKey: options.apiKey === undefined ? 'test-key' : options.apiKey,
      images: options.images ?? {},
      readyDelayMs: options.readyDelayMs ?? 30,
      neverReady: options.neverReady ?? [],
      retryAfter: options.retryAfter ?? '5',
      agentReadyWaitMs: options.agentReadyWaitMs ?? 15_000,
      ttlS: options.ttlS ?? 7_200,
      heartbeatTimeoutS: options.heartbeatTimeoutS ?? 180,
      pendingBufferS: options.pendingBufferS ?? 600,
      cleanupIntervalMs: options.cleanupIntervalMs ?? 300_000,
      reportPullErrors: options.reportPullErrors ?? false,
      staleConnectionAfterAgentError: options.staleConnectionAfterAgentError ?? true,
    };
    this.#server = createServer((request, response) => void this.#handle(request, response));
    this.#server.on('connection', (socket) => {
      this.#sockets.add(socket);
      socket.on('close', () => this.#sockets.delete(socket));
    });
  }

  static async start(options: FakeOrchardOptions = {}): Promise<FakeOrchard> {
    // Pods are bubblewrap sandboxes: say so plainly rather than failing every exec.
    if (!['/usr/bin/bwrap', '/usr/local/bin/bwrap', '/bin/bwrap'].some((path) => existsSync(path))) {
      throw new Error('the fake Orchard Env runs its pods in bubblewrap: apt-get install -y bubblewrap');
    }
    const fake = new FakeOrchard(options);
    await new Promise<void>((resolve) => fake.#server.listen(0, '127.0.0.1', resolve));
    fake.url = `http://127.0.0.1:${(fake.#server.address() as AddressInfo).port}`;
    if (fake.#options.cleanupIntervalMs > 0) {
      fake.#sweeper = setInterval(() => void fake.sweep(), fake.#options.cleanupIntervalMs);
      fake.#sweeper.unref();
    }
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

  /** Host directory holding a sandbox's files (its `/`). */
  rootOf(id: string): string {
    const sandbox = this.sandboxes.get(id);
    if (!sandbox) throw new Error(`no sandbox ${id}`);
    return sandbox.root;
  }

  /** The pod dies: every process in it is killed, running and queued jobs fail with exit_code null. */
  killSandbox(id: string, reason = 'agent connection lost: pod terminated'): void {
    const sandbox = this.sandboxes.get(id);
    if (!sandbox) return;
    sandbox.status = 'failed';
    sandbox.statusMessage = reason;
    for (const job of this.jobs.values()) {
      if (job.sandbox_id === id && (job.status === 'running' || job.status === 'queued')) job.killedBecause ??= reason;
    }
    killSessions(sandbox.sessions);
    for (const notify of sandbox.changed) notify();
  }

  /**
   * One cleanup pass, as the orchestrator's: TTL, heartbeat gaps of enrolled sandboxes, never-ready pods
   * (docs/design/02-orchard-real-behaviour.md#10, #4).
   */
  async sweep(now = Date.now() / 1000): Promise<void> {
    for (const sandbox of [...this.sandboxes.values()]) {
      const age = now - sandbox.createdAt;
      let reason: 'ttl' | 'heartbeat' | 'pending' | undefined;
      if (age > this.#options.ttlS) reason = 'ttl';
      else if (sandbox.lastHeartbeat !== undefined && now - sandbox.lastHeartbeat > this.#options.heartbeatTimeoutS) reason = 'heartbeat';
      else if (sandbox.status === 'pending' && age > sandbox.createTimeoutS + this.#options.pendingBufferS) reason = 'pending';
      if (!reason) continue;
      this.reaped.push({ id: sandbox.id, reason });
      await this.#remove(sandbox);
    }
  }

  async close(): Promise<void> {
    this.#closed = true;
    if (this.#sweeper) clearInterval(this.#sweeper);
    for (const sandbox of this.sandboxes.values()) killSessions(sandbox.sessions);
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
    const rule = this.rules.find(
      (candidate) =>
        (candidate.times ?? Infinity) > 0 &&
        (!candidate.method || candidate.method === request.method) &&
        candidate.path.test(request.path),
    );
    if (rule && rule.times !== undefined) rule.times--;
    return rule;
  }

  async #route(request: RecordedRequest): Promise<Answer> {
    const { method, path } = request;
    if (method === 'GET' && path === '/') return { status: 200, body: { service: 'Orchard Env', version: '0.1.0', status: 'running' } };
    if (method === 'GET' && path === '/health') return { status: 200, body: { status: 'healthy' } };
    const key = request.headers['x-api-key'];
    if (this.#options.apiKey !== null) {
      if (!key) return { status: 401, body: { detail: 'Missing API key. Please provide X-API-Key header.' } };
      if (key !== this.#options.apiKey) return { status: 403, body: { detail: 'Invalid API key' } };
    }
    let match: RegExpExecArray | null;
    if (method === 'GET' && path === '/resources') return { status: 200, body: { status: 'ok', sandboxes: this.sandboxes.size } };
    if (method === 'POST' && path === '/sandboxes') return this.#create(request.body);
    if ((match = /^\/sandboxes\/([^/]+)$/.exec(path))) {
      const id = decodeURIComponent(match[1] ?? '');
      if (method === 'GET') return this.#info(id);
      if (method === 'DELETE') return this.#delete(id);
    }
    if (method === 'GET' && (match = /^\/sandboxes\/([^/]+)\/wait$/.exec(path)))
      return this.#waitSandbox(decodeURIComponent(match[1] ?? ''), Number(request.query.timeout ?? 300));
    if (method === 'POST' && (match = /^\/sandboxes\/([^/]+)\/heartbeat$/.exec(path))) {
      const id = decodeURIComponent(match[1] ?? '');
      const sandbox = this.sandboxes.get(id);
      if (!sandbox) return notFound(`Sandbox ${id} not found`);
      this.heartbeats.set(id, (this.heartbeats.get(id) ?? 0) + 1);
      // Only a ready sandbox is enrolled in heartbeat reaping (docs/design/02-orchard-real-behaviour.md#10).
      if (sandbox.status === 'ready') sandbox.lastHeartbeat = Date.now() / 1000;
      return { status: 200, body: { status: 'ok', sandbox_id: id } };
    }
    if (method === 'POST' && (match = /^\/sandboxes\/([^/]+)\/exec$/.exec(path)))
      return this.#exec(decodeURIComponent(match[1] ?? ''), request.body);
    if (method === 'POST' && (match = /^\/sandboxes\/([^/]+)\/apply_patch$/.exec(path)))
      return this.#applyPatch(decodeURIComponent(match[1] ?? ''), request.body);
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
      const id = decodeURIComponent(match[1] ?? '');
      const sandbox = this.sandboxes.get(id);
      if (!sandbox) return notFound(`Sandbox ${id} not found`);
      if (sandbox.status !== 'ready') return { status: 400, body: { detail: `Sandbox ${id} is not ready` } };
      if (sandbox.staleConnection && this.#options.staleConnectionAfterAgentError) {
        sandbox.staleConnection = false;
        return { status: 500, body: { detail: 'Agent request failed: [Errno 104] Connection reset by peer' } };
      }
      if (match[2]) return method === 'GET' ? this.#list(sandbox, request.query.path ?? '/workspace') : notFound('Not Found');
      if (method === 'POST') return this.#writeFile(sandbox, request.body);
      if (method === 'GET') return this.#readFile(sandbox, request.query.path);
    }
    return notFound('Not Found');
  }

  async #create(body: unknown): Promise<Answer> {
    if (this.createUnavailable > 0) {
      this.createUnavailable--;
      return {
        status: 503,
        body: { detail: 'Service temporarily overloaded, please retry: 429 Too Many Requests' },
        headers: { 'retry-after': this.#options.retryAfter },
      };
    }
    const input = (body ?? {}) as Record<string, unknown>;
    if (typeof input.image !== 'string' || input.image === '') {
      return { status: 422, body: { detail: [{ type: 'missing', loc: ['body', 'image'], msg: 'Field required' }] } };
    }
    // pydantic v2: `timeout: int` rejects a fractional number (docs/design/02-orchard-real-behaviour.md#14).
    if (input.timeout !== undefined && !Number.isInteger(input.timeout)) {
      return {
        status: 422,
        body: {
          detail: [
            {
              type: 'int_from_float',
              loc: ['body', 'timeout'],
              msg: 'Input should be a valid integer, got a number with a fractional part',
              input: input.timeout,
            },
          ],
        },
      };
    }
    const id = typeof input.sandbox_id === 'string' ? input.sandbox_id : randomBytes(4).toString('hex');
    // Ids are not validated: Kubernetes refuses the pod name, and that comes back as a 500 (docs/design/02-orchard-real-behaviour.md#13).
    if (!/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(id)) {
      return {
        status: 500,
        body: {
          detail: `Failed to create sandbox: (422) Reason: Unprocessable Entity: Pod "sandbox-${id}" is invalid: metadata.name: Invalid value`,
        },
      };
    }
    const timeoutS = typeof input.timeout === 'number' ? input.timeout : 3600;
    const existing = this.sandboxes.get(id);
    if (existing) {
      // The pod's 409 is swallowed: the record is overwritten with defaults, answered 200 pending
      // (docs/design/02-orchard-real-behaviour.md#13).
      Object.assign(existing, { cpu: '4', memory: '16Gi', status: 'pending', statusMessage: '', createTimeoutS: timeoutS });
      setTimeout(() => {
        if (existing.status === 'pending') existing.status = 'ready';
        for (const notify of existing.changed) notify();
      }, this.#options.readyDelayMs);
      return { status: 200, body: createBody(existing, timeoutS) };
    }
    const sandbox: FakeSandbox = {
      id,
      image: input.image,
      root: await mkdtemp(join(tmpdir(), 'fake-orchard-')),
      status: 'pending',
      statusMessage: '',
      cpu: typeof input.cpu === 'string' ? input.cpu : '4',
      memory: typeof input.memory === 'string' ? input.memory : '16Gi',
      blockNetwork: input.block_network !== false,
      createdAt: Date.now() / 1000,
      createTimeoutS: timeoutS,
      queue: Promise.resolve(),
      changed: new Set(),
      sessions: new Set(),
      lastHeartbeat: undefined,
      staleConnection: false,
    };
    this.sandboxes.set(id, sandbox);
    setTimeout(() => void this.#boot(sandbox), this.#options.readyDelayMs);
    return { status: 200, body: createBody(sandbox, timeoutS) };
  }

  async #boot(sandbox: FakeSandbox): Promise<void> {
    if (this.sandboxes.get(sandbox.id) !== sandbox) return; // deleted before it booted
    const template = this.#options.images[sandbox.image];
    if (template === undefined) {
      // ErrImagePull / ImagePullBackOff: the pod stays Pending, the orchestrator says nothing (docs/design/02-orchard-real-behaviour.md#4).
      if (this.#options.reportPullErrors) sandbox.statusMessage = `ImagePullBackOff: Back-off pulling image "${sandbox.image}"`;
      return;
    }
    try {
      await cp(template, sandbox.root, { recursive: true });
      await mkdir(join(sandbox.root, 'workspace'), { recursive: true });
      await mkdir(join(sandbox.root, 'root'), { recursive: true });
      await mkdir(join(sandbox.root, 'tmp'), { recursive: true, mode: 0o1777 });
    } catch (error) {
      if (!this.#closed && this.sandboxes.get(sandbox.id) === sandbox) throw error;
    }
    // A DELETE (or close()) while the pod boots: the real pod just goes away. Its rm may have run
    // before the copy finished, so drop what the copy left rather than leak it.
    if (this.#closed || this.sandboxes.get(sandbox.id) !== sandbox) {
      await rm(sandbox.root, { recursive: true, force: true });
      return;
    }
    if (this.#options.neverReady.includes(sandbox.image)) return;
    if (sandbox.status === 'pending') sandbox.status = 'ready';
    for (const notify of sandbox.changed) notify();
  }

  #info(id: string): Answer {
    const sandbox = this.sandboxes.get(id);
    if (!sandbox) return notFound(`Sandbox ${id} not found`);
    return { status: 200, body: infoBody(sandbox) };
  }

  async #waitSandbox(id: string, timeoutS: number): Promise<Answer> {
    const sandbox = this.sandboxes.get(id);
    if (!sandbox) return notFound(`Sandbox ${id} not found`);
    if (sandbox.status === 'pending') await untilChanged(sandbox, timeoutS * 1000);
    if (sandbox.status === 'pending') return { status: 408, body: { detail: `Sandbox ${id} not ready within ${timeoutS}s` } };
    return { status: 200, body: infoBody(sandbox) };
  }

  async #delete(id: string): Promise<Answer> {
    this.deleted.push(id);
    const sandbox = this.sandboxes.get(id);
    if (sandbox) await this.#remove(sandbox, 'sandbox deleted');
    return { status: 200, body: { status: 'deleted', sandbox_id: id } };
  }

  async #remove(sandbox: FakeSandbox, reason = 'sandbox deleted'): Promise<void> {
    this.killSandbox(sandbox.id, reason);
    this.sandboxes.delete(sandbox.id);
    await rm(sandbox.root, { recursive: true, force: true });
  }

  async #exec(id: string, body: unknown): Promise<Answer> {
    let sandbox = this.sandboxes.get(id);
    if (!sandbox) return notFound(`Sandbox ${id} not found`);
    if (sandbox.status !== 'ready') {
      // The orchestrator waits for the agent to answer its readiness probe, then gives up.
      await untilChanged(sandbox, this.#options.agentReadyWaitMs);
      sandbox = this.sandboxes.get(id);
      if (!sandbox) return notFound(`Sandbox ${id} not found`);
      if (sandbox.status !== 'ready') return notFound(`Sandbox ${id} agent not ready`);
    }
    const input = (body ?? {}) as Record<string, unknown>;
    // A list is joined with spaces, unquoted (docs/design/02-orchard-real-behaviour.md#16).
    const command = Array.isArray(input.command) ? input.command.join(' ') : input.command;
    if (typeof command !== 'string') return { status: 422, body: { detail: [{ loc: ['body', 'command'], msg: 'Field required' }] } };
    const timeoutS = typeof input.timeout_seconds === 'number' ? input.timeout_seconds : 300;
    const job = this.#newJob(id, command);
    const cwd = typeof input.cwd === 'string' ? input.cwd : '/workspace';
    const env = (input.env ?? {}) as Record<string, string>;
    const loginShell = input.login_shell === true;
    const owner = sandbox;
    // Execs within one sandbox run one at a time (per replica: this fake is one replica).
    owner.queue = owner.queue.then(() => this.#run(owner, job, cwd, env, timeoutS, loginShell));
    if (input.wait !== true) return { status: 200, body: { job_id: job.job_id, status: 'queued' } };
    await waitFor(job.done, Math.min(this.execWaitCapMs ?? Infinity, (timeoutS + 30) * 1000));
    return { status: 200, body: jobBody(job) };
  }

  #newJob(sandboxId: string, command: string): FakeJob {
    let finish = (): void => undefined;
    const done = new Promise<void>((resolve) => (finish = resolve));
    const job: FakeJob = {
      job_id: randomUUID(),
      sandbox_id: sandboxId,
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
    return job;
  }

  async #run(
    sandbox: FakeSandbox,
    job: FakeJob,
    cwd: string,
    env: Record<string, string>,
    timeoutS: number,
    loginShell: boolean,
  ): Promise<void> {
    if (job.status !== 'queued') return;
    if (job.killedBecause || sandbox.status !== 'ready') {
      this.#complete(job, { exit_code: null, error: job.killedBecause ?? POD_KILLED_ERROR });
      return;
    }
    job.status = 'running';
    job.started_at = Date.now() / 1000;
    const child = spawn('bwrap', [...podMounts(sandbox.root), 'python3', '-c', AGENT_PY, job.command, cwd, loginShell ? '1' : '0'], {
      cwd: '/',
      env: { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: '/root', LANG: 'C.UTF-8', ...env },
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
    });
    if (child.pid) sandbox.sessions.add(child.pid);
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    const status: Buffer[] = [];
    child.stdout?.on('data', (chunk: Buffer) => stdout.push(chunk));
    child.stderr?.on('data', (chunk: Buffer) => stderr.push(chunk));
    (child.stdio[3] as NodeJS.ReadableStream | null)?.on('data', (chunk: Buffer) => status.push(chunk));
    let timedOut = false;
    const timer = setTimeout(() => {
      // killpg(getpgid(child)) in a pod is the pod's own group: everything dies (docs/design/02-orchard-real-behaviour.md#1).
      timedOut = true;
      this.killSandbox(sandbox.id, 'pod failed: its main process was killed');
    }, timeoutS * 1000);
    await new Promise<void>((resolve) => {
      child.on('error', () => resolve());
      child.on('close', () => resolve());
    });
    clearTimeout(timer);
    // Forget a session once nothing is left in it, so a reused number never names another process.
    if (child.pid && sessionMembers(new Set([child.pid])).length === 0) sandbox.sessions.delete(child.pid);
    if (timedOut) {
      // The orchestrator retries the dropped agent call against a dead pod until its backoff overflows.
      this.#complete(job, { exit_code: null, error: POD_KILLED_ERROR });
      return;
    }
    if (job.killedBecause) {
      this.#complete(job, { exit_code: null, error: job.killedBecause });
      return;
    }
    const code = Number(Buffer.concat(status).toString() || 'NaN');
    job.stdout = Buffer.concat(stdout).toString('utf8');
    const rawStderr = Buffer.concat(stderr).toString('utf8');
    job.stderr = loginShell ? filterLoginStderr(rawStderr) : rawStderr;
    if (!Number.isFinite(code)) {
      this.#complete(job, { exit_code: null, error: `Agent request failed: ${rawStderr.slice(-200) || 'no status'}` });
      return;
    }
    // The orchestrator calls any exit 124 a timeout (docs/design/02-orchard-real-behaviour.md#1).
    this.#complete(job, { exit_code: code, error: code === 124 ? `Command timed out after ${timeoutS}s` : null });
  }

  #complete(job: FakeJob, result: { exit_code: number | null; error: string | null }): void {
    job.exit_code = result.exit_code;
    job.error = result.error;
    job.status = result.exit_code === 0 ? 'succeeded' : 'failed';
    job.completed_at = Date.now() / 1000;
    job.finish();
  }

  /** `cd /workspace`, the patch through a heredoc ending in PATCH_EOF, `git apply` (docs/design/02-orchard-real-behaviour.md#15). */
  async #applyPatch(id: string, body: unknown): Promise<Answer> {
    const sandbox = this.sandboxes.get(id);
    if (!sandbox) return notFound(`Sandbox ${id} not found`);
    const input = (body ?? {}) as Record<string, unknown>;
    if (typeof input.patch !== 'string') return { status: 422, body: { detail: [{ loc: ['body', 'patch'], msg: 'Field required' }] } };
    const script = `cd /workspace && cat > /tmp/orchard_patch.diff << 'PATCH_EOF'\n${input.patch}\nPATCH_EOF\ngit apply /tmp/orchard_patch.diff`;
    const timeoutS = typeof input.timeout_seconds === 'number' ? input.timeout_seconds : 30;
    const job = this.#newJob(id, script);
    sandbox.queue = sandbox.queue.then(() => this.#run(sandbox, job, '/workspace', {}, timeoutS, false));
    await job.done;
    return {
      status: 200,
      body: { success: job.exit_code === 0, stdout: job.stdout, stderr: job.stderr, exit_code: job.exit_code, error: job.error },
    };
  }

  async #writeFile(sandbox: FakeSandbox, body: unknown): Promise<Answer> {
    const input = (body ?? {}) as Record<string, unknown>;
    if (typeof input.path !== 'string' || typeof input.content !== 'string') {
      return { status: 422, body: { detail: [{ loc: ['body', 'path'], msg: 'Field required' }] } };
    }
    const target = mapPath(sandbox.root, input.path);
    const content = Buffer.from(input.content, 'base64');
    try {
      await mkdir(dirname(target), { recursive: true });
      await writeFile(target, content);
    } catch (error) {
      sandbox.staleConnection = true;
      return { status: 500, body: { detail: `Agent upload failed (HTTP 500): ${String(error)}` } };
    }
    return { status: 200, body: { success: true, path: input.path, size: content.length } };
  }

  async #readFile(sandbox: FakeSandbox, path: string | undefined): Promise<Answer> {
    if (!path) return { status: 422, body: { detail: [{ loc: ['query', 'path'], msg: 'Field required' }] } };
    const target = mapPath(sandbox.root, path);
    const info = await stat(target).catch(() => undefined);
    if (!info) return notFound(`File not found: ${path}`);
    if (!info.isFile()) return this.#agentError(sandbox, 'download', 400, JSON.stringify({ detail: `Not a file: ${path}` }));
    const content = await readFile(target);
    return { status: 200, body: { path, content: content.toString('base64'), size: content.length } };
  }

  async #list(sandbox: FakeSandbox, path: string): Promise<Answer> {
    const target = mapPath(sandbox.root, path);
    const info = await stat(target).catch(() => undefined);
    if (!info) return notFound(`Path not found: ${path}`);
    if (!info.isDirectory()) return this.#agentError(sandbox, 'list', 400, JSON.stringify({ detail: `Not a directory: ${path}` }));
    const names = (await readdir(target)).sort();
    const files = [];
    for (const name of names) {
      // stat() follows links: one dangling link fails the whole listing (docs/design/02-orchard-real-behaviour.md#6).
      const entry = await stat(join(target, name)).catch(() => undefined);
      if (!entry) {
        if (await lstat(join(target, name)).catch(() => undefined)) return this.#agentError(sandbox, 'list', 500, 'Internal Server Error');
        continue;
      }
      files.push({ name, type: entry.isDirectory() ? 'directory' : 'file', size: entry.size, modified: localTime(entry.mtime) });
    }
    return { status: 200, body: { path, files } };
  }

  /**
   * The agent's error as the orchestrator passes it on: always a 500, and the connection goes stale
   * (docs/design/02-orchard-real-behaviour.md#5, #7).
   */
  #agentError(sandbox: FakeSandbox, what: 'download' | 'list', status: number, text: string): Answer {
    sandbox.staleConnection = true;
    return { status: 500, body: { detail: `Agent ${what} failed (HTTP ${status}): ${text}` } };
  }
}

/** The bubblewrap arguments that make a sandbox dir a pod's `/`. */
function podMounts(root: string): string[] {
  return [
    '--bind',
    root,
    '/',
    '--ro-bind',
    '/usr',
    '/usr',
    ...['bin', 'sbin', 'lib', 'lib64'].flatMap((dir) => ['--ro-bind-try', `/usr/${dir}`, `/${dir}`]),
    '--ro-bind',
    '/etc',
    '/etc',
    '--proc',
    '/proc',
    '--dev',
    '/dev',
    '--die-with-parent',
  ];
}

/** The pids of the processes whose session is one of `sessions`. */
function sessionMembers(sessions: Set<number>): number[] {
  const members: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (sessions.has(Number(fields[3]))) members.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return members;
}

/** Kills every process whose session is one of `sessions` (what a pod's death does to its processes). */
function killSessions(sessions: Set<number>): void {
  if (sessions.size === 0) return;
  for (const pid of sessionMembers(sessions)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone meanwhile
    }
  }
}

/**
 * What Orchard's agent does to stderr under `login_shell` (docs/design/02-orchard-real-behaviour.md#2): drops
 * job-control noise and tracebacks (keeping a final line other than ModuleNotFoundError/ImportError),
 * every blank line, and the trailing newline.
 */
export function filterLoginStderr(text: string): string {
  const kept: string[] = [];
  const lines = text.split('\n');
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index] ?? '';
    if (/terminal process group|no job control in this shell/.test(line)) continue;
    if (line.startsWith('Traceback (most recent call last):')) {
      while (index + 1 < lines.length && /^(\s|$)/.test(lines[index + 1] ?? '')) index++;
      const last = lines[index + 1];
      if (last !== undefined) {
        index++;
        if (!/^(ModuleNotFoundError|ImportError):/.test(last)) kept.push(last);
      }
      continue;
    }
    if (line.trim() === '') continue;
    kept.push(line);
  }
  return kept.join('\n');
}

function createBody(sandbox: FakeSandbox, timeoutS: number): Record<string, unknown> {
  return {
    sandbox_id: sandbox.id,
    namespace: 'sandbox-pods',
    image: sandbox.image,
    block_network: sandbox.blockNetwork,
    cpu: sandbox.cpu,
    memory: sandbox.memory,
    timeout: timeoutS,
    status: 'pending',
  };
}

function infoBody(sandbox: FakeSandbox): Record<string, unknown> {
  return {
    sandbox_id: sandbox.id,
    namespace: 'sandbox-pods',
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
  const { done: _done, finish: _finish, killedBecause: _killed, ...body } = job;
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

function notFound(detail: string): Answer {
  return { status: 404, body: { detail } };
}

/** `/testbed/a.py` → `<root>/testbed/a.py`; relative paths are under /workspace. Never escapes root. */
function mapPath(root: string, path: string): string {
  const absolute = path.startsWith('/') ? path : `/workspace/${path}`;
  const target = join(root, normalize(absolute));
  if (relative(root, target).startsWith('..')) throw new Error(`path escapes the sandbox: ${path}`);
  return target;
}

/** `YYYY-MM-DDTHH:MM:SS` in local time, no zone, as the agent's `datetime.fromtimestamp().isoformat()`. */
function localTime(date: Date): string {
  const pad = (value: number): string => String(value).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`;
}

async function untilChanged(sandbox: FakeSandbox, ms: number): Promise<void> {
  await new Promise<void>((resolve) => {
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      sandbox.changed.delete(done);
      resolve();
    }
    sandbox.changed.add(done);
  });
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
    execFileSync('git', ['-c', 'user.name=fake', '-c', 'user.email=fake@example.com', '-c', 'init.defaultBranch=main', ...args], {
      cwd: repo,
      stdio: 'ignore',
    });
  };
  git('init', '-q');
  git('add', '-A');
  git('commit', '-q', '--allow-empty', '-m', 'base');
  return image;
}
