/**
 * One Orchard Env sandbox (a Kubernetes pod): exec as a job submitted once and polled to a
 * terminal status, files in base64, diff and patches with git in the workdir, heartbeats while
 * open, DELETE on close.
 */
import { posix } from 'node:path';
import { performance } from 'node:perf_hooks';
import { toWinnowerError, wnwError, WinnowerError } from '../../errors.js';
import { BaseSandbox, CappedBuffer } from '../base-sandbox.js';
import type { PatchPolicy } from '../patch-policy.js';
import type { CallOptions, ExecOptions, ExecResult, FileEntry } from '../types.js';
import { OrchardFileContent, OrchardFileList, OrchardJob, OrchardStatusReply, OrchardWriteResult } from './orchard-api-types.js';
import { requestIdSuffix, sleep, type OrchardClient } from './orchard-client.js';
import { mapOrchardJob } from './map-orchard-status.js';
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

/** The server's `wait:true` waits up to `timeout_seconds + 30` s. */
const SERVER_WAIT_GRACE_S = 30;
/** Longest server-side wait asked for in one poll. */
const MAX_POLL_WAIT_S = 30;
/** Time the agent takes to kill a command at its timeout and report. */
const COMMAND_KILL_GRACE_MS = 2_000;
/**
 * A job carries the command's whole stdout and stderr, JSON-escaped (the server caps nothing):
 * room for both streams at the cap, escaped, or the client's limit if larger; never more than V8
 * can hold in one string.
 */
const JOB_BYTES_PER_OUTPUT_BYTE = 8;
const MAX_JOB_RESPONSE_BYTES = 512 * 1024 * 1024;

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
  /** Run user commands with `login_shell` (the agent sources ~/.bashrc: conda envs of SWE-bench images). */
  loginShell?: boolean;
  /** Called once the sandbox is deleted (the provider's bookkeeping). */
  onClosed?: () => void;
}

type ExecCall = Parameters<RemoteExec>[1];

export class OrchardSandbox extends BaseSandbox {
  readonly provider = 'orchard';
  readonly id: string;
  readonly workdir: string;
  readonly #client: OrchardClient;
  readonly #env: Record<string, string>;
  readonly #heartbeatIntervalMs: number;
  readonly #onClosed: (() => void) | undefined;
  readonly #loginShell: boolean;
  readonly #patch: PatchPolicy;
  #baseCommit: string | undefined;
  #heartbeatTimer: NodeJS.Timeout | undefined;
  #heartbeatInFlight = false;
  #heartbeatsSent = 0;
  #heartbeatError: WinnowerError | undefined;

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
    this.#patch = init.patch;
  }

  /** The commit `diff()` compares against. */
  get baseCommit(): string | undefined {
    return this.#baseCommit;
  }

  /** Heartbeats answered so far, and the last heartbeat failure (cleared by a success). */
  get heartbeat(): { sent: number; lastError: WinnowerError | undefined } {
    return { sent: this.#heartbeatsSent, lastError: this.#heartbeatError };
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

  protected async doExec(command: string, options: Required<Pick<ExecOptions, 'timeoutMs' | 'maxOutputBytes'>> & ExecOptions): Promise<ExecResult> {
    const cwd = resolveSandboxPath(this.workdir, options.cwd);
    const env = { ...this.#env, ...options.env };
    let script = command;
    if (options.stdin !== undefined) {
      const name = transientName('stdin');
      await this.#upload(posix.join(cwd, name), new TextEncoder().encode(options.stdin), options.signal);
      script = withStdinFile(command, name);
    }
    const call = { cwd, env, timeoutMs: options.timeoutMs, maxOutputBytes: options.maxOutputBytes, signal: options.signal };
    return this.#submit(script, call, this.#loginShell);
  }

  protected async doWriteFile(path: string, content: Uint8Array, options: CallOptions): Promise<void> {
    await this.#upload(resolveSandboxPath(this.workdir, path), content, options.signal);
  }

  protected async doReadFile(path: string, options: CallOptions): Promise<Uint8Array> {
    const absolute = resolveSandboxPath(this.workdir, path);
    const reply = await this.#client.call({
      method: 'GET',
      path: `/sandboxes/${encodeURIComponent(this.id)}/files`,
      query: { path: absolute },
      schema: OrchardFileContent,
      retry: 'connection',
      signal: options.signal,
      errors: {
        404: { code: 'WNW_ERR_SBX_FILE', message: `no such file in sandbox ${this.id}: ${absolute}`, details: { sandbox: this.id, path: absolute } },
        400: { code: 'WNW_ERR_SBX_FILE', message: `not a regular file in sandbox ${this.id}: ${absolute}`, details: { sandbox: this.id, path: absolute } },
      },
    });
    return new Uint8Array(Buffer.from(reply.data.content, 'base64'));
  }

  protected async doListFiles(path: string, options: CallOptions): Promise<FileEntry[]> {
    const absolute = resolveSandboxPath(this.workdir, path);
    const reply = await this.#client.call({
      method: 'GET',
      path: `/sandboxes/${encodeURIComponent(this.id)}/files/list`,
      query: { path: absolute },
      schema: OrchardFileList,
      retry: 'connection',
      signal: options.signal,
      errors: {
        404: { code: 'WNW_ERR_SBX_FILE', message: `no such directory in sandbox ${this.id}: ${absolute}`, details: { sandbox: this.id, path: absolute } },
        400: { code: 'WNW_ERR_SBX_FILE', message: `not a directory in sandbox ${this.id}: ${absolute}`, details: { sandbox: this.id, path: absolute } },
      },
    });
    return reply.data.files.map((file) => ({
      name: file.name,
      type: file.type === 'file' || file.type === 'directory' || file.type === 'symlink' ? file.type : 'other',
      size: file.size,
    }));
  }

  protected doDiff(options: CallOptions): Promise<string> {
    return diffVia(this.#remoteExec, this.workdir, this.#baseCommit, this.#patch, this.id, options.signal);
  }

  protected doApplyPatch(patch: string, options: CallOptions): Promise<void> {
    return applyPatchVia(this.#remoteExec, this.#upload, this.workdir, patch, this.id, options.signal);
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
    const reply = await this.#client.call({
      method: 'POST',
      path: `/sandboxes/${encodeURIComponent(this.id)}/files`,
      body: { path, content: Buffer.from(content).toString('base64') },
      schema: OrchardWriteResult,
      // Writing the same bytes twice is harmless.
      retry: 'connection',
      signal,
    });
    if (!reply.data.success) {
      throw wnwError('WNW_ERR_SBX_UPSTREAM', `Orchard Env could not write ${path} in sandbox ${this.id}${requestIdSuffix(reply.requestId)}`, {
        details: { sandbox: this.id, path, requestId: reply.requestId },
      });
    }
  };

  /** Our own scripts (git, listing) run in a plain `bash -c`. */
  #remoteExec: RemoteExec = (command, options) => this.#submit(command, options, false);

  /** Submits the command once (`wait:true`), then polls its job until succeeded or failed. */
  async #submit(command: string, options: ExecCall, loginShell: boolean): Promise<ExecResult> {
    const client = this.#client;
    const started = performance.now();
    const timeoutSeconds = Math.max(1, Math.ceil(options.timeoutMs / 1000));
    const serverWaitMs = (timeoutSeconds + SERVER_WAIT_GRACE_S) * 1000;
    const deadline = Date.now() + serverWaitMs + client.requestTimeoutMs;
    // By then the agent has killed the command: polls past it are short, so a hung orchestrator shows early.
    const commandEnd = Date.now() + timeoutSeconds * 1000 + COMMAND_KILL_GRACE_MS;
    const sandboxDetails = { sandbox: this.id };
    const maxResponseBytes = Math.min(MAX_JOB_RESPONSE_BYTES, Math.max(client.maxResponseBytes, JOB_BYTES_PER_OUTPUT_BYTE * options.maxOutputBytes));

    let submitted;
    try {
      submitted = await client.call({
        method: 'POST',
        path: `/sandboxes/${encodeURIComponent(this.id)}/exec`,
        body: { command, timeout_seconds: timeoutSeconds, cwd: options.cwd, env: options.env, wait: true, ...(loginShell ? { login_shell: true } : {}) },
        schema: OrchardJob,
        // Never re-POST an exec: after a network error it may already be running.
        retry: 'none',
        timeoutMs: serverWaitMs + client.requestTimeoutMs,
        maxResponseBytes,
        signal: options.signal,
        errors: { 404: { code: 'WNW_ERR_SBX_EXEC', message: `sandbox ${this.id} not found or its agent not ready`, details: sandboxDetails } },
      });
    } catch (error) {
      if (WinnowerError.isInstance(error) && error.details.connection === true) {
        throw wnwError(
          'WNW_ERR_SBX_EXEC',
          `connection to Orchard Env lost while submitting a command to sandbox ${this.id}; not sent again since it may already be running`,
          { cause: error, details: { ...error.details, ...sandboxDetails } },
        );
      }
      throw error;
    }

    let job = submitted.data;
    let requestId = submitted.requestId;
    let outcome = mapOrchardJob(job);
    let quickAnswers = 0;
    while (outcome.kind === 'pending') {
      const remainingMs = deadline - Date.now();
      if (remainingMs <= 0) {
        throw wnwError('WNW_ERR_SBX_TIMEOUT', `job ${job.job_id} in sandbox ${this.id} still ${job.status} past its timeout${requestIdSuffix(requestId)}`, {
          details: { ...sandboxDetails, jobId: job.job_id, status: job.status, requestId },
          retryable: true,
        });
      }
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
        errors: { 404: { code: 'WNW_ERR_SBX_EXEC', message: `job ${job.job_id} of sandbox ${this.id} is unknown to Orchard Env (lost or reaped)`, details: { ...sandboxDetails, jobId: job.job_id } } },
      });
      job = polled.data;
      requestId = polled.requestId;
      outcome = mapOrchardJob(job);
      // Another replica answers /wait at once with the job still running: pace the polls.
      if (outcome.kind === 'pending' && Date.now() - asked < 500) {
        quickAnswers++;
        await sleep(Math.min(1_000, 25 * 2 ** quickAnswers), options.signal);
      }
    }

    if (outcome.kind === 'error') {
      throw wnwError('WNW_ERR_SBX_EXEC', `command could not be run in sandbox ${this.id}: ${outcome.message}${requestIdSuffix(requestId)}`, {
        details: { ...sandboxDetails, jobId: job.job_id, status: outcome.raw, error: outcome.message, requestId },
      });
    }
    const stdout = new CappedBuffer(options.maxOutputBytes);
    const stderr = new CappedBuffer(options.maxOutputBytes);
    stdout.push(Buffer.from(job.stdout));
    stderr.push(Buffer.from(job.stderr));
    return {
      exitCode: outcome.kind === 'exited' ? outcome.exitCode : null,
      stdout: stdout.toString(),
      stderr: stderr.toString(),
      timedOut: outcome.kind === 'timed-out',
      truncated: stdout.truncated || stderr.truncated,
      durationMs: Math.round(performance.now() - started),
    };
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
      });
      this.#heartbeatsSent++;
      this.#heartbeatError = undefined;
    } catch (error) {
      // Kept for inspection; the next exec reports a dead sandbox with its own error.
      this.#heartbeatError = toWinnowerError(error, 'WNW_ERR_SBX_UPSTREAM');
    } finally {
      this.#heartbeatInFlight = false;
    }
  }
}
