/**
 * One Docker container as a sandbox: exec through exec create/start with the multiplexed stream
 * decoded, the command wrapped in `timeout -s KILL`, files through the archive endpoints (tar),
 * diff and patches with git in the workdir, removal with force on close. Every exec runs as the
 * sandbox user; the only root exec is the one at start that gives that user the workdir.
 */
import { posix } from 'node:path';
import { performance } from 'node:perf_hooks';
import { wnwError, WinnowerError } from '../../../errors.js';
import { discard, readCapped } from '../../../util/read-capped.js';
import { BaseSandbox, CappedBuffer } from '../../base-sandbox.js';
import type { PatchPolicy } from '../../patch-policy.js';
import type { CallOptions, ExecOptions, ExecResult, FileEntry, SandboxSnapshot } from '../../types.js';
import { DockerContainerInspect, DockerExecInspect, DockerIdResponse, DockerPathStat, GO_MODE_DIR, hasModeBit } from './api-types.js';
import type { DockerClient } from './client.js';
import { DockerStreamDemuxer } from './stream.js';
import { readTar, writeTar, type TarEntryInput } from './tar.js';
import {
  applyPatchVia,
  BASE_COMMIT_SCRIPT,
  diffVia,
  markBaseVia,
  GIT_SAFE_ENV,
  resolveSandboxPath,
  transientName,
  withStdinFile,
  type RemoteExec,
} from '../remote-shell.js';

/** How long past its timeout a command's stream may stay open (children holding the pipes). */
const KILL_GRACE_MS = 2_000;
/**
 * After an exit 137, how often and how far apart the container is inspected again: dockerd records
 * an exec's SIGKILL before its container's death (for tens of ms the container still "runs").
 */
const AFTER_KILL_INSPECTS = 5;
const AFTER_KILL_PAUSE_MS = 50;
/** What dockerd answers (exit 126, on stdout) for an exec started in a container that is stopping. */
const STOPPED_STATE = /cannot exec in a stopped state/;
const MAX_SYMLINK_HOPS = 8;
/** Deadline of the `chown -R` of the workdir at start (a large repository takes seconds). */
const OWNERSHIP_TIMEOUT_MS = 600_000;
/** Tar framing around one file: its header, PAX records for long names, padding, the end blocks. */
const TAR_OVERHEAD_BYTES = 64 * 1024;

export interface DockerSandboxInit {
  client: DockerClient;
  /** Container id. */
  id: string;
  workdir: string;
  /**
   * The user every command runs as (`1000:1000`, `app`; default `1000:1000`): files written through
   * the archive endpoint get its uid/gid in their tar headers. A name is resolved once inside.
   */
  user?: string;
  /** Whether that user may be root (a name can turn out to be uid 0). */
  allowRoot?: boolean;
  /** Largest file readFile returns (default 64 MiB). */
  maxTransferBytes?: number;
  /** Diff base; HEAD of the workdir at start when absent. */
  baseCommit?: string;
  /** What the patch leaves out, and its cap. */
  patch: PatchPolicy;
  /** Commits the container into a snapshot its provider can fork (snapshot.ts), given the diff base at that moment. */
  takeSnapshot: (base: string | undefined, signal: AbortSignal | undefined) => Promise<SandboxSnapshot>;
  /** Awaited by close (a fork's snapshot image may be removed then). */
  onClosed?: () => void | Promise<void>;
}

export class DockerSandbox extends BaseSandbox {
  readonly provider = 'docker';
  readonly id: string;
  readonly workdir: string;
  readonly #client: DockerClient;
  readonly #user: string;
  readonly #allowRoot: boolean;
  #owner: { uid: number; gid: number } | undefined;
  readonly #maxTransferBytes: number;
  readonly #patch: PatchPolicy;
  readonly #onClosed: DockerSandboxInit['onClosed'];
  readonly #takeSnapshot: DockerSandboxInit['takeSnapshot'];
  #baseCommit: string | undefined;
  /** Set once the container is known to be gone or stopped: every later call throws it. */
  #lost: WinnowerError | undefined;

  constructor(init: DockerSandboxInit) {
    super();
    this.#client = init.client;
    this.id = init.id;
    this.workdir = init.workdir;
    this.#user = init.user ?? '1000:1000';
    this.#allowRoot = init.allowRoot ?? false;
    this.#owner = numericOwner(this.#user);
    this.#maxTransferBytes = init.maxTransferBytes ?? 64 * 1024 * 1024;
    this.#baseCommit = init.baseCommit;
    this.#patch = init.patch;
    this.#onClosed = init.onClosed;
    this.#takeSnapshot = init.takeSnapshot;
  }

  /** The commit `diff()` compares against. */
  get baseCommit(): string | undefined {
    return this.#baseCommit;
  }

  /** Why the sandbox is lost (its container was removed or stopped), once it is known to be. */
  get lost(): WinnowerError | undefined {
    return this.#lost;
  }

  protected override assertOpen(): void {
    super.assertOpen();
    if (this.#lost) throw this.#lost;
  }

  /**
   * The container is gone or stopped, so nothing in it can run again: WNW_ERR_SBX_LOST with
   * `details.lost`, as local and orchard sandboxes say it (docs/errors.md), so a caller creates a
   * new sandbox rather than retrying a command. Containers are never restarted behind its back.
   */
  #markLost(why: string, details: Record<string, unknown> = {}, cause?: unknown): WinnowerError {
    this.#lost ??= wnwError('WNW_ERR_SBX_LOST', `sandbox ${this.id} is lost: its container ${why}; create a new one`, {
      ...(cause === undefined ? {} : { cause }),
      details: { ...details, sandbox: this.id, lost: true },
    });
    return this.#lost;
  }

  /** How the client maps a status that means the container is gone (404) or stopped (409); `#lostOn` records it. */
  #lostStatus(why: string) {
    return { code: 'WNW_ERR_SBX_LOST' as const, message: `container of sandbox ${this.id} ${why}`, details: { why } };
  }

  /** Rethrows `error`; one mapped by `#lostStatus` as the lost sandbox it means, with the engine's words. */
  #lostOn(error: unknown): never {
    if (!WinnowerError.isInstance(error) || error.code !== 'WNW_ERR_SBX_LOST') throw error;
    const { why, message, ...upstream } = error.details;
    throw this.#markLost(`${String(why)}${message ? ` (${String(message)})` : ''}`, upstream, error);
  }

  /** Resolves the user, gives it the workdir, records the base commit, and registers for shutdown. */
  async start(signal?: AbortSignal): Promise<void> {
    this.#owner ??= await this.#resolveOwner(signal);
    if (this.#owner.uid === 0 && !this.#allowRoot) {
      throw wnwError(
        'WNW_ERR_CFG_INVALID',
        `invalid docker provider setting sandbox.settings.user: ${this.#user} is uid 0 in this image, and agent code never runs as root unless sandbox.settings.allowRoot is true`,
        {
          details: { field: 'sandbox.settings.user', provider: 'docker', user: this.#user, sandbox: this.id },
        },
      );
    }
    if (this.#owner.uid !== 0) await this.#giveWorkdir(this.#owner, signal);
    if (this.#baseCommit === undefined) {
      const result = await this.#remoteExec(BASE_COMMIT_SCRIPT, {
        cwd: this.workdir,
        env: { ...GIT_SAFE_ENV },
        timeoutMs: 60_000,
        maxOutputBytes: 4096,
        signal,
      });
      const commit = result.stdout.trim();
      if (/^[0-9a-f]{40,64}$/.test(commit)) this.#baseCommit = commit;
    }
    this.track();
  }

  protected async doExec(
    command: string,
    options: Required<Pick<ExecOptions, 'timeoutMs' | 'maxOutputBytes'>> & ExecOptions,
  ): Promise<ExecResult> {
    const cwd = resolveSandboxPath(this.workdir, options.cwd);
    let script = command;
    if (options.stdin !== undefined) {
      const name = transientName('stdin');
      await this.#upload(posix.join(cwd, name), new TextEncoder().encode(options.stdin), options.signal);
      script = withStdinFile(command, name);
    }
    return this.#remoteExec(script, {
      cwd,
      env: options.env ?? {},
      timeoutMs: options.timeoutMs,
      maxOutputBytes: options.maxOutputBytes,
      signal: options.signal,
    });
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
        errors: {
          404: {
            code: 'WNW_ERR_SBX_FILE',
            message: `no such file in sandbox ${this.id}: ${absolute}`,
            details: { sandbox: this.id, path: absolute },
          },
        },
      });
      // The archive of a directory is its whole tree: refuse it (and oversized files) unread.
      const stat = pathStatOf(response.headers);
      const tooLarge = (): WinnowerError =>
        wnwError('WNW_ERR_SBX_FILE', `${absolute} in sandbox ${this.id} is larger than ${this.#maxTransferBytes} bytes`, {
          details: { sandbox: this.id, path: absolute },
        });
      if (stat && hasModeBit(stat.mode, GO_MODE_DIR)) {
        discard(response.body);
        throw wnwError('WNW_ERR_SBX_FILE', `not a regular file in sandbox ${this.id}: ${absolute}`, {
          details: { sandbox: this.id, path: absolute, type: 'directory' },
        });
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
        throw wnwError('WNW_ERR_SBX_UPSTREAM', `Docker Engine sent a damaged archive for ${absolute}: ${(error as Error).message}`, {
          cause: error,
          details: { sandbox: this.id, path: absolute },
        });
      }
      if (entry?.type === 'file') {
        if (entry.content.length > this.#maxTransferBytes) throw tooLarge();
        return new Uint8Array(entry.content);
      }
      if (entry?.type === 'symlink') {
        absolute = posix.resolve(posix.dirname(absolute), entry.linkName);
        continue;
      }
      throw wnwError('WNW_ERR_SBX_FILE', `not a regular file in sandbox ${this.id}: ${absolute}`, {
        details: { sandbox: this.id, path: absolute, type: entry?.type },
      });
    }
    throw wnwError('WNW_ERR_SBX_FILE', `too many symbolic links in sandbox ${this.id}: ${path}`, { details: { sandbox: this.id, path } });
  }

  protected async doListFiles(path: string, options: CallOptions): Promise<FileEntry[]> {
    const absolute = resolveSandboxPath(this.workdir, path);
    const stat = await this.#stat(absolute, options.signal);
    if (!hasModeBit(stat.mode, GO_MODE_DIR))
      throw wnwError('WNW_ERR_SBX_FILE', `not a directory in sandbox ${this.id}: ${absolute}`, {
        details: { sandbox: this.id, path: absolute },
      });
    const result = await this.#remoteExec("find . -mindepth 1 -maxdepth 1 -printf '%f\\0%y\\0%s\\0'", {
      cwd: absolute,
      env: {},
      timeoutMs: 60_000,
      maxOutputBytes: 64 * 1024 * 1024,
      signal: options.signal,
    });
    if (result.exitCode !== 0) {
      throw wnwError(
        'WNW_ERR_SBX_EXEC',
        `listing ${absolute} in sandbox ${this.id} failed: ${result.stderr.trim() || `exit ${result.exitCode}`}`,
        { details: { sandbox: this.id, path: absolute } },
      );
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
    // This provider's exec output is decoded as UTF-8 (ExecResult is text): the diff comes as base64 to keep its bytes.
    return diffVia(this.#remoteExec, this.workdir, this.#baseCommit, this.#patch, this.id, options.signal, { base64: true });
  }

  /** `docker commit` of the container (types.ts `snapshot`; snapshot.ts): its files, not its processes. */
  async snapshot(options: CallOptions = {}): Promise<SandboxSnapshot> {
    this.assertOpen();
    return this.#takeSnapshot(this.#baseCommit, options.signal);
  }

  /** The workspace as it stands becomes the base of later diffs (types.ts `markBase`). */
  async markBase(options: CallOptions = {}): Promise<string> {
    this.assertOpen();
    this.#baseCommit = await markBaseVia(this.#remoteExec, this.workdir, this.#patch, this.id, options.signal);
    return this.#baseCommit;
  }

  protected doApplyPatch(patch: string, options: CallOptions): Promise<void> {
    return applyPatchVia(this.#remoteExec, this.#upload, this.workdir, patch, this.id, options.signal);
  }

  protected async doClose(): Promise<void> {
    try {
      // 404: already gone (auto-removed); 409: a removal is already in progress.
      await this.#client.empty({
        method: 'DELETE',
        path: `/containers/${this.id}`,
        query: { force: true, v: true },
        ok: [200, 204, 404, 409],
      });
    } finally {
      await this.#onClosed?.();
    }
  }

  /**
   * The one exec as root: the workdir to the sandbox user (images ship it root's), and /tmp (its
   * HOME when numeric) world-writable and sticky. Relative to the workdir, as every script here.
   * Costs a walk of the tree and, on overlay2, a copy-up of every file changed (no metacopy): git's
   * object files are left root's (git never rewrites one; it only adds and unlinks them, which the
   * folders, given to the user, allow), so the history is not copied; nor is what the user owns
   * already. `-h`: a symlink itself, never its target.
   */
  async #giveWorkdir(owner: { uid: number; gid: number }, signal?: AbortSignal): Promise<void> {
    const ids = `${owner.uid}:${owner.gid}`;
    // Files already the user's (an image built with COPY --chown) are left alone: no copy-up.
    const notOwned = `\\( ! -user ${owner.uid} -o ! -group ${owner.gid} \\)`;
    const script = [
      `find . -path ./.git/objects -prune -o ${notOwned} -exec chown -h ${ids} {} +`,
      `{ [ ! -d .git/objects ] || find .git/objects -type d ${notOwned} -exec chown ${ids} {} +; }`,
      `{ [ "$(stat -c %a /tmp 2>/dev/null)" = 1777 ] || { mkdir -p /tmp && chmod 1777 /tmp; }; }`,
    ].join(' && ');
    const result = await this.#remoteExec(script, {
      cwd: this.workdir,
      env: {},
      timeoutMs: OWNERSHIP_TIMEOUT_MS,
      maxOutputBytes: 64 * 1024,
      signal,
      user: '0:0',
    });
    if (result.exitCode !== 0) {
      const why = result.timedOut
        ? `not done after ${OWNERSHIP_TIMEOUT_MS} ms`
        : result.stderr.trim() || result.stdout.trim() || `exit ${result.exitCode}`;
      throw wnwError(
        'WNW_ERR_SBX_CREATE',
        `cannot give ${this.workdir} to user ${this.#user} in sandbox ${this.id}: ${why.slice(0, 2000)}`,
        {
          details: { sandbox: this.id, user: this.#user, workdir: this.workdir },
        },
      );
    }
  }

  /** `id -u`/`id -g` of the sandbox user, run as that user. */
  async #resolveOwner(signal?: AbortSignal): Promise<{ uid: number; gid: number }> {
    const result = await this.#remoteExec('printf "%s:%s" "$(id -u)" "$(id -g)"', {
      cwd: '/',
      env: {},
      timeoutMs: 30_000,
      maxOutputBytes: 256,
      signal,
    });
    const owner = numericOwner(result.stdout.trim());
    if (result.exitCode !== 0 || !owner) {
      throw wnwError(
        'WNW_ERR_SBX_CREATE',
        `cannot resolve the uid/gid of user ${this.#user} in sandbox ${this.id}: ${result.stderr.trim() || result.stdout.trim() || `exit ${result.exitCode}`}`,
        {
          details: { sandbox: this.id, user: this.#user },
        },
      );
    }
    return owner;
  }

  async #stat(absolute: string, signal?: AbortSignal): Promise<DockerPathStat> {
    const response = await this.#client.send({
      method: 'HEAD',
      path: `/containers/${this.id}/archive`,
      query: { path: absolute },
      signal,
      errors: {
        404: {
          code: 'WNW_ERR_SBX_FILE',
          message: `no such file or directory in sandbox ${this.id}: ${absolute}`,
          details: { sandbox: this.id, path: absolute },
        },
      },
    });
    await response.body.dump();
    const header = response.headers['x-docker-container-path-stat'];
    const raw = Array.isArray(header) ? header[0] : header;
    try {
      return DockerPathStat.parse(JSON.parse(Buffer.from(raw ?? '', 'base64').toString('utf8')));
    } catch (error) {
      throw wnwError('WNW_ERR_SBX_UPSTREAM', `Docker Engine sent no usable X-Docker-Container-Path-Stat for ${absolute}`, {
        cause: error,
        details: { sandbox: this.id, path: absolute },
      });
    }
  }

  /**
   * PUT a one-file tar into the file's folder; when that folder is missing, into its nearest
   * existing ancestor with the missing folders as tar entries too. The engine extracts as root and
   * keeps the headers' uid/gid, so file and folders are the sandbox user's (folders the engine made
   * itself would be root's). Not `copyUIDGID`: docker 20.10 looks the container's user up by name
   * in the host's passwd database and answers 500 for a numeric one.
   */
  #upload = async (absolute: string, content: Uint8Array, signal?: AbortSignal): Promise<void> => {
    const owner = this.#owner ?? {};
    const folder = posix.dirname(absolute);
    try {
      await this.#putTar(folder, [{ name: posix.basename(absolute), content, ...owner }], absolute, signal);
      return;
    } catch (error) {
      if (!(WinnowerError.isInstance(error) && error.details.missingFolder === true)) throw error;
    }
    const missing: string[] = [];
    let base = folder;
    while (!(await this.#exists(base, signal))) {
      if (base === '/') throw this.#markLost('is gone (not even / exists)');
      missing.unshift(posix.basename(base));
      base = posix.dirname(base);
    }
    const entries = missing.map((_, index) => ({ name: missing.slice(0, index + 1).join('/'), type: 'directory' as const, ...owner }));
    await this.#putTar(base, [...entries, { name: posix.relative(base, absolute), content, ...owner }], absolute, signal);
  };

  async #exists(absolute: string, signal?: AbortSignal): Promise<boolean> {
    try {
      await this.#stat(absolute, signal);
      return true;
    } catch (error) {
      if (WinnowerError.isInstance(error) && error.code === 'WNW_ERR_SBX_FILE') return false;
      throw error;
    }
  }

  async #putTar(folder: string, entries: TarEntryInput[], absolute: string, signal?: AbortSignal): Promise<void> {
    try {
      await this.#client.empty({
        method: 'PUT',
        path: `/containers/${this.id}/archive`,
        query: { path: folder },
        body: writeTar(entries),
        signal,
        errors: {
          403: {
            code: 'WNW_ERR_SBX_FILE',
            message: `cannot write ${absolute} in sandbox ${this.id} (read-only)`,
            details: { sandbox: this.id, path: absolute },
          },
          400: {
            code: 'WNW_ERR_SBX_FILE',
            message: `cannot write ${absolute} in sandbox ${this.id}`,
            details: { sandbox: this.id, path: absolute },
          },
          // The folder, or the whole container, is missing: #upload tells which.
          404: {
            code: 'WNW_ERR_SBX_FILE',
            message: `no folder ${folder} in sandbox ${this.id}`,
            details: { sandbox: this.id, path: folder, missingFolder: true },
          },
        },
      });
    } catch (error) {
      // A read-only mount is a 500 (the target in it: "mounted volume is marked read-only"; a tar
      // entry reaching into it: "read-only file system"): a file error, not an engine fault.
      if (
        WinnowerError.isInstance(error) &&
        error.code === 'WNW_ERR_SBX_UPSTREAM' &&
        /read-only file system|marked read-only/.test(String(error.details.message))
      ) {
        throw wnwError('WNW_ERR_SBX_FILE', `cannot write ${absolute} in sandbox ${this.id} (read-only)`, {
          cause: error,
          details: { sandbox: this.id, path: absolute },
        });
      }
      throw error;
    }
  }

  /**
   * exec create + start (stream decoded) + inspect; the command runs under `timeout -s KILL`, as
   * the sandbox user unless `user` says otherwise (only the ownership step does).
   */
  #remoteExec = async (command: string, options: Parameters<RemoteExec>[1] & { user?: string }): Promise<ExecResult> => {
    const started = performance.now();
    const startedAtMs = Date.now();
    const seconds = (Math.max(options.timeoutMs, 1) / 1000).toFixed(3).replace(/\.?0+$/, '');
    if (this.#lost) throw this.#lost;
    const created = await this.#client
      .json(
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
            User: options.user ?? this.#user,
          },
          signal: options.signal,
          errors: { 404: this.#lostStatus('is gone'), 409: this.#lostStatus('is not running') },
        },
        DockerIdResponse,
      )
      .catch((error: unknown) => this.#lostOn(error));

    const stdout = new CappedBuffer(options.maxOutputBytes);
    const stderr = new CappedBuffer(options.maxOutputBytes);
    // Framing follows the Tty flag sent (false): API <= 1.41 labels this stream raw-stream anyway.
    const demuxer = new DockerStreamDemuxer((stream, payload) => (stream === 'stdout' ? stdout : stderr).push(Buffer.from(payload)), {
      tty: false,
    });
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
        errors: { 404: this.#lostStatus('was removed (its exec vanished)') },
      });
      for await (const chunk of response.body) demuxer.push(chunk as Buffer);
      demuxer.end();
    } catch (error) {
      if (options.signal?.aborted)
        throw wnwError('WNW_ERR_OP_ABORTED', `command in sandbox ${this.id} cancelled`, { cause: error, details: { sandbox: this.id } });
      if (!deadline.signal.aborted) {
        if (WinnowerError.isInstance(error) && error.code === 'WNW_ERR_SBX_LOST') this.#lostOn(error);
        if (WinnowerError.isInstance(error) && error.code !== 'WNW_ERR_OP_ABORTED') throw error;
        throw wnwError('WNW_ERR_SBX_EXEC', `output stream of a command in sandbox ${this.id} broke: ${(error as Error).message}`, {
          cause: error,
          details: { sandbox: this.id },
        });
      }
      // Past the deadline: children that escaped the kill still hold the stream; stop reading.
    } finally {
      clearTimeout(timer);
    }

    const deadlinePassed = deadline.signal.aborted;
    const exitCode = await this.#exitCode(created.Id, deadlinePassed, options.signal);
    const elapsedMs = performance.now() - started;
    const timedOut = deadlinePassed || ((exitCode === 137 || exitCode === 124) && elapsedMs >= options.timeoutMs);
    let note = '';
    if (!timedOut && exitCode !== null && exitCode >= 128) {
      if ((await this.#afterSignal(exitCode, startedAtMs)) === 'oom')
        note = `winnower: the command was killed for lack of memory (the sandbox's memory limit)\n`;
    }
    if (exitCode === 126 && STOPPED_STATE.test(stdout.toString()))
      throw this.#markLost('is not running (stopped during the command)', { output: stdout.toString().slice(0, 300) });
    return {
      exitCode: timedOut ? null : exitCode,
      stdout: stdout.toString(),
      stderr: stderr.toString() + note,
      timedOut,
      truncated: stdout.truncated || stderr.truncated,
      durationMs: Math.round(elapsedMs),
    };
  };

  /** The exec's exit code once it has stopped running; null if it still runs. */
  async #exitCode(execId: string, deadlinePassed: boolean, signal?: AbortSignal): Promise<number | null> {
    for (let attempt = 0; ; attempt++) {
      const inspect = await this.#client
        .json(
          {
            method: 'GET',
            path: `/exec/${execId}/json`,
            signal,
            // An engine forgets the execs of a container it removed.
            errors: { 404: this.#lostStatus('was removed (its exec vanished)') },
          },
          DockerExecInspect,
        )
        .catch((error: unknown) => this.#lostOn(error));
      if (!inspect.Running) return inspect.ExitCode;
      if (deadlinePassed || attempt >= 40) return null;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /**
   * A command killed by a signal: throws WNW_ERR_SBX_LOST when the container died with it (killed,
   * out of memory); 'oom' when the container lives on but the kernel killed the command for memory
   * (cgroup v1, and v2 without memory.oom.group, kill only the largest process). An exit 137 is
   * inspected again a few times, since the engine records the container's death a little late.
   */
  async #afterSignal(exitCode: number, sinceMs: number): Promise<'oom' | undefined> {
    const inspects = exitCode === 137 ? AFTER_KILL_INSPECTS : 1;
    for (let attempt = 1; ; attempt++) {
      const inspect = await this.#client
        .json(
          {
            method: 'GET',
            path: `/containers/${this.id}/json`,
            errors: { 404: this.#lostStatus('is gone') },
          },
          DockerContainerInspect,
        )
        .catch((error: unknown) => this.#lostOn(error));
      if (!inspect.State.Running) {
        const why = inspect.State.OOMKilled ? 'out of memory' : inspect.State.Error || inspect.State.Status || 'stopped';
        throw this.#markLost(`stopped during the command (${why})`, { state: inspect.State });
      }
      if (attempt >= inspects) break;
      await new Promise((resolve) => setTimeout(resolve, AFTER_KILL_PAUSE_MS));
    }
    return exitCode === 137 && (await this.#oomEventSince(sinceMs)) ? 'oom' : undefined;
  }

  /**
   * Whether the engine logged an `oom` event for this container since `sinceMs`. (Not
   * State.OOMKilled: docker 20.10 leaves it false while the container lives on, and it would stay
   * set for every later command.) Best effort: an engine that cannot say gets no note.
   */
  async #oomEventSince(sinceMs: number): Promise<boolean> {
    const timestamp = (ms: number): string => `${Math.floor(ms / 1000)}.${String(ms % 1000).padStart(3, '0')}000000`;
    try {
      const response = await this.#client.send({
        method: 'GET',
        path: '/events',
        // An `until` that is not in the future makes the engine answer with the logged events and close.
        query: {
          since: timestamp(sinceMs),
          until: timestamp(Date.now()),
          filters: JSON.stringify({ container: [this.id], event: ['oom'] }),
        },
        timeoutMs: 5_000,
      });
      const text = (await readCapped(response.body, 1024 * 1024))?.toString('utf8') ?? '';
      return text.split('\n').some((line) => /"(Action|status)":"oom"/.test(line));
    } catch {
      return false;
    }
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

/** `1000:1000` → its numbers; anything else (a name, a uid alone) is resolved in the container. */
function numericOwner(user: string | undefined): { uid: number; gid: number } | undefined {
  const match = user === undefined ? null : /^(\d+):(\d+)$/.exec(user);
  return match ? { uid: Number(match[1]), gid: Number(match[2]) } : undefined;
}
