/**
 * A fake Docker daemon: node:http on a unix socket in a temp dir, speaking the Engine API subset
 * the docker provider uses (optionally prefixed by /vX.Y): containers create/start/json/delete,
 * exec create/start/json, archive PUT/GET/HEAD, images create (pull), version, _ping.
 *
 * Each container is a temp dir (its root filesystem, copied from the image's directory); commands
 * run on this host with the container's WorkingDir mapped under that dir, and exec start hijacks
 * the connection like the real daemon: `HTTP/1.1 200 OK`, then 8-byte-header frames, then close.
 * Archives go through the host's GNU tar, so the provider's own tar code meets a real one.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cp, lstat, mkdir, mkdtemp, readlink, rm, stat } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { constants, tmpdir } from 'node:os';
import { basename, dirname, join, normalize, relative } from 'node:path';

export type FakeDockerFault = '500' | 'malformed' | 'hang' | 'drop';

export interface FakeDockerRule {
  method?: string;
  path: RegExp;
  fault: FakeDockerFault;
  times?: number;
}

export interface FakeDockerOptions {
  /** Image reference → host directory copied as the container's root filesystem. */
  images?: Record<string, string>;
  /** References a pull makes available (image → directory). */
  pullable?: Record<string, string>;
  /** References whose pull streams an `error` line. */
  pullErrors?: Record<string, string>;
}

export interface RecordedDockerRequest {
  method: string;
  /** Without the version prefix. */
  path: string;
  version: string | undefined;
  query: Record<string, string>;
  body: unknown;
}

interface FakeContainer {
  id: string;
  name: string;
  config: Record<string, unknown>;
  root: string;
  running: boolean;
  oomKilled: boolean;
  processes: Set<ChildProcess>;
}

interface FakeExec {
  id: string;
  container: FakeContainer;
  config: Record<string, unknown>;
  running: boolean;
  started: boolean;
  exitCode: number | null;
  pid: number;
}

type Reply = { status: number; json?: unknown; text?: string; headers?: Record<string, string> };

export class FakeDocker {
  readonly requests: RecordedDockerRequest[] = [];
  readonly containers = new Map<string, FakeContainer>();
  readonly execs = new Map<string, FakeExec>();
  readonly removed: string[] = [];
  readonly rules: FakeDockerRule[] = [];
  readonly socketPath: string;
  readonly #dir: string;
  readonly #server: Server;
  readonly #sockets = new Set<Socket>();
  readonly #images: Map<string, string>;
  readonly #pullable: Map<string, string>;
  readonly #pullErrors: Map<string, string>;

  private constructor(dir: string, options: FakeDockerOptions) {
    this.#dir = dir;
    this.socketPath = join(dir, 'docker.sock');
    this.#images = new Map(Object.entries(options.images ?? {}).map(([ref, path]) => [normalizeRef(ref), path]));
    this.#pullable = new Map(Object.entries(options.pullable ?? {}).map(([ref, path]) => [normalizeRef(ref), path]));
    this.#pullErrors = new Map(Object.entries(options.pullErrors ?? {}).map(([ref, message]) => [normalizeRef(ref), message]));
    this.#server = createServer((request, response) => void this.#handle(request, response));
    this.#server.on('connection', (socket) => {
      this.#sockets.add(socket);
      socket.on('close', () => this.#sockets.delete(socket));
    });
  }

  static async start(options: FakeDockerOptions = {}): Promise<FakeDocker> {
    const fake = new FakeDocker(await mkdtemp(join(tmpdir(), 'fake-docker-')), options);
    await new Promise<void>((resolve) => fake.#server.listen(fake.socketPath, resolve));
    return fake;
  }

  inject(rule: FakeDockerRule): FakeDockerRule {
    this.rules.push(rule);
    return rule;
  }

  count(method: string, path: RegExp): number {
    return this.requests.filter((request) => request.method === method && path.test(request.path)).length;
  }

  rootOf(id: string): string {
    const container = this.containers.get(id);
    if (!container) throw new Error(`no container ${id}`);
    return container.root;
  }

  /** The container stops (killed, or out of memory): its processes die with it. */
  killContainer(id: string, options: { oomKilled?: boolean } = {}): void {
    const container = this.containers.get(id);
    if (!container) return;
    container.running = false;
    container.oomKilled = options.oomKilled ?? false;
    for (const child of container.processes) if (child.pid) killGroup(child.pid);
    // HostConfig.AutoRemove: the daemon removes a stopped container shortly after it exits.
    if ((container.config.HostConfig as { AutoRemove?: boolean } | undefined)?.AutoRemove) {
      setTimeout(() => void this.#remove(container), 300).unref();
    }
  }

  async #remove(container: FakeContainer): Promise<void> {
    if (!this.containers.delete(container.id)) return;
    this.removed.push(container.id);
    await rm(container.root, { recursive: true, force: true });
  }

  async close(): Promise<void> {
    for (const container of this.containers.values()) for (const child of container.processes) if (child.pid) killGroup(child.pid);
    for (const socket of this.#sockets) socket.destroy();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
    await Promise.all([...this.containers.values()].map((container) => rm(container.root, { recursive: true, force: true })));
    await rm(this.#dir, { recursive: true, force: true });
  }

  async #handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    request.socket.on('error', () => undefined);
    const url = new URL(request.url ?? '/', 'http://docker');
    const versioned = /^\/(v\d+\.\d+)(\/.*)$/.exec(url.pathname);
    const path = versioned?.[2] ?? url.pathname;
    const raw = await readBody(request);
    const isJson = (request.headers['content-type'] ?? '').includes('json');
    let body: unknown = raw;
    if (isJson && raw.length) {
      try {
        body = JSON.parse(raw.toString('utf8'));
      } catch {
        return this.#send(response, { status: 400, json: { message: 'invalid JSON' } });
      }
    }
    const recorded: RecordedDockerRequest = { method: request.method ?? 'GET', path, version: versioned?.[1], query: Object.fromEntries(url.searchParams), body: isJson ? body : undefined };
    this.requests.push(recorded);

    const rule = this.rules.find((candidate) => (candidate.times ?? Infinity) > 0 && (!candidate.method || candidate.method === recorded.method) && candidate.path.test(path));
    if (rule) {
      if (rule.times !== undefined) rule.times--;
      if (rule.fault === 'hang') return;
      if (rule.fault === 'drop') return void request.socket.destroy();
      if (rule.fault === 'malformed') return this.#send(response, { status: request.method === 'POST' ? 201 : 200, text: '{"Id": ' });
      return this.#send(response, { status: 500, json: { message: 'injected failure' } });
    }
    try {
      const reply = await this.#route(recorded, raw, request, response);
      if (reply) this.#send(response, reply, request.method === 'HEAD');
    } catch (error) {
      this.#send(response, { status: 500, json: { message: String(error) } });
    }
  }

  #send(response: ServerResponse, reply: Reply, head = false): void {
    const text = reply.text ?? (reply.json === undefined ? '' : JSON.stringify(reply.json));
    response.writeHead(reply.status, { ...(text ? { 'content-type': reply.json === undefined ? 'text/plain' : 'application/json' } : {}), 'api-version': '1.43', ...reply.headers });
    response.end(head ? undefined : text);
  }

  async #route(request: RecordedDockerRequest, raw: Buffer, incoming: IncomingMessage, response: ServerResponse): Promise<Reply | undefined> {
    const { method, path, query } = request;
    const input = (request.body ?? {}) as Record<string, unknown>;
    let match: RegExpExecArray | null;
    if (method === 'GET' && path === '/_ping') return { status: 200, text: 'OK' };
    if (method === 'GET' && path === '/version') return { status: 200, json: { Version: '24.0.7-fake', ApiVersion: '1.43', MinAPIVersion: '1.12', Os: 'linux', Arch: 'amd64' } };
    if (method === 'POST' && path === '/images/create') return this.#pull(query.fromImage ?? '');
    if (method === 'POST' && path === '/containers/create') return this.#create(input, query.name);
    if ((match = /^\/containers\/([^/]+)(\/.*)?$/.exec(path))) {
      const container = this.containers.get(match[1] ?? '');
      const action = match[2] ?? '';
      if (!container) return { status: 404, json: { message: `No such container: ${match[1]}` } };
      if (method === 'POST' && action === '/start') {
        if (container.running) return { status: 304 };
        container.running = true;
        return { status: 204 };
      }
      if (method === 'GET' && action === '/json') {
        return {
          status: 200,
          json: { Id: container.id, Name: `/${container.name}`, Config: container.config, State: { Running: container.running, Status: container.running ? 'running' : 'exited', OOMKilled: container.oomKilled, ExitCode: container.running ? 0 : 137, Error: '' } },
        };
      }
      if (method === 'DELETE' && action === '') {
        if (container.running && query.force !== 'true' && query.force !== '1') {
          return { status: 409, json: { message: `cannot remove container "/${container.name}": container is running: stop the container before removing or force remove` } };
        }
        for (const child of container.processes) if (child.pid) killGroup(child.pid);
        container.running = false;
        await this.#remove(container);
        return { status: 204 };
      }
      if (method === 'POST' && action === '/exec') {
        if (!container.running) return { status: 409, json: { message: `container ${container.id} is not running` } };
        if (!Array.isArray(input.Cmd) || input.Cmd.length === 0) return { status: 400, json: { message: 'No exec command specified' } };
        const exec: FakeExec = { id: randomBytes(32).toString('hex'), container, config: input, running: false, started: false, exitCode: null, pid: 0 };
        this.execs.set(exec.id, exec);
        return { status: 201, json: { Id: exec.id } };
      }
      if (action === '/archive') return this.#archive(method, container, query.path ?? '', raw, response);
    }
    if ((match = /^\/exec\/([^/]+)\/(start|json)$/.exec(path))) {
      const exec = this.execs.get(match[1] ?? '');
      if (!exec) return { status: 404, json: { message: `No such exec instance: ${match[1]}` } };
      if (match[2] === 'json' && method === 'GET') {
        return { status: 200, json: { ID: exec.id, Running: exec.running, ExitCode: exec.exitCode, Pid: exec.pid, ContainerID: exec.container.id, ProcessConfig: { tty: false, entrypoint: (exec.config.Cmd as string[])[0], arguments: (exec.config.Cmd as string[]).slice(1) } } };
      }
      if (match[2] === 'start' && method === 'POST') {
        if (exec.started) return { status: 409, json: { message: `Exec ${exec.id} has already been started` } };
        this.#startExec(exec, incoming.socket);
        return undefined;
      }
    }
    return { status: 404, json: { message: 'page not found' } };
  }

  async #pull(reference: string): Promise<Reply> {
    const ref = normalizeRef(reference);
    const streamed = this.#pullErrors.get(ref);
    if (streamed !== undefined) {
      return { status: 200, text: `${JSON.stringify({ status: `Pulling from ${ref}` })}\n${JSON.stringify({ errorDetail: { message: streamed }, error: streamed })}\n`, headers: { 'content-type': 'application/json' } };
    }
    const source = this.#pullable.get(ref);
    if (source === undefined) {
      return { status: 404, json: { message: `pull access denied for ${ref.split(':')[0]}, repository does not exist or may require 'docker login': denied: requested access to the resource is denied` } };
    }
    this.#images.set(ref, source);
    const lines = [{ status: `Pulling from ${ref}`, id: 'latest' }, { status: 'Digest: sha256:0123456789abcdef' }, { status: `Status: Downloaded newer image for ${ref}` }];
    return { status: 200, text: lines.map((line) => JSON.stringify(line)).join('\r\n'), headers: { 'content-type': 'application/json' } };
  }

  async #create(input: Record<string, unknown>, name: string | undefined): Promise<Reply> {
    if (typeof input.Image !== 'string') return { status: 400, json: { message: 'No image specified' } };
    const template = this.#images.get(normalizeRef(input.Image));
    if (template === undefined) return { status: 404, json: { message: `No such image: ${normalizeRef(input.Image)}` } };
    const containerName = name ?? `fake_${randomBytes(3).toString('hex')}`;
    if ([...this.containers.values()].some((container) => container.name === containerName)) {
      return { status: 409, json: { message: `Conflict. The container name "/${containerName}" is already in use` } };
    }
    const root = await mkdtemp(join(tmpdir(), 'fake-docker-ctr-'));
    await cp(template, root, { recursive: true });
    if (typeof input.WorkingDir === 'string') await mkdir(mapPath(root, input.WorkingDir), { recursive: true });
    const container: FakeContainer = { id: randomBytes(32).toString('hex'), name: containerName, config: input, root, running: false, oomKilled: false, processes: new Set() };
    this.containers.set(container.id, container);
    return { status: 201, json: { Id: container.id, Warnings: [] } };
  }

  /** Hijacks the connection as the daemon does, then streams the command's output as frames. */
  #startExec(exec: FakeExec, socket: Socket): void {
    exec.started = true;
    exec.running = true;
    socket.write('HTTP/1.1 200 OK\r\nContent-Type: application/vnd.docker.multiplexed-stream\r\nApi-Version: 1.43\r\n\r\n');
    const frame = (type: 1 | 2, payload: Buffer): void => {
      const header = Buffer.alloc(8);
      header[0] = type;
      header.writeUInt32BE(payload.length, 4);
      if (!socket.destroyed) socket.write(Buffer.concat([header, payload]));
    };
    const container = exec.container;
    const config = exec.config;
    const cwd = mapPath(container.root, typeof config.WorkingDir === 'string' && config.WorkingDir ? config.WorkingDir : String(container.config.WorkingDir ?? '/'));
    const env: Record<string, string> = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: container.root, LANG: 'C.UTF-8' };
    for (const pair of [...((container.config.Env as string[] | undefined) ?? []), ...((config.Env as string[] | undefined) ?? [])]) {
      const equals = pair.indexOf('=');
      if (equals > 0) env[pair.slice(0, equals)] = pair.slice(equals + 1);
    }
    const cmd = config.Cmd as string[];
    void stat(cwd).then(
      (info) => {
        if (!info.isDirectory()) throw new Error('not a directory');
        const child = spawn(cmd[0] ?? 'false', cmd.slice(1), { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
        container.processes.add(child);
        exec.pid = child.pid ?? 0;
        child.stdout?.on('data', (chunk: Buffer) => frame(1, chunk));
        child.stderr?.on('data', (chunk: Buffer) => frame(2, chunk));
        child.on('error', (error) => {
          frame(2, Buffer.from(`OCI runtime exec failed: ${error.message}\r\n`));
          exec.exitCode = 127;
          exec.running = false;
          socket.end();
        });
        child.on('exit', (code, signal) => {
          exec.exitCode = code ?? 128 + (signal ? constants.signals[signal] : 9);
          exec.running = false;
          container.processes.delete(child);
        });
        child.on('close', () => socket.end());
      },
      () => {
        frame(1, Buffer.from(`OCI runtime exec failed: exec failed: unable to start container process: chdir to cwd ("${String(config.WorkingDir)}") set in config.json failed: no such file or directory: unknown\r\n`));
        exec.exitCode = 126;
        exec.running = false;
        socket.end();
      },
    );
  }

  async #archive(method: string, container: FakeContainer, path: string, raw: Buffer, response: ServerResponse): Promise<Reply | undefined> {
    const target = mapPath(container.root, path || '/');
    const missing = { status: 404, json: { message: `Could not find the file ${path} in container ${container.name}` } };
    if (method === 'PUT') {
      const info = await stat(target).catch(() => undefined);
      if (!info) return missing;
      if (!info.isDirectory()) return { status: 400, json: { message: `extraction point is not a directory: ${path}` } };
      const result = await run('tar', ['-x', '--no-same-owner', '-C', target], raw);
      return result.code === 0 ? { status: 200 } : { status: 400, json: { message: result.stderr.trim() } };
    }
    const info = await lstat(target).catch(() => undefined);
    if (!info) return missing;
    const mode = (info.mode & 0o777) + (info.isDirectory() ? 2 ** 31 : 0) + (info.isSymbolicLink() ? 2 ** 27 : 0);
    const statHeader = Buffer.from(
      JSON.stringify({ name: basename(target), size: info.size, mode, mtime: info.mtime.toISOString(), linkTarget: info.isSymbolicLink() ? await readlink(target) : '' }),
    ).toString('base64');
    if (method === 'HEAD') return { status: 200, headers: { 'x-docker-container-path-stat': statHeader } };
    if (method !== 'GET') return { status: 405, json: { message: 'method not allowed' } };
    response.writeHead(200, { 'content-type': 'application/x-tar', 'x-docker-container-path-stat': statHeader });
    const tar = spawn('tar', ['-c', '-C', dirname(target), '--', basename(target)], { stdio: ['ignore', 'pipe', 'ignore'] });
    tar.stdout.pipe(response);
    return undefined;
  }
}

function normalizeRef(reference: string): string {
  const last = reference.slice(reference.lastIndexOf('/') + 1);
  return last.includes(':') || last.includes('@') ? reference : `${reference}:latest`;
}

/** `/testbed/a.py` → `<root>/testbed/a.py`; never escapes the container's root. */
function mapPath(root: string, path: string): string {
  const target = join(root, normalize(path.startsWith('/') ? path : `/${path}`));
  if (relative(root, target).startsWith('..')) throw new Error(`path escapes the container: ${path}`);
  return target;
}

function killGroup(pid: number): void {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

function run(command: string, args: string[], input: Buffer): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: ['pipe', 'ignore', 'pipe'] });
    const stderr: Buffer[] = [];
    child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
    child.on('close', (code) => resolve({ code, stderr: Buffer.concat(stderr).toString('utf8') }));
    child.stdin.end(input);
  });
}

async function readBody(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
