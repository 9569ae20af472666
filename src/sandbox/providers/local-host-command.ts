/**
 * Runs a helper program on the host (git, cp, chown, bwrap probes) and collects its output.
 * Not for sandboxed commands: those go through local-process.ts.
 */
import { spawn } from 'node:child_process';

export interface HostCommandOptions {
  cwd?: string;
  /** Environment; defaults to a minimal PATH plus the git settings below. */
  env?: NodeJS.ProcessEnv;
  uid?: number;
  gid?: number;
  input?: string | Uint8Array;
  timeoutMs?: number;
  signal?: AbortSignal;
}

export interface HostCommandResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export const HOST_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/**
 * Environment for host-side git: trusts repositories owned by other users (pitfall 6), never
 * prompts for credentials, ignores the caller's global config.
 */
export function hostGitEnv(): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH ?? HOST_PATH,
    HOME: process.env.HOME ?? '/tmp',
    LANG: 'C.UTF-8',
    GIT_TERMINAL_PROMPT: '0',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_COUNT: '1',
    GIT_CONFIG_KEY_0: 'safe.directory',
    GIT_CONFIG_VALUE_0: '*',
    ...(process.env.GIT_SSH_COMMAND ? { GIT_SSH_COMMAND: process.env.GIT_SSH_COMMAND } : {}),
    ...(process.env.SSH_AUTH_SOCK ? { SSH_AUTH_SOCK: process.env.SSH_AUTH_SOCK } : {}),
  };
}

/** Runs `file args` to completion; never throws for a non-zero exit (the caller decides). */
export function runHostCommand(file: string, args: string[], options: HostCommandOptions = {}): Promise<HostCommandResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, {
      cwd: options.cwd,
      env: options.env ?? { PATH: HOST_PATH, LANG: 'C.UTF-8' },
      uid: options.uid,
      gid: options.gid,
      stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
      signal: options.signal,
      timeout: options.timeoutMs,
      killSignal: 'SIGKILL',
    });
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    child.stdout?.on('data', (chunk: Buffer) => stdout.push(chunk));
    child.stderr?.on('data', (chunk: Buffer) => stderr.push(chunk));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      resolve({ code, signal, stdout: Buffer.concat(stdout).toString('utf8'), stderr: Buffer.concat(stderr).toString('utf8') });
    });
    if (options.input !== undefined && child.stdin) {
      child.stdin.on('error', () => undefined);
      child.stdin.end(options.input);
    }
  });
}

/** The last `max` characters of a program's stderr, trimmed, for error messages. */
export function tail(text: string, max = 2000): string {
  const trimmed = text.trim();
  return trimmed.length > max ? `…${trimmed.slice(-max)}` : trimmed;
}
