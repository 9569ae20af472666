/**
 * Runs a helper program on the host (git, cp, chown, bwrap probes) and collects its output.
 * Not for sandboxed commands: those go through local-process.ts.
 */
import { spawn } from 'node:child_process';
import { abortedError } from '../errors.js';
import { onProcessExit } from './lifecycle.js';

export interface HostCommandOptions {
  cwd?: string;
  /** Environment; defaults to a minimal PATH plus the git settings below. */
  env?: NodeJS.ProcessEnv;
  uid?: number;
  gid?: number;
  input?: string | Uint8Array;
  /** Deadline; past it the whole process group is killed and the result says `timedOut`. */
  timeoutMs?: number;
  /** Aborting kills the whole process group; the call then rejects with WNW_ERR_OP_ABORTED. */
  signal?: AbortSignal;
}

export interface HostCommandResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** True when the deadline passed and the command was killed. */
  timedOut: boolean;
}

export const HOST_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** The transports host-side git may use: never `ext::` (runs a command) or `fd::`, whatever the URL. */
export const HOST_GIT_PROTOCOLS = 'file:git:http:https:ssh';

/**
 * Environment for host-side git: trusts repositories owned by other users (docs/design/04-local-sandbox.md#6), never
 * prompts for credentials, ignores the caller's global config, allows only HOST_GIT_PROTOCOLS,
 * and gives up on an HTTP transfer that stalls (under 1 KB/s for a minute: a dead or tarpit server).
 */
export function hostGitEnv(): NodeJS.ProcessEnv {
  const config: Array<[string, string]> = [
    ['safe.directory', '*'],
    ['http.lowSpeedLimit', '1000'],
    ['http.lowSpeedTime', '60'],
  ];
  return {
    PATH: process.env.PATH ?? HOST_PATH,
    HOME: process.env.HOME ?? '/tmp',
    LANG: 'C.UTF-8',
    GIT_TERMINAL_PROMPT: '0',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_ALLOW_PROTOCOL: HOST_GIT_PROTOCOLS,
    GIT_CONFIG_COUNT: String(config.length),
    ...Object.fromEntries(
      config.flatMap(([key, value], index) => [
        [`GIT_CONFIG_KEY_${index}`, key],
        [`GIT_CONFIG_VALUE_${index}`, value],
      ]),
    ),
    ...(process.env.GIT_SSH_COMMAND ? { GIT_SSH_COMMAND: process.env.GIT_SSH_COMMAND } : {}),
    ...(process.env.SSH_AUTH_SOCK ? { SSH_AUTH_SOCK: process.env.SSH_AUTH_SOCK } : {}),
  };
}

/**
 * `git rev-parse` argv printing the full SHA of `revision` in `repoDir` (exit 1, quietly, when it
 * names no commit). --end-of-options: a revision such as `--output=x` is looked up, never an option.
 */
export function revParseCommitArgs(repoDir: string, revision: string): string[] {
  return ['-C', repoDir, 'rev-parse', '--verify', '--quiet', '--end-of-options', `${revision}^{commit}`];
}

/**
 * After the command itself exits, how long to wait for its pipes to close (only a process that
 * left its process group could still hold them) before returning what was read.
 */
const PIPE_GRACE_MS = 2000;

function killGroup(pid: number): void {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // the group is already gone
  }
}

/**
 * Runs `file args` to completion; never throws for a non-zero exit (the caller decides). The
 * command runs in its own process group, and a timeout or abort kills the whole group: git starts
 * helpers (git-remote-https, ssh, index-pack) that would otherwise go on running and keep the
 * output pipes open.
 */
export function runHostCommand(file: string, args: string[], options: HostCommandOptions = {}): Promise<HostCommandResult> {
  const { signal } = options;
  if (signal?.aborted) return Promise.reject(abortedError(signal));
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, {
      cwd: options.cwd,
      env: options.env ?? { PATH: HOST_PATH, LANG: 'C.UTF-8' },
      uid: options.uid,
      gid: options.gid,
      stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
      detached: true,
    });
    const pid = child.pid;
    // Killed if this process exits first (a crash, process.exit after a shutdown's grace): a
    // clone must not outlive the server.
    const untrack = pid === undefined ? undefined : onProcessExit(() => killGroup(pid));
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    let timedOut = false;
    let aborted = false;
    let exit: { code: number | null; signal: NodeJS.Signals | null } = { code: null, signal: null };
    let graceTimer: NodeJS.Timeout | undefined;
    let settled = false;
    const killAll = (): void => {
      if (pid !== undefined) killGroup(pid);
    };
    const timer = options.timeoutMs === undefined ? undefined : setTimeout(() => ((timedOut = true), killAll()), options.timeoutMs);
    const onAbort = (): void => {
      aborted = true;
      killAll();
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    const settle = (): boolean => {
      if (settled) return false;
      settled = true;
      clearTimeout(timer);
      clearTimeout(graceTimer);
      signal?.removeEventListener('abort', onAbort);
      untrack?.();
      return true;
    };
    const finish = (): void => {
      if (!settle()) return;
      for (const stream of child.stdio) stream?.destroy();
      if (aborted) reject(abortedError(signal!));
      else resolve({ ...exit, stdout: Buffer.concat(stdout).toString('utf8'), stderr: Buffer.concat(stderr).toString('utf8'), timedOut });
    };
    child.stdout?.on('data', (chunk: Buffer) => stdout.push(chunk));
    child.stderr?.on('data', (chunk: Buffer) => stderr.push(chunk));
    for (const stream of child.stdio) stream?.on('error', () => undefined);
    child.on('error', (error) => {
      if (settle()) reject(error);
    });
    child.on('exit', (code, exitSignal) => {
      exit = { code, signal: exitSignal };
      // Whatever the command left behind in its group dies with it.
      killAll();
      graceTimer = setTimeout(() => setImmediate(finish), PIPE_GRACE_MS);
    });
    child.on('close', finish);
    if (options.input !== undefined && child.stdin) child.stdin.end(options.input);
  });
}

/** The last `max` characters of a program's stderr, trimmed, for error messages. */
export function tail(text: string, max = 2000): string {
  const trimmed = text.trim();
  return trimmed.length > max ? `…${trimmed.slice(-max)}` : trimmed;
}
