/**
 * One Docker container as a sandbox: exec through exec create/start with the multiplexed stream
 * decoded, the command wrapped in `timeout -s KILL`, files through the archive endpoints (tar),
 * diff and patches with git in the workdir, removal with force on close.
 */
import { posix } from 'node:path';
import { performance } from 'node:perf_hooks';
import { wnwError, WinnowerError } from '../../errors.js';
import { discard, readCapped } from '../../util/read-capped.js';
import { BaseSandbox, CappedBuffer } from '../base-sandbox.js';
import type { PatchPolicy } from '../patch-policy.js';
import type { CallOptions, ExecOptions, ExecResult, FileEntry } from '../types.js';
import { DockerContainerInspect, DockerExecInspect, DockerIdResponse, DockerPathStat, GO_MODE_DIR, hasModeBit } from './docker-api-types.js';
import type { DockerClient } from './docker-client.js';
import { DockerStreamDemuxer } from './docker-stream.js';
import { readTar, writeTar } from './docker-tar.js';
import {
  applyPatchVia,
  BASE_COMMIT_SCRIPT,
  diffVia,
  GIT_SAFE_ENV,
  resolveSandboxPath,
  transientName,
  withStdinFile,
  type RemoteExec,
} from './remote-shell.js';

/** How long past its timeout a command's stream may stay open (children holding the pipes). */
const KILL_GRACE_MS = 2_000;
const MAX_SYMLINK_HOPS = 8;
/** Tar framing around one file: its header, PAX records for long names, padding, the end blocks. */
const TAR_OVERHEAD_BYTES = 64 * 1024;

export interface DockerSandboxInit {
  client: DockerClient;
  /** Container id. */
  id: string;
  workdir: string;
  /** Files written through the archive endpoint get the container user's uid/gid. */
  copyOwnership: boolean;
  /** Largest file readFile returns (default 64 MiB). */
  maxTransferBytes?: number;
  /** Diff base; HEAD of the workdir at start when absent. */
  baseCommit?: string;
  /** What the patch leaves out, and its cap. */
  patch: PatchPolicy;
  onClosed?: () => void;
}

export class DockerSandbox extends BaseSandbox {
  readonly provider = 'docker';
  readonly id: string;
  readonly workdir: string;
  readonly #client: DockerClient;
  readonly #copyOwnership: boolean;
  readonly #maxTransferBytes: number;
  readonly #patch: PatchPolicy;
  readonly #onClosed: (() => void) | undefined;
  #baseCommit: string | undefined;

  constructor(init: DockerSandboxInit) {
    super();
    this.#client = init.client;
    this.id = init.id;
    this.workdir = init.workdir;
    this.#copyOwnership = init.copyOwnership;
    this.#maxTransferBytes = init.maxTransferBytes ?? 64 * 1024 * 1024;
    this.#baseCommit = init.baseCommit;
    this.#patch = init.patch;
    this.#onClosed = init.onClosed;
  }

  /** The commit `diff()` compares against. */
  get baseCommit(): string | undefined {
    return this.#baseCommit;
  }

  /** Records the base commit and registers for shutdown. */
  async start(signal?: AbortSignal): Promise<void> {
    if (this.#baseCommit === undefined) {
      const result = await this.#remoteExec(BASE_COMMIT_SCRIPT, { cwd: this.workdir, env: { ...GIT_SAFE_ENV }, timeoutMs: 60_000, maxOutputBytes: 4096, signal });
      const commit = result.stdout.trim();
      if (/^[0-9a-f]{40,64}$/.test(commit)) this.#baseCommit = commit;
    }
    this.track();
  }

  protected async doExec(command: string, options: Required<Pick<ExecOptions, 'timeoutMs' | 'maxOutputBytes'>> & ExecOptions): Promise<ExecResult> {
    const cwd = resolveSandboxPath(this.workdir, options.cwd);
    let script = command;
    if (options.stdin !== undefined) {
      const name = transientName('stdin');
      await this.#upload(posix.join(cwd, name), new TextEncoder().encode(options.stdin), options.signal);
      script = withStdinFile(command, name);
    }
    return this.#remoteExec(script, { cwd, env: options.env ?? {}, timeoutMs: options.timeoutMs, maxOutputBytes: options.maxOutputBytes, signal: options.signal });
  }

  protected async doWriteFile(path: string, content: Uint8Array, options: CallOptions): Promise<void> {
    await this.#upload(resolveSandboxPath(this.workdir, path), content, options.signal);
  }

  protected async doReadFile(path: string, options: CallOptions): Promise<Uint8Array> {
    let absolute = resolveSandboxPath(this.workdir, path);
    for (let hop = 0; hop <= MAX_SYMLINK_HOPS; hop++) {
      const response = await this.#client.send({
        method: 'GET',
        path: `/containers/${this.id}/archive`,
        query: { path: absolute },
        signal: options.signal,
        errors: { 404: { code: 'WNW_ERR_SBX_FILE', message: `no such file in sandbox ${this.id}: ${absolute}`, details: { sandbox: this.id, path: absolute } } },
      });
      // The archive of a directory is its whole tree: refuse it (and oversized files) unread.
      const stat = pathStatOf(response.headers);
      const tooLarge = (): WinnowerError =>
        wnwError('WNW_ERR_SBX_FILE', `${absolute} in sandbox ${this.id} is larger than ${this.#maxTransferBytes} bytes`, { details: { sandbox: this.id, path: absolute } });
      if (stat && hasModeBit(stat.mode, GO_MODE_DIR)) {
        discard(response.body);
        throw wnwError('WNW_ERR_SBX_FILE', `not a regular file in sandbox ${this.id}: ${absolute}`, { details: { sandbox: this.id, path: absolute, type: 'directory' } });
      }
      if (stat && stat.size > this.#maxTransferBytes) {
        discard(response.body);
        throw tooLarge();
      }
      const archive = await readCapped(response.body, this.#maxTransferBytes + TAR_OVERHEAD_BYTES);
      if (!archive) throw tooLarge();
      let entry;
      try {
        entry = readTar(archive)[0];
      } catch (error) {
        throw wnwError('WNW_ERR_SBX_UPSTREAM', `Docker Engine sent a damaged archive for ${absolute}: ${(error as Error).message}`, { cause: error, details: { sandbox: this.id, path: absolute } });
      }
      if (entry?.type === 'file') {
        if (entry.content.length > this.#maxTransferBytes) throw tooLarge();
        return new Uint8Array(entry.content);
      }
      if (entry?.type === 'symlink') {
        absolute = posix.resolve(posix.dirname(absolute), entry.linkName);
        continue;
      }
      throw wnwError('WNW_ERR_SBX_FILE', `not a regular file in sandbox ${this.id}: ${absolute}`, { details: { sandbox: this.id, path: absolute, type: entry?.type } });
    }
    throw wnwError('WNW_ERR_SBX_FILE', `too many symbolic links in sandbox ${this.id}: ${path}`, { details: { sandbox: this.id, path } });
  }

  protected async doListFiles(path: string, options: CallOptions): Promise<FileEntry[]> {
    const absolute = resolveSandboxPath(this.workdir, path);
    const stat = await this.#stat(absolute, options.signal);
    if (!hasModeBit(stat.mode, GO_MODE_DIR)) throw wnwError('WNW_ERR_SBX_FILE', `not a directory in sandbox ${this.id}: ${absolute}`, { details: { sandbox: this.id, path: absolute } });
    const result = await this.#remoteExec("find . -mindepth 1 -maxdepth 1 -printf '%f\\0%y\\0%s\\0'", {
      cwd: absolute,
      env: {},
      timeoutMs: 60_000,
      maxOutputBytes: 64 * 1024 * 1024,
      signal: options.signal,
    });
    if (result.exitCode !== 0) {
      throw wnwError('WNW_ERR_SBX_EXEC', `listing ${absolute} in sandbox ${this.id} failed: ${result.stderr.trim() || `exit ${result.exitCode}`}`, { details: { sandbox: this.id, path: absolute } });
    }
    const fields = result.stdout.split('\0');
    const entries: FileEntry[] = [];
    for (let index = 0; index + 2 < fields.length; index += 3) {
      const kind = fields[index + 1];
      entries.push({
        name: fields[index] ?? '',
        type: kind === 'f' ? 'file' : kind === 'd' ? 'directory' : kind === 'l' ? 'symlink' : 'other',
        size: Number(fields[index + 2]),
      });
    }
    return entries.sort((left, right) => (left.name < right.name ? -1 : left.name > right.name ? 1 : 0));
  }

  protected doDiff(options: CallOptions): Promise<string> {
    return diffVia(this.#remoteExec, this.workdir, this.#baseCommit, this.#patch, this.id, options.signal);
  }

  protected doApplyPatch(patch: string, options: CallOptions): Promise<void> {
    return applyPatchVia(this.#remoteExec, this.#upload, this.workdir, patch, this.id, options.signal);
  }

  protected async doClose(): Promise<void> {
    try {
      // 404: already gone (auto-removed); 409: a removal is already in progress.
      await this.#client.empty({ method: 'DELETE', path: `/containers/${this.id}`, query: { force: true, v: true }, ok: [200, 204, 404, 409] });
    } finally {
      this.#onClosed?.();
    }
  }

  async #stat(absolute: string, signal?: AbortSignal): Promise<DockerPathStat> {
    const response = await this.#client.send({
      method: 'HEAD',
      path: `/containers/${this.id}/archive`,
      query: { path: absolute },
      signal,
      errors: { 404: { code: 'WNW_ERR_SBX_FILE', message: `no such file or directory in sandbox ${this.id}: ${absolute}`, details: { sandbox: this.id, path: absolute } } },
    });
    await response.body.dump();
    const header = response.headers['x-docker-container-path-stat'];
    const raw = Array.isArray(header) ? header[0] : header;
    try {
      return DockerPathStat.parse(JSON.parse(Buffer.from(raw ?? '', 'base64').toString('utf8')));
    } catch (error) {
      throw wnwError('WNW_ERR_SBX_UPSTREAM', `Docker Engine sent no usable X-Docker-Container-Path-Stat for ${absolute}`, { cause: error, details: { sandbox: this.id, path: absolute } });
    }
  }

  /** PUT a one-file tar at `/`: the engine creates missing parent directories. */
  #upload = async (absolute: string, content: Uint8Array, signal?: AbortSignal): Promise<void> => {
    const archive = writeTar([{ name: absolute.replace(/^\/+/, ''), content }]);
    await this.#client.empty({
      method: 'PUT',
      path: `/containers/${this.id}/archive`,
      query: { path: '/', ...(this.#copyOwnership ? { copyUIDGID: 1 } : {}) },
      body: archive,
      signal,
      errors: {
        403: { code: 'WNW_ERR_SBX_FILE', message: `cannot write ${absolute} in sandbox ${this.id} (read-only)`, details: { sandbox: this.id, path: absolute } },
        400: { code: 'WNW_ERR_SBX_FILE', message: `cannot write ${absolute} in sandbox ${this.id}`, details: { sandbox: this.id, path: absolute } },
        404: { code: 'WNW_ERR_SBX_EXEC', message: `container of sandbox ${this.id} is gone`, details: { sandbox: this.id } },
      },
    });
  };

  /** exec create + start (stream decoded) + inspect; the command runs under `timeout -s KILL`. */
  #remoteExec: RemoteExec = async (command, options) => {
    const started = performance.now();
    const seconds = (Math.max(options.timeoutMs, 1) / 1000).toFixed(3).replace(/\.?0+$/, '');
    const created = await this.#client.json(
      {
        method: 'POST',
        path: `/containers/${this.id}/exec`,
        json: {
          AttachStdin: false,
          AttachStdout: true,
          AttachStderr: true,
          Tty: false,
          Cmd: ['timeout', '-s', 'KILL', seconds, 'bash', '-c', command],
          Env: Object.entries(options.env).map(([key, value]) => `${key}=${value}`),
          WorkingDir: options.cwd,
        },
        signal: options.signal,
        errors: {
          404: { code: 'WNW_ERR_SBX_EXEC', message: `container of sandbox ${this.id} is gone`, details: { sandbox: this.id } },
          409: { code: 'WNW_ERR_SBX_EXEC', message: `container of sandbox ${this.id} is not running`, details: { sandbox: this.id } },
        },
      },
      DockerIdResponse,
    );

    const stdout = new CappedBuffer(options.maxOutputBytes);
    const stderr = new CappedBuffer(options.maxOutputBytes);
    const demuxer = new DockerStreamDemuxer((stream, payload) => (stream === 'stdout' ? stdout : stderr).push(Buffer.from(payload)));
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(), options.timeoutMs + KILL_GRACE_MS);
    const signal = options.signal ? AbortSignal.any([options.signal, deadline.signal]) : deadline.signal;
    try {
      const response = await this.#client.send({
        method: 'POST',
        path: `/exec/${created.Id}/start`,
        json: { Detach: false, Tty: false },
        timeoutMs: null,
        signal,
        errors: { 404: { code: 'WNW_ERR_SBX_EXEC', message: `exec of sandbox ${this.id} vanished`, details: { sandbox: this.id } } },
      });
      for await (const chunk of response.body) demuxer.push(chunk as Buffer);
      demuxer.end();
    } catch (error) {
      if (options.signal?.aborted) throw wnwError('WNW_ERR_OP_ABORTED', `command in sandbox ${this.id} cancelled`, { cause: error, details: { sandbox: this.id } });
      if (!deadline.signal.aborted) {
        if (WinnowerError.isInstance(error) && error.code !== 'WNW_ERR_OP_ABORTED') throw error;
        throw wnwError('WNW_ERR_SBX_EXEC', `output stream of a command in sandbox ${this.id} broke: ${(error as Error).message}`, { cause: error, details: { sandbox: this.id } });
      }
      // Past the deadline: children that escaped the kill still hold the stream; stop reading.
    } finally {
      clearTimeout(timer);
    }

    const deadlinePassed = deadline.signal.aborted;
    const exitCode = await this.#exitCode(created.Id, deadlinePassed, options.signal);
    const elapsedMs = performance.now() - started;
    const timedOut = deadlinePassed || ((exitCode === 137 || exitCode === 124) && elapsedMs >= options.timeoutMs);
    if (!timedOut && exitCode !== null && exitCode >= 128) await this.#assertStillRunning();
    return {
      exitCode: timedOut ? null : exitCode,
      stdout: stdout.toString(),
      stderr: stderr.toString(),
      timedOut,
      truncated: stdout.truncated || stderr.truncated,
      durationMs: Math.round(elapsedMs),
    };
  };

  /** The exec's exit code once it has stopped running; null if it still runs. */
  async #exitCode(execId: string, deadlinePassed: boolean, signal?: AbortSignal): Promise<number | null> {
    for (let attempt = 0; ; attempt++) {
      const inspect = await this.#client.json({ method: 'GET', path: `/exec/${execId}/json`, signal }, DockerExecInspect);
      if (!inspect.Running) return inspect.ExitCode;
      if (deadlinePassed || attempt >= 40) return null;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** A command killed by a signal while the container stopped: the sandbox died (OOM, killed). */
  async #assertStillRunning(): Promise<void> {
    const inspect = await this.#client.json(
      {
        method: 'GET',
        path: `/containers/${this.id}/json`,
        errors: { 404: { code: 'WNW_ERR_SBX_EXEC', message: `container of sandbox ${this.id} is gone`, details: { sandbox: this.id } } },
      },
      DockerContainerInspect,
    );
    if (inspect.State.Running) return;
    const why = inspect.State.OOMKilled ? 'out of memory' : inspect.State.Error || inspect.State.Status || 'stopped';
    throw wnwError('WNW_ERR_SBX_EXEC', `container of sandbox ${this.id} stopped during the command (${why})`, {
      details: { sandbox: this.id, state: inspect.State },
    });
  }
}

/** The `X-Docker-Container-Path-Stat` of an archive answer, when present and readable. */
function pathStatOf(headers: Record<string, string | string[] | undefined>): DockerPathStat | undefined {
  const header = headers['x-docker-container-path-stat'];
  const raw = Array.isArray(header) ? header[0] : header;
  if (!raw) return undefined;
  try {
    return DockerPathStat.parse(JSON.parse(Buffer.from(raw, 'base64').toString('utf8')));
  } catch {
    return undefined;
  }
}

