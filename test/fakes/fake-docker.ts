/**
 * A fake Docker daemon: node:http on a unix socket in a temp dir, speaking the Engine API subset
 * the docker provider uses (optionally prefixed by /vX.Y): containers create/start/json/delete,
 * exec create/start/json, archive PUT/GET/HEAD, images create (pull), commit, image inspect and
 * delete (refused while a container uses the image), version, _ping.
 *
 * Each container is a temp dir (its root filesystem, copied from the image's directory); commands
 * run on this host with the container's WorkingDir mapped under that dir, and exec start hijacks
 * the connection like the real daemon: `HTTP/1.1 200 OK`, then 8-byte-header frames, then close.
 * Archives go through the host's GNU tar, so the provider's own tar code meets a real one.
 *
 * It behaves as Debian's docker.io 20.10 was seen to (docs/design/03-docker-engine.md): versioned
 * paths outside [api.min, api.max] are refused with the engine's 400; exec streams are labelled
 * `raw-stream` on API <= 1.41; `copyUIDGID` with a container user is a 500 (20.10 looks the user up
 * in the host's passwd database), while the tar headers' uid/gid are kept (when the fake runs as
 * root); a killed container still "runs" for a moment after its commands died; an out-of-memory
 * kill takes the command only and is logged as an `oom` event (GET /events), while OOMKilled stays
 * false as long as the container runs; HostConfig.Binds are
 * served through the archive endpoints and a command's working directory (read-only ones refuse
 * uploads with the engine's 500).
 *
 * Users as the engine has them: an exec runs as its `User`, else the container's, else root;
 * `uid[:gid]` as given (a missing gid from the image's /etc/passwd, else 0), a name from the image's
 * /etc/passwd, an unknown name is exit 126 with the engine's message. When the fake runs as root
 * the command really gets that uid/gid (so `id -u` and file owners are right, and the image's
 * root-owned files are not the user's to write); otherwise every command runs as the fake's own
 * user, and `chown` in a root exec does nothing (every uid is then the same one).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { chmod, cp, lstat, mkdir, mkdtemp, readdir, readFile, readlink, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { constants, tmpdir } from 'node:os';
import { basename, dirname, join, normalize, posix, relative } from 'node:path';

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
  /** References whose pull is refused before any stream (a registry without that manifest: 404). */
  pullRefusals?: Record<string, { status: number; message: string }>;
  /** API versions accepted on versioned paths (default 1.12 to 1.41, as docker 20.10). */
  api?: { min: string; max: string };
  /** `Version` in /version (default 20.10.24-fake). */
  engineVersion?: string;
}

interface FakeBind {
  source: string;
  target: string;
  readOnly: boolean;
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
  /** Killed: its commands are dead but the engine has not recorded the container's exit yet. */
  stopping: boolean;
  oomKilled: boolean;
  binds: FakeBind[];
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
  /** Container events as GET /events serves them (only `oom` is logged). */
  readonly events: { id: string; action: string; timeNano: number }[] = [];
  readonly rules: FakeDockerRule[] = [];
  readonly socketPath: string;
  readonly #dir: string;
  readonly #server: Server;
  readonly #sockets = new Set<Socket>();
  readonly #images: Map<string, string>;
  readonly #pullable: Map<string, string>;
  /** Image folders made by POST /commit: removed with their image. */
  readonly #committed = new Set<string>();
  readonly #removals = new Set<Promise<void>>();
  readonly #pullErrors: Map<string, string>;
  readonly #pullRefusals: Map<string, { status: number; message: string }>;
  readonly #api: { min: string; max: string };
  readonly #engineVersion: string;

  private constructor(dir: string, options: FakeDockerOptions) {
    this.#dir = dir;
    this.socketPath = join(dir, 'docker.sock');
    this.#images = new Map(Object.entries(options.images ?? {}).map(([ref, path]) => [normalizeRef(ref), path]));
    this.#pullable = new Map(Object.entries(options.pullable ?? {}).map(([ref, path]) => [normalizeRef(ref), path]));
    this.#pullErrors = new Map(Object.entries(options.pullErrors ?? {}).map(([ref, message]) => [normalizeRef(ref), message]));
    this.#pullRefusals = new Map(Object.entries(options.pullRefusals ?? {}).map(([ref, refusal]) => [normalizeRef(ref), refusal]));
    this.#api = options.api ?? { min: '1.12', max: '1.41' };
    this.#engineVersion = options.engineVersion ?? '20.10.24-fake';
    this.#server = createServer((request, response) => void this.#handle(request, response));
    this.#server.on('connection', (socket) => {
      this.#sockets.add(socket);
      socket.on('close', () => this.#sockets.delete(socket));
    });
  }

  static async start(options: FakeDockerOptions = {}): Promise<FakeDocker> {
    const fake = new FakeDocker(await mkdtemp(join(tmpdir(), 'fake-docker-')), options);
    if (!IS_ROOT) {
      await mkdir(join(fake.#dir, 'no-owners'));
      await writeFile(join(fake.#dir, 'no-owners', 'chown'), '#!/bin/sh\nexit 0\n', { mode: 0o755 });
    }
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

  /**
   * The container stops (killed, or out of memory): its processes die with it. As with dockerd,
   * the commands' exits are recorded first and the container's `lagMs` later (default 100 ms).
   */
  killContainer(id: string, options: { oomKilled?: boolean; lagMs?: number } = {}): void {
    const container = this.containers.get(id);
    if (!container) return;
    container.stopping = true;
    for (const child of container.processes) if (child.pid) killGroup(child.pid);
    setTimeout(() => {
      container.running = false;
      container.stopping = false;
      container.oomKilled = options.oomKilled ?? false;
      // HostConfig.AutoRemove: the daemon removes a stopped container shortly after it exits.
      if ((container.config.HostConfig as { AutoRemove?: boolean } | undefined)?.AutoRemove) {
        setTimeout(() => void this.#remove(container), 300).unref();
      }
    }, options.lagMs ?? 100).unref();
  }

  /** Another client removes the container (`docker rm -f`): as DELETE ?force=true, its commands die and it is gone. */
  async removeContainer(id: string): Promise<void> {
    const container = this.containers.get(id);
    if (!container) return;
    for (const child of container.processes) if (child.pid) killGroup(child.pid);
    container.running = false;
    await this.#remove(container);
  }

  /**
   * The kernel kills the container's commands for memory (cgroup v1 kills the largest process only):
   * the container runs on, an `oom` event is logged before the command's exit, OOMKilled stays false.
   */
  oomKillCommands(id: string): void {
    const container = this.containers.get(id);
    if (!container) return;
    this.events.push({ id, action: 'oom', timeNano: Date.now() * 1e6 });
    for (const child of container.processes) if (child.pid) killGroup(child.pid);
  }

  // The container is gone for every client at once; its files go after the answer (awaited by close), so a
  // loaded test machine's slow rm does not stand in for the Engine's removal time.
  async #remove(container: FakeContainer): Promise<void> {
    if (!this.containers.delete(container.id)) return;
    this.removed.push(container.id);
    const removal = rm(container.root, { recursive: true, force: true }).finally(() => this.#removals.delete(removal));
    this.#removals.add(removal);
  }

  async close(): Promise<void> {
    for (const container of this.containers.values()) for (const child of container.processes) if (child.pid) killGroup(child.pid);
    for (const socket of this.#sockets) socket.destroy();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
    await Promise.all([...this.#removals]);
    await Promise.all([...this.containers.values()].map((container) => rm(container.root, { recursive: true, force: true })));
    await Promise.all([...this.#committed].map((root) => rm(root, { recursive: true, force: true })));
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
    const recorded: RecordedDockerRequest = {
      method: request.method ?? 'GET',
      path,
      version: versioned?.[1],
      query: Object.fromEntries(url.searchParams),
      body: isJson ? body : undefined,
    };
    this.requests.push(recorded);
    const version = versioned?.[1]?.slice(1);
    if (version && versionBefore(this.#api.max, version)) {
      return this.#send(response, {
        status: 400,
        json: { message: `client version ${version} is too new. Maximum supported API version is ${this.#api.max}` },
      });
    }
    if (version && versionBefore(version, this.#api.min)) {
      return this.#send(response, {
        status: 400,
        json: {
          message: `client version ${version} is too old. Minimum supported API version is ${this.#api.min}, please upgrade your client to a newer version`,
        },
      });
    }

    const rule = this.rules.find(
      (candidate) =>
        (candidate.times ?? Infinity) > 0 && (!candidate.method || candidate.method === recorded.method) && candidate.path.test(path),
    );
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
    response.writeHead(reply.status, {
      ...(text ? { 'content-type': reply.json === undefined ? 'text/plain' : 'application/json' } : {}),
      'api-version': this.#api.max,
      ...reply.headers,
    });
    response.end(head ? undefined : text);
  }

  async #route(
    request: RecordedDockerRequest,
    raw: Buffer,
    incoming: IncomingMessage,
    response: ServerResponse,
  ): Promise<Reply | undefined> {
    const { method, path, query } = request;
    const input = (request.body ?? {}) as Record<string, unknown>;
    let match: RegExpExecArray | null;
    if (method === 'GET' && path === '/_ping') return { status: 200, text: 'OK' };
    if (method === 'GET' && path === '/version')
      return {
        status: 200,
        json: { Version: this.#engineVersion, ApiVersion: this.#api.max, MinAPIVersion: this.#api.min, Os: 'linux', Arch: 'amd64' },
      };
    if (method === 'GET' && path === '/events') return this.#eventLog(query);
    if (method === 'POST' && path === '/images/create') return this.#pull(query.fromImage ?? '');
    if (method === 'POST' && path === '/containers/create') return this.#create(input, query.name);
    if (method === 'POST' && path === '/commit') return this.#commit(query);
    if ((match = /^\/images\/(.+?)(\/json)?$/.exec(path)) && (method === 'DELETE' || (method === 'GET' && match[2])))
      return this.#image(method, decodeURIComponent(match[1] ?? ''));
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
          json: {
            ...(query.size === 'true' || query.size === '1' ? { SizeRw: await treeBytes(container.root) } : {}),
            Id: container.id,
            Name: `/${container.name}`,
            Config: container.config,
            State: {
              Running: container.running,
              Status: container.running ? 'running' : 'exited',
              OOMKilled: container.oomKilled,
              ExitCode: container.running ? 0 : 137,
              Error: '',
            },
          },
        };
      }
      if (method === 'DELETE' && action === '') {
        if (container.running && query.force !== 'true' && query.force !== '1') {
          return {
            status: 409,
            json: {
              message: `cannot remove container "/${container.name}": container is running: stop the container before removing or force remove`,
            },
          };
        }
        for (const child of container.processes) if (child.pid) killGroup(child.pid);
        container.running = false;
        await this.#remove(container);
        return { status: 204 };
      }
      if (method === 'POST' && action === '/exec') {
        if (!container.running) return { status: 409, json: { message: `container ${container.id} is not running` } };
        if (!Array.isArray(input.Cmd) || input.Cmd.length === 0) return { status: 400, json: { message: 'No exec command specified' } };
        const exec: FakeExec = {
          id: randomBytes(32).toString('hex'),
          container,
          config: input,
          running: false,
          started: false,
          exitCode: null,
          pid: 0,
        };
        this.execs.set(exec.id, exec);
        return { status: 201, json: { Id: exec.id } };
      }
      if (action === '/archive') return this.#archive(method, container, query, raw, response);
    }
    if ((match = /^\/exec\/([^/]+)\/(start|json)$/.exec(path))) {
      const exec = this.execs.get(match[1] ?? '');
      if (!exec) return { status: 404, json: { message: `No such exec instance: ${match[1]}` } };
      if (match[2] === 'json' && method === 'GET') {
        return {
          status: 200,
          json: {
            ID: exec.id,
            Running: exec.running,
            ExitCode: exec.exitCode,
            Pid: exec.pid,
            ContainerID: exec.container.id,
            ProcessConfig: { tty: false, entrypoint: (exec.config.Cmd as string[])[0], arguments: (exec.config.Cmd as string[]).slice(1) },
          },
        };
      }
      if (match[2] === 'start' && method === 'POST') {
        if (exec.started) return { status: 409, json: { message: `Exec ${exec.id} has already been started` } };
        this.#startExec(exec, incoming.socket, request.version);
        return undefined;
      }
    }
    return { status: 404, json: { message: 'page not found' } };
  }

  /** GET /events bounded by `until` (the only use the provider makes): the logged events, then the end. */
  #eventLog(query: Record<string, string>): Reply {
    if (!query.until) return { status: 400, json: { message: 'the fake serves bounded event queries only (set until)' } };
    const since = Number(query.since ?? 0) * 1e9;
    const until = Number(query.until) * 1e9;
    const filters = JSON.parse(query.filters ?? '{}') as { container?: string[]; event?: string[] };
    const lines = this.events
      .filter((event) => event.timeNano >= since && event.timeNano <= until)
      .filter(
        (event) => (!filters.container || filters.container.includes(event.id)) && (!filters.event || filters.event.includes(event.action)),
      )
      .map((event) =>
        JSON.stringify({
          status: event.action,
          id: event.id,
          Type: 'container',
          Action: event.action,
          Actor: { ID: event.id, Attributes: {} },
          scope: 'local',
          time: Math.floor(event.timeNano / 1e9),
          timeNano: event.timeNano,
        }),
      );
    return { status: 200, text: lines.map((line) => `${line}\n`).join(''), headers: { 'content-type': 'application/json' } };
  }

  async #pull(reference: string): Promise<Reply> {
    const ref = normalizeRef(reference);
    const refused = this.#pullRefusals.get(ref);
    if (refused) return { status: refused.status, json: { message: refused.message } };
    const streamed = this.#pullErrors.get(ref);
    if (streamed !== undefined) {
      return {
        status: 200,
        text: `${JSON.stringify({ status: `Pulling from ${ref}` })}\n${JSON.stringify({ errorDetail: { message: streamed }, error: streamed })}\n`,
        headers: { 'content-type': 'application/json' },
      };
    }
    const source = this.#pullable.get(ref);
    if (source === undefined) {
      return {
        status: 404,
        json: {
          message: `pull access denied for ${ref.split(':')[0]}, repository does not exist or may require 'docker login': denied: requested access to the resource is denied`,
        },
      };
    }
    this.#images.set(ref, source);
    const lines = [
      { status: `Pulling from ${ref}`, id: 'latest' },
      { status: 'Digest: sha256:0123456789abcdef' },
      { status: `Status: Downloaded newer image for ${ref}` },
    ];
    return { status: 200, text: lines.map((line) => JSON.stringify(line)).join('\r\n'), headers: { 'content-type': 'application/json' } };
  }

  /** POST /commit: the container's root, its binds left out as the engine leaves them, becomes an image. */
  async #commit(query: Record<string, string | undefined>): Promise<Reply> {
    const container = this.containers.get(query.container ?? '');
    if (!container) return { status: 404, json: { message: `No such container: ${query.container ?? ''}` } };
    const root = await mkdtemp(join(tmpdir(), 'fake-docker-img-'));
    await cp(container.root, root, { recursive: true });
    for (const bind of container.binds) {
      await rm(mapPath(root, bind.target), { recursive: true, force: true });
      await mkdir(mapPath(root, bind.target), { recursive: true });
    }
    const id = `sha256:${randomBytes(32).toString('hex')}`;
    this.#images.set(id, root);
    if (query.repo) this.#images.set(normalizeRef(query.tag ? `${query.repo}:${query.tag}` : query.repo), root);
    this.#committed.add(root);
    return { status: 201, json: { Id: id } };
  }

  /** GET /images/{name}/json and DELETE /images/{name}: refused (409) while a container uses it, even forced. */
  async #image(method: string, name: string): Promise<Reply> {
    const root = this.#images.get(normalizeRef(name));
    if (root === undefined) return { status: 404, json: { message: `No such image: ${name}` } };
    const refs = [...this.#images].filter(([, dir]) => dir === root).map(([ref]) => ref);
    const id = refs.find((ref) => ref.startsWith('sha256:')) ?? `sha256:${createHash('sha256').update(root).digest('hex')}`;
    if (method === 'GET') return { status: 200, json: { Id: id, RepoTags: refs.filter((ref) => ref !== id) } };
    const user = [...this.containers.values()].find((container) => this.#images.get(normalizeRef(String(container.config.Image))) === root);
    if (user)
      return {
        status: 409,
        json: {
          message: `conflict: unable to delete ${id.slice(7, 19)} (cannot be forced) - image is being used by ${user.running ? 'running' : 'stopped'} container ${user.id.slice(0, 12)}`,
        },
      };
    for (const ref of refs) this.#images.delete(ref);
    if (this.#committed.delete(root)) await rm(root, { recursive: true, force: true });
    return { status: 200, json: [...refs.filter((ref) => ref !== id).map((ref) => ({ Untagged: ref })), { Deleted: id }] };
  }

  /** Images made by commits that are still held. */
  get committedImages(): number {
    return this.#committed.size;
  }

  async #create(input: Record<string, unknown>, name: string | undefined): Promise<Reply> {
    if (typeof input.Image !== 'string') return { status: 400, json: { message: 'No image specified' } };
    const template = this.#images.get(normalizeRef(input.Image));
    if (template === undefined) return { status: 404, json: { message: `No such image: ${normalizeRef(input.Image)}` } };
    const containerName = name ?? `fake_${randomBytes(3).toString('hex')}`;
    if ([...this.containers.values()].some((container) => container.name === containerName)) {
      return { status: 409, json: { message: `Conflict. The container name "/${containerName}" is already in use` } };
    }
    const binds: FakeBind[] = [];
    for (const spec of ((input.HostConfig as { Binds?: unknown } | undefined)?.Binds as unknown[] | undefined) ?? []) {
      const [source = '', target = '', mode = 'rw', ...rest] = String(spec).split(':');
      if (!source.startsWith('/') || !target.startsWith('/') || !['ro', 'rw'].includes(mode) || rest.length) {
        return { status: 400, json: { message: `invalid volume specification: '${String(spec)}'` } };
      }
      binds.push({ source, target: normalize(target), readOnly: mode === 'ro' });
    }
    const root = await mkdtemp(join(tmpdir(), 'fake-docker-ctr-'));
    await cp(template, root, { recursive: true });
    // A container's / is everyone's to walk (mkdtemp makes it 0700).
    await chmod(root, 0o755);
    if (typeof input.WorkingDir === 'string') await mkdir(mapPath(root, input.WorkingDir), { recursive: true });
    for (const bind of binds) {
      // Binds create a missing source, as the engine does; the link lets a tar upload reach it.
      await mkdir(bind.source, { recursive: true });
      await mkdir(dirname(mapPath(root, bind.target)), { recursive: true });
      await rm(mapPath(root, bind.target), { recursive: true, force: true });
      await symlink(bind.source, mapPath(root, bind.target));
    }
    const container: FakeContainer = {
      id: randomBytes(32).toString('hex'),
      name: containerName,
      config: input,
      root,
      running: false,
      stopping: false,
      oomKilled: false,
      binds,
      processes: new Set(),
    };
    this.containers.set(container.id, container);
    return { status: 201, json: { Id: container.id, Warnings: [] } };
  }

  /** Hijacks the connection as the daemon does, then streams the command's output as frames. */
  #startExec(exec: FakeExec, socket: Socket, version: string | undefined): void {
    exec.started = true;
    exec.running = true;
    // API <= 1.41 labels the multiplexed stream raw-stream all the same.
    const type = version && versionBefore('1.41', version.slice(1)) ? 'multiplexed-stream' : 'raw-stream';
    socket.write(`HTTP/1.1 200 OK\r\nContent-Type: application/vnd.docker.${type}\r\nApi-Version: ${this.#api.max}\r\n\r\n`);
    const frame = (type: 1 | 2, payload: Buffer): void => {
      const header = Buffer.alloc(8);
      header[0] = type;
      header.writeUInt32BE(payload.length, 4);
      if (!socket.destroyed) socket.write(Buffer.concat([header, payload]));
    };
    const container = exec.container;
    const config = exec.config;
    if (container.stopping) {
      frame(1, Buffer.from('OCI runtime exec failed: exec failed: cannot exec in a stopped state: unknown\r\n'));
      exec.exitCode = 126;
      exec.running = false;
      socket.end();
      return;
    }
    const cwd = mapIn(
      container,
      typeof config.WorkingDir === 'string' && config.WorkingDir ? config.WorkingDir : String(container.config.WorkingDir ?? '/'),
    );
    const env: Record<string, string> = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: container.root, LANG: 'C.UTF-8' };
    for (const pair of [...((container.config.Env as string[] | undefined) ?? []), ...((config.Env as string[] | undefined) ?? [])]) {
      const equals = pair.indexOf('=');
      if (equals > 0) env[pair.slice(0, equals)] = pair.slice(equals + 1);
    }
    const user = String(config.User || container.config.User || '0');
    const hasHome = [...((container.config.Env as string[] | undefined) ?? []), ...((config.Env as string[] | undefined) ?? [])].some(
      (pair) => pair.startsWith('HOME='),
    );
    void resolveUser(container.root, user).then((ids) => {
      if (!ids) {
        frame(1, Buffer.from(`unable to find user ${user.split(':')[0]}: no matching entries in passwd file\r\n`));
        exec.exitCode = 126;
        exec.running = false;
        socket.end();
        return;
      }
      // Not root, the fake cannot change owners: a root exec's chown is a no-op, as all uids are one.
      if (!IS_ROOT && ids.uid === 0) env.PATH = `${join(this.#dir, 'no-owners')}:${env.PATH}`;
      // The engine's HOME: the user's passwd home unless the container's or the exec's Env set one.
      if (ids.home && !hasHome) env.HOME = ids.home;
      void this.#spawnExec(exec, socket, frame, cwd, env, IS_ROOT ? { uid: ids.uid, gid: ids.gid } : undefined);
    });
  }

  #spawnExec(
    exec: FakeExec,
    socket: Socket,
    frame: (type: 1 | 2, payload: Buffer) => void,
    cwd: string,
    env: Record<string, string>,
    ids: { uid: number; gid: number } | undefined,
  ): Promise<void> {
    const container = exec.container;
    const config = exec.config;
    const cmd = config.Cmd as string[];
    return stat(cwd).then(
      (info) => {
        if (!info.isDirectory()) throw new Error('not a directory');
        const child = spawn(cmd[0] ?? 'false', cmd.slice(1), {
          cwd,
          env,
          detached: true,
          stdio: ['ignore', 'pipe', 'pipe'],
          ...(ids ?? {}),
        });
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
        frame(
          1,
          Buffer.from(
            `OCI runtime exec failed: exec failed: unable to start container process: chdir to cwd ("${String(config.WorkingDir)}") set in config.json failed: no such file or directory: unknown\r\n`,
          ),
        );
        exec.exitCode = 126;
        exec.running = false;
        socket.end();
      },
    );
  }

  async #archive(
    method: string,
    container: FakeContainer,
    query: Record<string, string>,
    raw: Buffer,
    response: ServerResponse,
  ): Promise<Reply | undefined> {
    const path = query.path ?? '';
    const target = mapIn(container, path || '/');
    const missing = { status: 404, json: { message: `Could not find the file ${path} in container ${container.name}` } };
    if (method === 'PUT') {
      const info = await stat(target).catch(() => undefined);
      if (!info) return missing;
      if (!info.isDirectory()) return { status: 400, json: { message: `extraction point is not a directory: ${path}` } };
      if (query.copyUIDGID === '1' || query.copyUIDGID === 'true') {
        const user = container.config.User;
        if (typeof user === 'string' && user)
          return { status: 500, json: { message: `getent unable to find entry "${user}" in passwd database` } };
      }
      const into = posix.normalize(path || '/');
      if (container.binds.some((bind) => bind.readOnly && (into === bind.target || into.startsWith(`${bind.target}/`)))) {
        return { status: 500, json: { message: 'mounted volume is marked read-only' } };
      }
      const listed = await run('tar', ['-t'], raw, true);
      const readOnly = listed.stdout
        .split('\n')
        .filter(Boolean)
        .map((entry) => posix.join(path || '/', entry))
        .find((entry) => container.binds.some((bind) => bind.readOnly && (entry === bind.target || entry.startsWith(`${bind.target}/`))));
      if (readOnly)
        return {
          status: 500,
          json: { message: `Error processing tar file(exit status 1): open ${readOnly.replace(/\/$/, '')}: read-only file system` },
        };
      // dockerd extracts as root and keeps the headers' owners; without root the fake cannot.
      const owners = process.getuid?.() === 0 ? ['--same-owner', '--numeric-owner'] : ['--no-same-owner'];
      const result = await run('tar', ['-x', ...owners, '-C', target], raw);
      return result.code === 0 ? { status: 200 } : { status: 400, json: { message: result.stderr.trim() } };
    }
    const info = await lstat(target).catch(() => undefined);
    if (!info) return missing;
    const mode = (info.mode & 0o777) + (info.isDirectory() ? 2 ** 31 : 0) + (info.isSymbolicLink() ? 2 ** 27 : 0);
    const statHeader = Buffer.from(
      JSON.stringify({
        name: basename(target),
        size: info.size,
        mode,
        mtime: info.mtime.toISOString(),
        linkTarget: info.isSymbolicLink() ? await readlink(target) : '',
      }),
    ).toString('base64');
    if (method === 'HEAD') return { status: 200, headers: { 'x-docker-container-path-stat': statHeader } };
    if (method !== 'GET') return { status: 405, json: { message: 'method not allowed' } };
    response.writeHead(200, { 'content-type': 'application/x-tar', 'x-docker-container-path-stat': statHeader });
    const tar = spawn('tar', ['-c', '-C', dirname(target), '--', basename(target)], { stdio: ['ignore', 'pipe', 'ignore'] });
    tar.stdout.pipe(response);
    return undefined;
  }
}

const IS_ROOT = process.getuid?.() === 0;

/**
 * An exec's `User` as the engine resolves it in the image: `uid[:gid]`, or a name from its
 * /etc/passwd (`root` is 0 without one); undefined for a name it does not know.
 */
async function resolveUser(root: string, user: string): Promise<{ uid: number; gid: number; home?: string } | undefined> {
  const [name = '', group] = user.split(':');
  const passwd = (await readFile(join(root, 'etc/passwd'), 'utf8').catch(() => ''))
    .split('\n')
    .map((line) => line.split(':'))
    .filter((fields) => fields.length >= 4);
  const entry = passwd.find((fields) => (/^\d+$/.test(name) ? fields[2] === name : fields[0] === name));
  let uid: number;
  if (/^\d+$/.test(name)) uid = Number(name);
  else if (entry) uid = Number(entry[2]);
  else if (name === 'root') uid = 0;
  else return undefined;
  const gid = group !== undefined && /^\d+$/.test(group) ? Number(group) : entry ? Number(entry[3]) : 0;
  return { uid, gid, ...(entry?.[5] ? { home: entry[5] } : {}) };
}

/** Bytes of the regular files under `root` (the fake's SizeRw: it cannot tell what the container wrote from what the image held). */
async function treeBytes(root: string): Promise<number> {
  let total = 0;
  for (const entry of await readdir(root, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) total += (await lstat(join(entry.parentPath, entry.name))).size;
  }
  return total;
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

/** A container path on the host: through the bind that holds it, else under the container's root. */
function mapIn(container: FakeContainer, path: string): string {
  const absolute = posix.normalize(path.startsWith('/') ? path : `/${path}`);
  const bind = container.binds
    .filter((candidate) => absolute === candidate.target || absolute.startsWith(`${candidate.target}/`))
    .sort((a, b) => b.target.length - a.target.length)[0];
  return bind ? join(bind.source, absolute.slice(bind.target.length)) : mapPath(container.root, absolute);
}

/** Whether API version `a` (`1.41`) is older than `b`. */
function versionBefore(a: string, b: string): boolean {
  const [aMajor = 0, aMinor = 0] = a.split('.').map(Number);
  const [bMajor = 0, bMinor = 0] = b.split('.').map(Number);
  return aMajor < bMajor || (aMajor === bMajor && aMinor < bMinor);
}

function killGroup(pid: number): void {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

function run(
  command: string,
  args: string[],
  input: Buffer,
  keepStdout = false,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: ['pipe', keepStdout ? 'pipe' : 'ignore', 'pipe'] });
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    child.stdout?.on('data', (chunk: Buffer) => stdout.push(chunk));
    child.stderr?.on('data', (chunk: Buffer) => stderr.push(chunk));
    child.on('close', (code) =>
      resolve({ code, stdout: Buffer.concat(stdout).toString('utf8'), stderr: Buffer.concat(stderr).toString('utf8') }),
    );
    child.stdin?.end(input);
  });
}

async function readBody(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
