/**
 * One Orchard Env sandbox (a Kubernetes pod): exec as a job submitted once and polled to a
 * terminal status, one at a time per sandbox; files in base64; diff and patches with git in the
 * workdir; heartbeats while open; DELETE on close. What the real orchestrator does and why each
 * rule here exists: docs/design/02-orchard-real-behaviour.md, cited below entry by entry.
 */
import { posix } from 'node:path';
import { performance } from 'node:perf_hooks';
import { toWinnowerError, wnwError, WinnowerError } from '../../../errors.js';
import { BaseSandbox, CappedBuffer, shellQuote } from '../../base-sandbox.js';
import type { PatchPolicy } from '../../patch-policy.js';
import type { CallOptions, ExecOptions, ExecResult, FileEntry, SandboxSnapshot } from '../../types.js';
import {
  OrchardFileContent,
  OrchardFileList,
  OrchardJob,
  OrchardSandboxInfo,
  OrchardStatusReply,
  OrchardWriteResult,
} from './api-types.js';
import { requestIdSuffix, sleep, type OrchardCall, type OrchardClient, type OrchardReply } from './client.js';
import { unwrapResult, wrapCommand } from './command.js';
import { mapOrchardJob, mapOrchardSandboxStatus } from './map-status.js';
import type { ReplayStep } from './replay.js';
import {
  applyPatchVia,
  BASE_COMMIT_SCRIPT,
  diffVia,
  markBaseVia,
  GIT_SAFE_ENV,
  resolveSandboxPath,
  transientName,
  type RemoteExec,
} from '../remote-shell.js';

/** The server's `wait:true` waits up to `timeout_seconds + 30` s. */
const SERVER_WAIT_GRACE_S = 30;
/** Longest server-side wait asked for in one poll. */
const MAX_POLL_WAIT_S = 30;
/** Time the wrapper takes to kill a command at its timeout and report. */
const COMMAND_KILL_GRACE_MS = 2_000;
/**
 * A job carries the command's whole stdout and stderr, JSON-escaped (the server caps nothing):
 * room for both streams at the cap, escaped, or the client's limit if larger; never more than V8
 * can hold in one string.
 */
const JOB_BYTES_PER_OUTPUT_BYTE = 8;
const MAX_JOB_RESPONSE_BYTES = 512 * 1024 * 1024;
/** A 500 on a file route that wraps the agent's 400 "not a file / not a directory" (docs/design/02-orchard-real-behaviour.md#5). */
const FILE_TYPE_DETAIL = /Not a file:|Not a directory:/;
/** A 500 from a stale pooled connection between orchestrator and agent: one retry is safe (docs/design/02-orchard-real-behaviour.md#7). */
const STALE_CONNECTION_DETAIL = /Connection reset|Server disconnected/i;

export interface OrchardSandboxInit {
  client: OrchardClient;
  id: string;
  workdir: string;
  /** Environment added to every exec (the spec's). */
  env: Record<string, string>;
  /** 0 disables heartbeats. */
  heartbeatIntervalMs: number;
  /** Diff base; HEAD of the workdir at start when absent. */
  baseCommit?: string;
  /** What the patch leaves out, and its cap. */
  patch: PatchPolicy;
  /** Run user commands in `bash --login -i` (never the agent's `login_shell`, which rewrites stderr). */
  loginShell?: boolean;
  /** Shell lines run before every user command (a conda activation). */
  activate?: string;
  /** Called once the sandbox is deleted (the provider's bookkeeping). */
  onClosed?: () => void;
  /** Makes a snapshot of what this sandbox has recorded (replay.ts): the steps so far. */
  takeSnapshot: (steps: readonly ReplayStep[]) => SandboxSnapshot;
}

type ExecCall = Parameters<RemoteExec>[1];
interface Shell {
  loginShell: boolean;
  activate?: string;
  stdinFile?: string;
}

export class OrchardSandbox extends BaseSandbox {
  readonly provider = 'orchard';
  readonly id: string;
  readonly workdir: string;
  readonly #client: OrchardClient;
  readonly #env: Record<string, string>;
  readonly #heartbeatIntervalMs: number;
  readonly #onClosed: (() => void) | undefined;
  readonly #loginShell: boolean;
  readonly #activate: string | undefined;
  readonly #patch: PatchPolicy;
  readonly #takeSnapshot: OrchardSandboxInit['takeSnapshot'];
  /** What changed this sandbox through winnower, in order: what a fork replays (replay.ts). */
  readonly #steps: ReplayStep[] = [];
  #baseCommit: string | undefined;
  #heartbeatTimer: NodeJS.Timeout | undefined;
  #heartbeatInFlight = false;
  #heartbeatsSent = 0;
  #heartbeatError: WinnowerError | undefined;
  /** Set once the pod is known to be gone (died, reaped): every later exec fails with it at once. */
  #lost: WinnowerError | undefined;
  /** The tail of the per-sandbox exec queue (the service serialises per replica only: docs/design/02-orchard-real-behaviour.md#12). */
  #execTail: Promise<void> = Promise.resolve();

  constructor(init: OrchardSandboxInit) {
    super();
    this.#client = init.client;
    this.id = init.id;
    this.workdir = init.workdir;
    this.#env = init.env;
    this.#heartbeatIntervalMs = init.heartbeatIntervalMs;
    this.#baseCommit = init.baseCommit;
    this.#onClosed = init.onClosed;
    this.#loginShell = init.loginShell ?? false;
    this.#activate = init.activate;
    this.#patch = init.patch;
    this.#takeSnapshot = init.takeSnapshot;
  }

  /** The commit `diff()` compares against. */
  get baseCommit(): string | undefined {
    return this.#baseCommit;
  }

  /** Heartbeats answered so far, and the last heartbeat failure (cleared by a success). */
  get heartbeat(): { sent: number; lastError: WinnowerError | undefined } {
    return { sent: this.#heartbeatsSent, lastError: this.#heartbeatError };
  }

  /** Why the sandbox is known to be gone, if it is. */
  get lost(): WinnowerError | undefined {
    return this.#lost;
  }

  /** Records the base commit, then starts heartbeats and registers for shutdown. */
  async start(signal?: AbortSignal): Promise<void> {
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
    if (this.#heartbeatIntervalMs > 0) {
      this.#heartbeatTimer = setInterval(() => void this.#sendHeartbeat(), this.#heartbeatIntervalMs);
      this.#heartbeatTimer.unref();
    }
    this.track();
  }

  protected async doExec(
    command: string,
    options: Required<Pick<ExecOptions, 'timeoutMs' | 'maxOutputBytes'>> & ExecOptions,
  ): Promise<ExecResult> {
    const cwd = resolveSandboxPath(this.workdir, options.cwd);
    const env = { ...this.#env, ...options.env };
    let stdinFile: string | undefined;
    if (options.stdin !== undefined) {
      stdinFile = transientName('stdin');
      await this.#upload(posix.join(cwd, stdinFile), new TextEncoder().encode(options.stdin), options.signal);
    }
    const call = { cwd, env, timeoutMs: options.timeoutMs, maxOutputBytes: options.maxOutputBytes, signal: options.signal };
    const result = await this.#submit(command, call, {
      loginShell: this.#loginShell,
      ...(this.#activate ? { activate: this.#activate } : {}),
      ...(stdinFile ? { stdinFile } : {}),
    });
    this.#steps.push({
      kind: 'exec',
      command,
      cwd: options.cwd,
      env: options.env,
      stdin: options.stdin,
      timeoutMs: options.timeoutMs,
      exitCode: result.exitCode,
    });
    return result;
  }

  protected async doWriteFile(path: string, content: Uint8Array, options: CallOptions): Promise<void> {
    await this.#upload(resolveSandboxPath(this.workdir, path), content, options.signal);
    this.#steps.push({ kind: 'write', path, content: new Uint8Array(content) });
  }

  /**
   * Orchard Env has no snapshot API: the snapshot is the record of what changed this sandbox, which
   * a fork replays into a fresh one (replay.ts). Taking it costs nothing on the service.
   */
  async snapshot(): Promise<SandboxSnapshot> {
    this.assertOpen();
    return this.#takeSnapshot(this.#steps);
  }

  protected async doReadFile(path: string, options: CallOptions): Promise<Uint8Array> {
    const absolute = resolveSandboxPath(this.workdir, path);
    const reply = await this.#fileCall(
      {
        method: 'GET',
        path: `/sandboxes/${encodeURIComponent(this.id)}/files`,
        query: { path: absolute },
        schema: OrchardFileContent,
        retry: 'connection',
        signal: options.signal,
        errors: {
          404: {
            code: 'WNW_ERR_SBX_FILE',
            message: `no such file in sandbox ${this.id}: ${absolute}`,
            details: { sandbox: this.id, path: absolute },
          },
        },
      },
      `not a regular file in sandbox ${this.id}: ${absolute}`,
    );
    return new Uint8Array(Buffer.from(reply.data.content, 'base64'));
  }

  protected async doListFiles(path: string, options: CallOptions): Promise<FileEntry[]> {
    const absolute = resolveSandboxPath(this.workdir, path);
    let reply;
    try {
      reply = await this.#fileCall(
        {
          method: 'GET',
          path: `/sandboxes/${encodeURIComponent(this.id)}/files/list`,
          query: { path: absolute },
          schema: OrchardFileList,
          retry: 'connection',
          signal: options.signal,
          errors: {
            404: {
              code: 'WNW_ERR_SBX_FILE',
              message: `no such directory in sandbox ${this.id}: ${absolute}`,
              details: { sandbox: this.id, path: absolute },
            },
          },
        },
        `not a directory in sandbox ${this.id}: ${absolute}`,
      );
    } catch (error) {
      // One dangling symlink fails the agent's whole listing: list with find instead (docs/design/02-orchard-real-behaviour.md#6).
      if (WinnowerError.isInstance(error) && error.code === 'WNW_ERR_SBX_UPSTREAM' && error.details.status === 500)
        return this.#listWithFind(absolute, options.signal);
      throw error;
    }
    // The agent follows links (`is_dir()`), so it never reports a symlink.
    return reply.data.files.map((file) => ({
      name: file.name,
      type: file.type === 'file' || file.type === 'directory' ? file.type : 'other',
      size: file.size,
    }));
  }

  protected doDiff(options: CallOptions): Promise<string> {
    // The server decodes exec output as UTF-8 with replacement: the diff comes as base64 (docs/design/02-orchard-real-behaviour.md#3).
    return diffVia(this.#remoteExec, this.workdir, this.#baseCommit, this.#patch, this.id, options.signal, { base64: true });
  }

  /** The workspace as it stands becomes the base of later diffs (types.ts `markBase`). */
  async markBase(options: CallOptions = {}): Promise<string> {
    this.assertOpen();
    this.#baseCommit = await markBaseVia(this.#remoteExec, this.workdir, this.#patch, this.id, options.signal);
    this.#steps.push({ kind: 'mark-base' });
    return this.#baseCommit;
  }

  protected async doApplyPatch(patch: string, options: CallOptions): Promise<void> {
    await applyPatchVia(this.#remoteExec, this.#upload, this.workdir, patch, this.id, options.signal);
    this.#steps.push({ kind: 'patch', patch });
  }

  protected async doClose(): Promise<void> {
    if (this.#heartbeatTimer) clearInterval(this.#heartbeatTimer);
    this.#heartbeatTimer = undefined;
    try {
      await this.#client.call({
        method: 'DELETE',
        path: `/sandboxes/${encodeURIComponent(this.id)}`,
        schema: OrchardStatusReply,
        retry: 'connection',
      });
    } finally {
      this.#onClosed?.();
    }
  }

  #upload = async (path: string, content: Uint8Array, signal?: AbortSignal): Promise<void> => {
    const reply = await this.#fileCall(
      {
        method: 'POST',
        path: `/sandboxes/${encodeURIComponent(this.id)}/files`,
        body: { path, content: Buffer.from(content).toString('base64') },
        schema: OrchardWriteResult,
        // Writing the same bytes twice is harmless.
        retry: 'connection',
        signal,
      },
      `cannot write ${path} in sandbox ${this.id}: a parent is not a directory`,
    );
    if (!reply.data.success) {
      throw wnwError(
        'WNW_ERR_SBX_UPSTREAM',
        `Orchard Env could not write ${path} in sandbox ${this.id}${requestIdSuffix(reply.requestId)}`,
        {
          details: { sandbox: this.id, path, requestId: reply.requestId },
        },
      );
    }
  };

  /**
   * A call on a file route, which the orchestrator forwards to the agent: its 400 means "sandbox
   * not ready"; the agent's own 400s come back as 500s and are told apart by their detail;
   * a 500 from a stale connection is repeated once (docs/design/02-orchard-real-behaviour.md#5, #7). Only idempotent calls come here.
   */
  async #fileCall<T>(call: OrchardCall<T>, wrongType: string): Promise<OrchardReply<T>> {
    const withNotReady: OrchardCall<T> = {
      ...call,
      errors: {
        ...call.errors,
        400: {
          code: 'WNW_ERR_SBX_UPSTREAM',
          message: `sandbox ${this.id} is not ready for file calls`,
          retryable: true,
          details: { sandbox: this.id },
        },
      },
    };
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.#client.call(withNotReady);
      } catch (error) {
        const status = WinnowerError.isInstance(error) ? error.details.status : undefined;
        if (!WinnowerError.isInstance(error) || (status !== 500 && status !== 400)) throw error;
        const detail = String(error.details.detail ?? '');
        // `winnower sandbox serve` answers these with a plain 400.
        if (FILE_TYPE_DETAIL.test(detail))
          throw wnwError('WNW_ERR_SBX_FILE', `${wrongType}${requestIdSuffix(error.details.requestId as string | undefined)}`, {
            details: { ...error.details, sandbox: this.id },
          });
        if (status === 500 && attempt === 1 && STALE_CONNECTION_DETAIL.test(detail)) continue;
        throw error;
      }
    }
  }

  /** The listing by `find`, for when the agent's fails: names, types (symlinks as such) and sizes, NUL-separated. */
  async #listWithFind(absolute: string, signal: AbortSignal | undefined): Promise<FileEntry[]> {
    const script = `cd -- ${shellQuote(absolute)} || exit 2; find . -mindepth 1 -maxdepth 1 -printf '%f\\0%y\\0%s\\0' | base64 -w0`;
    const result = await this.#remoteExec(script, { cwd: '/', env: {}, timeoutMs: 60_000, maxOutputBytes: 64 * 1024 * 1024, signal });
    if (result.exitCode !== 0) {
      throw wnwError('WNW_ERR_SBX_FILE', `no such directory in sandbox ${this.id}: ${absolute}`, {
        details: { sandbox: this.id, path: absolute, stderr: result.stderr.slice(-500) },
      });
    }
    const fields = Buffer.from(result.stdout, 'base64').toString('utf8').split('\0');
    const entries: FileEntry[] = [];
    for (let index = 0; index + 2 < fields.length; index += 3) {
      const kind = fields[index + 1];
      const type = kind === 'f' ? 'file' : kind === 'd' ? 'directory' : kind === 'l' ? 'symlink' : 'other';
      entries.push({ name: fields[index] ?? '', type, size: Number(fields[index + 2]) });
    }
    return entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /** Our own scripts (git, listing): plain bash, wrapped like user commands so a timeout kills only them. */
  #remoteExec: RemoteExec = (command, options) => this.#submit(command, options, { loginShell: false });

  /** Runs one command; execs of this sandbox wait their turn here, not in the orchestrator. */
  async #submit(command: string, options: ExecCall, shell: Shell): Promise<ExecResult> {
    const previous = this.#execTail;
    let release = (): void => undefined;
    this.#execTail = new Promise<void>((resolve) => (release = resolve));
    try {
      await waitTurn(previous, options.signal);
      return await this.#runJob(command, options, shell);
    } finally {
      release();
    }
  }

  /** Submits the wrapped command once (`wait:true`), then polls its job until succeeded or failed. */
  async #runJob(command: string, options: ExecCall, shell: Shell): Promise<ExecResult> {
    if (this.#lost) throw this.#lost;
    const client = this.#client;
    const started = performance.now();
    const wrapped = wrapCommand(command, {
      cwd: options.cwd,
      timeoutMs: options.timeoutMs,
      loginShell: shell.loginShell,
      ...(shell.activate ? { activate: shell.activate } : {}),
      ...(shell.stdinFile ? { stdinFile: shell.stdinFile } : {}),
    });
    const serverWaitMs = (wrapped.agentTimeoutS + SERVER_WAIT_GRACE_S) * 1000;
    // The deadline counts from when the job starts running: queue time is not the command's (docs/design/02-orchard-real-behaviour.md#11).
    const budgetMs = serverWaitMs + client.requestTimeoutMs;
    const submittedAt = Date.now();
    const sandboxDetails = { sandbox: this.id };
    const maxResponseBytes = Math.min(
      MAX_JOB_RESPONSE_BYTES,
      Math.max(client.maxResponseBytes, JOB_BYTES_PER_OUTPUT_BYTE * options.maxOutputBytes),
    );

    let submitted;
    try {
      submitted = await client.call({
        method: 'POST',
        path: `/sandboxes/${encodeURIComponent(this.id)}/exec`,
        // No login_shell, ever: the agent filters stderr under it (docs/design/02-orchard-real-behaviour.md#2).
        body: { command: wrapped.script, timeout_seconds: wrapped.agentTimeoutS, cwd: options.cwd, env: options.env, wait: true },
        schema: OrchardJob,
        // Never re-POST an exec: after a network error it may already be running.
        retry: 'none',
        timeoutMs: serverWaitMs + client.requestTimeoutMs,
        maxResponseBytes,
        signal: options.signal,
        errors: { 404: { code: 'WNW_ERR_SBX_EXEC', message: `sandbox ${this.id} is gone`, details: sandboxDetails } },
      });
    } catch (error) {
      if (!WinnowerError.isInstance(error)) throw error;
      if (error.details.status === 404) throw this.#markLost(error);
      if (error.code === 'WNW_ERR_OP_ABORTED' || error.details.connection === true || error.code === 'WNW_ERR_SBX_TIMEOUT') {
        // The command may be running with nobody to wait for it, holding the sandbox's exec lock.
        this.#abandon();
      }
      if (error.details.connection === true) {
        throw wnwError(
          'WNW_ERR_SBX_EXEC',
          `connection to Orchard Env lost while submitting a command to sandbox ${this.id}; not sent again since it may already be running (sandbox deleted)`,
          {
            cause: error,
            details: { ...error.details, ...sandboxDetails },
          },
        );
      }
      throw error;
    }

    let job = submitted.data;
    let requestId = submitted.requestId;
    let outcome = mapOrchardJob(job);
    let runningSince = job.status === 'queued' ? undefined : Date.now();
    let quickAnswers = 0;
    try {
      while (outcome.kind === 'pending') {
        const deadline = (runningSince ?? submittedAt) + budgetMs;
        const remainingMs = deadline - Date.now();
        if (remainingMs <= 0) {
          this.#abandon();
          throw wnwError(
            'WNW_ERR_SBX_TIMEOUT',
            `job ${job.job_id} in sandbox ${this.id} still ${job.status} past its timeout; the sandbox is deleted${requestIdSuffix(requestId)}`,
            {
              details: { ...sandboxDetails, jobId: job.job_id, status: job.status, requestId },
              retryable: true,
            },
          );
        }
        // By then the wrapper has sent TERM: polls past it are short, so a hung orchestrator shows early.
        const commandEnd = (runningSince ?? Date.now()) + options.timeoutMs + COMMAND_KILL_GRACE_MS;
        const waitS = Math.max(1, Math.min(MAX_POLL_WAIT_S, Math.ceil((commandEnd - Date.now()) / 1000), Math.floor(remainingMs / 1000)));
        const asked = Date.now();
        const polled = await client.call({
          method: 'GET',
          path: `/jobs/${encodeURIComponent(job.job_id)}/wait`,
          query: { timeout: waitS },
          schema: OrchardJob,
          retry: 'connection',
          timeoutMs: waitS * 1000 + client.requestTimeoutMs,
          maxResponseBytes,
          signal: options.signal,
          errors: {
            404: {
              code: 'WNW_ERR_SBX_EXEC',
              message: `job ${job.job_id} of sandbox ${this.id} is unknown to Orchard Env (lost or reaped)`,
              details: { ...sandboxDetails, jobId: job.job_id },
            },
          },
        });
        job = polled.data;
        requestId = polled.requestId;
        outcome = mapOrchardJob(job);
        if (runningSince === undefined && job.status !== 'queued') runningSince = Date.now();
        // Another replica answers /wait at once with the job still running: pace the polls.
        if (outcome.kind === 'pending' && Date.now() - asked < 500) {
          quickAnswers++;
          await sleep(Math.min(1_000, 25 * 2 ** quickAnswers), options.signal);
        }
      }
    } catch (error) {
      // An abort stops waiting; the command cannot be cancelled and would hold the exec lock (docs/design/02-orchard-real-behaviour.md#11).
      if (WinnowerError.isInstance(error) && error.code === 'WNW_ERR_OP_ABORTED') this.#abandon();
      throw error;
    }

    if (outcome.kind === 'error') {
      const failure = wnwError(
        'WNW_ERR_SBX_EXEC',
        `command could not be run in sandbox ${this.id}: ${outcome.message}${requestIdSuffix(requestId)}`,
        {
          details: { ...sandboxDetails, jobId: job.job_id, status: outcome.raw, error: outcome.message, requestId },
        },
      );
      // The agent's own timeout kills the whole pod: a null exit code from a dead pod is a lost sandbox
      // (docs/design/02-orchard-real-behaviour.md#1).
      if (await this.#podGone(options.signal)) throw this.#markLost(failure);
      throw failure;
    }
    const read =
      outcome.kind === 'exited'
        ? unwrapResult(outcome.exitCode, job.stderr, wrapped, shell.loginShell)
        : { exitCode: null, stderr: job.stderr, timedOut: true };
    const stdout = new CappedBuffer(options.maxOutputBytes);
    const stderr = new CappedBuffer(options.maxOutputBytes);
    stdout.push(Buffer.from(job.stdout));
    stderr.push(Buffer.from(read.stderr));
    return {
      exitCode: read.timedOut ? null : read.exitCode,
      stdout: stdout.toString(),
      stderr: stderr.toString(),
      timedOut: read.timedOut,
      truncated: stdout.truncated || stderr.truncated,
      durationMs: Math.round(performance.now() - started),
    };
  }

  /** Whether the pod is gone: GET answers 404, or a status that will not come back. */
  async #podGone(signal: AbortSignal | undefined): Promise<boolean> {
    try {
      const info = await this.#client.call({
        method: 'GET',
        path: `/sandboxes/${encodeURIComponent(this.id)}`,
        schema: OrchardSandboxInfo,
        retry: 'connection',
        signal,
      });
      const state = mapOrchardSandboxStatus(info.data).state;
      return state === 'failed' || state === 'gone';
    } catch (error) {
      return WinnowerError.isInstance(error) && error.details.status === 404;
    }
  }

  /**
   * Records that the sandbox is gone (its pod died, or it was reaped) and says so in the error:
   * WNW_ERR_SBX_LOST as for a local sandbox whose agent died, so callers tell "create a new one"
   * from a command that merely failed to run.
   */
  #markLost(error: WinnowerError): WinnowerError {
    const detail = String(error.details.detail ?? error.details.error ?? '');
    const why =
      /agent not ready|int too large/i.test(detail) || error.details.error !== undefined
        ? 'its pod died'
        : 'Orchard Env reaped it (TTL, missed heartbeats) or it was deleted';
    this.#lost = wnwError('WNW_ERR_SBX_LOST', `sandbox ${this.id} is lost: ${why} (${error.message}); create a new one`, {
      cause: error,
      details: { ...error.details, sandbox: this.id, lost: true },
    });
    return this.#lost;
  }

  /** A command is left running that nobody waits for: delete the sandbox rather than queue behind it. */
  #abandon(): void {
    this.close().catch((error: unknown) => {
      this.#heartbeatError = toWinnowerError(error, 'WNW_ERR_SBX_UPSTREAM');
    });
  }

  async #sendHeartbeat(): Promise<void> {
    if (this.closed || this.#heartbeatInFlight) return;
    this.#heartbeatInFlight = true;
    try {
      await this.#client.call({
        method: 'POST',
        path: `/sandboxes/${encodeURIComponent(this.id)}/heartbeat`,
        schema: OrchardStatusReply,
        retry: 'none',
        errors: { 404: { code: 'WNW_ERR_SBX_EXEC', message: `sandbox ${this.id} is gone`, details: { sandbox: this.id } } },
      });
      this.#heartbeatsSent++;
      this.#heartbeatError = undefined;
    } catch (error) {
      const failure = toWinnowerError(error, 'WNW_ERR_SBX_UPSTREAM');
      // Kept for inspection; a 404 means the sandbox was reaped and the next exec says so.
      this.#heartbeatError = failure;
      if (failure.details.status === 404) this.#markLost(failure);
    } finally {
      this.#heartbeatInFlight = false;
    }
  }
}

/** Waits for the previous exec of this sandbox to finish, or for the signal (nothing was sent yet). */
async function waitTurn(previous: Promise<void>, signal: AbortSignal | undefined): Promise<void> {
  if (!signal) return previous;
  if (signal.aborted) throw wnwError('WNW_ERR_OP_ABORTED', 'operation cancelled');
  let onAbort = (): void => undefined;
  const aborted = new Promise<never>((_resolve, reject) => {
    onAbort = () => reject(wnwError('WNW_ERR_OP_ABORTED', 'operation cancelled'));
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    await Promise.race([previous, aborted]);
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}
