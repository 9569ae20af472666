/**
 * One sandboxed process: spawns the launch chain (cgroup join, privilege drop, bwrap), hands bwrap
 * the seccomp filter on fd 5 and its options on fd 6, collects capped output, reads bwrap's JSON
 * status, and kills the whole tree on timeout, abort or close.
 * Killing the outer bwrap takes its pid namespace with it, so `setsid` and background children
 * die too, and the output pipes close (docs/design/04-local-sandbox.md#2).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { Writable } from 'node:stream';
import { CappedBuffer } from '../../base-sandbox.js';
import { HOST_PATH } from '../../host-command.js';
import { SECCOMP_FD, seccompProgram } from './seccomp.js';

export interface SandboxProcessRequest {
  argv: string[];
  /** Written to stdin and closed; a stream is piped as it arrives (an interactive session). */
  stdin?: Uint8Array | string | NodeJS.ReadableStream;
  /** Written to fd 4 (a long command that does not fit in argv). */
  fd4?: string;
  /**
   * bwrap's options, NUL-separated, written to ARGS_FD (`--args`): the sandbox's pid 1 is a bwrap
   * process, and options on its command line (host paths of the workspace, the mounts) would show
   * in the sandbox's /proc/1/cmdline.
   */
  bwrapArgs?: Buffer;
  timeoutMs: number;
  maxOutputBytes: number;
  signal?: AbortSignal;
  /** Output as it arrives (within the cap). */
  onOutput?: (stream: 'stdout' | 'stderr', chunk: Uint8Array) => void;
}

export type KillReason = 'timeout' | 'abort' | 'close';

export interface SandboxProcessResult {
  /** The command's exit status as bwrap reports it; null when bwrap reported none. */
  exitCode: number | null;
  /**
   * The signal that killed the command's process (exitCode is then 128 + it). Only the exec agent,
   * which waits for the command itself, can tell; bwrap's status says 128 + N for a signal and an exit alike.
   */
  signal?: number;
  /** Whether bwrap started the sandboxed program (it reported a child pid). */
  started: boolean;
  killed: KillReason | undefined;
  stdout: CappedBuffer;
  stderr: CappedBuffer;
  durationMs: number;
  /** How the launch chain itself ended, for error messages. */
  hostExit: { code: number | null; signal: NodeJS.Signals | null };
}

/** Bwrap's status fd in the launch chain (0–2 are stdio, 4 carries long commands, 5 the seccomp filter). */
export const STATUS_FD = 3;
/** Where bwrap reads its options from (`--args 6`). */
export const ARGS_FD = 6;
/**
 * After the chain exits, how long to wait for the pipes to close before giving up on them (only a
 * process that escaped the pid namespace could hold them; none is known to).
 */
const PIPE_GRACE_MS = 2000;

export class SandboxProcess {
  readonly result: Promise<SandboxProcessResult>;
  #child: ChildProcess | undefined;
  #killed: KillReason | undefined;
  #exited = false;

  constructor(request: SandboxProcessRequest) {
    this.result = this.#run(request);
  }

  /** SIGKILLs the launch chain (and with it the sandbox's pid namespace); idempotent. */
  kill(reason: KillReason): void {
    this.#killed ??= reason;
    if (this.#child && !this.#exited) this.#child.kill('SIGKILL');
  }

  #run(request: SandboxProcessRequest): Promise<SandboxProcessResult> {
    const started = performance.now();
    const stdout = new CappedBuffer(request.maxOutputBytes);
    const stderr = new CappedBuffer(request.maxOutputBytes);
    const status: Buffer[] = [];
    return new Promise((resolve, reject) => {
      const [file, ...args] = request.argv;
      const seccomp = seccompProgram();
      const child = spawn(file!, args, {
        env: { PATH: HOST_PATH },
        stdio: [
          request.stdin === undefined ? 'ignore' : 'pipe',
          'pipe',
          'pipe',
          'pipe',
          request.fd4 === undefined ? 'ignore' : 'pipe',
          'pipe',
          'pipe',
        ],
      });
      this.#child = child;
      if (this.#killed) child.kill('SIGKILL');
      const timer = setTimeout(() => this.kill('timeout'), request.timeoutMs);
      const onAbort = (): void => this.kill('abort');
      request.signal?.addEventListener('abort', onAbort, { once: true });
      if (request.signal?.aborted) onAbort();
      let graceTimer: NodeJS.Timeout | undefined;
      let hostExit: SandboxProcessResult['hostExit'] = { code: null, signal: null };
      let settled = false;

      const finish = (): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        clearTimeout(graceTimer);
        request.signal?.removeEventListener('abort', onAbort);
        for (const stream of child.stdio) stream?.destroy();
        const parsed = parseStatus(Buffer.concat(status).toString('utf8'));
        resolve({
          exitCode: this.#killed ? null : parsed.exitCode,
          started: parsed.started,
          killed: this.#killed,
          stdout,
          stderr,
          durationMs: Math.round(performance.now() - started),
          hostExit,
        });
      };

      let listening = true;
      const forward = (stream: 'stdout' | 'stderr', kept: Buffer) => {
        if (kept.length === 0 || !listening || !request.onOutput) return;
        try {
          request.onOutput(stream, kept);
        } catch {
          // A throwing listener must not take the process down; the output is still collected.
          listening = false;
        }
      };
      child.stdout!.on('data', (chunk: Buffer) => forward('stdout', stdout.push(chunk)));
      child.stderr!.on('data', (chunk: Buffer) => forward('stderr', stderr.push(chunk)));
      const statusStream = child.stdio[STATUS_FD];
      statusStream?.on('data', (chunk: Buffer) => status.push(chunk));
      for (const stream of child.stdio) stream?.on('error', () => undefined);
      child.on('error', (error) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        request.signal?.removeEventListener('abort', onAbort);
        reject(error);
      });
      child.on('exit', (code, signal) => {
        this.#exited = true;
        hostExit = { code, signal };
        // A process that escaped the kill could hold the pipes open: do not wait for it forever.
        // setImmediate lets I/O already pending (the last output, bwrap's status) be read first.
        graceTimer = setTimeout(() => setImmediate(finish), PIPE_GRACE_MS);
      });
      child.on('close', finish);
      const stdin = child.stdio[0];
      if (request.stdin !== undefined && stdin && 'end' in stdin) {
        if (typeof request.stdin === 'string' || request.stdin instanceof Uint8Array) stdin.end(request.stdin);
        else request.stdin.pipe(stdin);
      }
      const fd4 = child.stdio[4];
      if (request.fd4 !== undefined && fd4 && 'end' in fd4) fd4.end(request.fd4);
      const filterFd = (child.stdio as ReadonlyArray<unknown>)[SECCOMP_FD] as Writable | null | undefined;
      // Always a pipe (empty without a filter), so no descriptor the server inherited sits at 5.
      filterFd?.end(seccomp ?? Buffer.alloc(0));
      const argsFd = (child.stdio as ReadonlyArray<unknown>)[ARGS_FD] as Writable | null | undefined;
      // Always a pipe too (empty without options), so nothing the server inherited sits at 6.
      argsFd?.end(request.bwrapArgs ?? Buffer.alloc(0));
    });
  }
}

function parseStatus(text: string): { started: boolean; exitCode: number | null } {
  let started = false;
  let exitCode: number | null = null;
  for (const match of text.matchAll(/\{[^{}]*\}/g)) {
    try {
      const record = JSON.parse(match[0]) as Record<string, unknown>;
      if (typeof record['child-pid'] === 'number') started = true;
      if (typeof record['exit-code'] === 'number') exitCode = record['exit-code'];
    } catch {
      // a partial record: ignore
    }
  }
  return { started, exitCode };
}
