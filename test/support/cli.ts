/**
 * The winnower CLI as a user runs it, for the tests: `node bin/winnower.js` in a child process
 * (real exit codes, stderr not a TTY, no colours; built-cli.ts), and the JSON Lines files it writes.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cliArgv } from './built-cli.js';
import { REPO_ROOT } from './shared-data.js';

export interface CliRun {
  /** The exit status; -1 when the process did not exit by itself (killed, or past the timeout). */
  code: number;
  stdout: string;
  stderr: string;
}

export interface CliOptions {
  /** Default: the repository root. */
  cwd?: string;
  /** Added to this process's environment (and NO_COLOR=1). */
  env?: Record<string, string>;
  /** Default 120 s. */
  timeoutMs?: number;
}

/** Runs `winnower <args...>` and resolves when it ends, whatever its exit status. */
export function runCli(args: string[], options: CliOptions = {}): Promise<CliRun> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      cliArgv(args),
      { cwd: options.cwd ?? REPO_ROOT, env: { ...process.env, NO_COLOR: '1', ...options.env }, timeout: options.timeoutMs ?? 120_000 },
      (error, stdout, stderr) => {
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, stdout, stderr });
      },
    );
  });
}

/** Every non-empty line of a JSON Lines file, parsed; a line that is not JSON fails naming the file and line. */
export function readJsonl<T = unknown>(file: string): T[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .flatMap((line, index) => {
      if (line === '') return [];
      try {
        return [JSON.parse(line) as T];
      } catch {
        throw new Error(`${file}:${index + 1} is not JSON (${line.length} characters, starts ${JSON.stringify(line.slice(0, 60))})`);
      }
    });
}

export interface ServeProcess {
  child: ChildProcess;
  /** The base URL once the server logs that it listens. */
  base: Promise<string>;
  exited: Promise<{ code: number | null; signal: string | null }>;
  /** Everything it printed so far (stdout and stderr). */
  output(): string;
}

/**
 * `winnower serve --port 0 --data-dir <dataDir>` as an operator runs it (node itself, so a
 * signal reaches the server, not a wrapper); `base` rejects if it exits or stays
 * silent for `startTimeoutMs` (30 s) before listening; `env` adds to its environment (WINNOWER_API_KEYS, ...).
 */
export function startServeProcess(dataDir: string, env: Record<string, string> = {}, startTimeoutMs = 30_000): ServeProcess {
  const child = spawn(process.execPath, cliArgv(['serve', '--port', '0', '--data-dir', dataDir]), {
    cwd: REPO_ROOT,
    env: { ...process.env, WINNOWER_API_KEYS: '', WINNOWER_LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  const base = new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not start within ${startTimeoutMs} ms: ${output}`)), startTimeoutMs);
    child.on('exit', () => {
      clearTimeout(timer);
      reject(new Error(`serve exited before listening: ${output}`));
    });
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const address = /Server listening at (http:\/\/[^"\s]+)/.exec(output)?.[1];
      if (address) {
        clearTimeout(timer);
        resolve(address);
      }
    });
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  });
  // Settled by the test or never looked at after the exit: no unhandled rejection either way.
  base.catch(() => undefined);
  return { child, base, exited, output: () => output };
}
