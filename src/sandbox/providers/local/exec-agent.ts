/**
 * The host's end of a local sandbox's resident exec agent (local-agent-script.ts): starts it once,
 * through the same launch chain as every exec of the fallback path (cgroup join, privilege drop,
 * prlimit, the holder's namespaces, the same bwrap options and seccomp filter), then turns each
 * command into a request over the agent's stdin and stdout pipes. The agent forks the command
 * inside the sandbox, so an exec no longer pays for entering the namespaces again. A command may
 * run on a pseudo-terminal the agent makes (`sandbox serve`'s PTY sessions); signals to a running
 * command and a terminal's window size are frames too, so they start no process.
 *
 * If the agent exits while the sandbox is open (killed from the host, out of memory), the sandbox
 * is lost: running and later calls fail with WNW_ERR_SBX_LOST; nothing is recreated behind the
 * caller's back (its processes and /tmp are gone).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { Writable } from 'node:stream';
import { wnwError, type WinnowerError } from '../../../errors.js';
import { CappedBuffer } from '../../base-sandbox.js';
import { AGENT_SCRIPT } from './exec-agent-script.js';
import { HOST_PATH, tail } from '../../host-command.js';
import { ARGS_FD, type KillReason, type SandboxProcessResult } from './process.js';
import { SECCOMP_FD, seccompProgram } from './seccomp.js';

export interface AgentRequest {
  argv: string[];
  env: Record<string, string>;
  /** Absolute, inside the sandbox. */
  cwd: string;
  stdin?: Uint8Array | string | NodeJS.ReadableStream;
  /** A long command, given to the shell on fd 4. */
  fd4?: string;
  timeoutMs: number;
  maxOutputBytes: number;
  signal?: AbortSignal;
  onOutput?: (stream: 'stdout' | 'stderr', chunk: Uint8Array) => void;
  /**
   * Runs the command on a pseudo-terminal the agent makes, of this size (its controlling terminal,
   * stdin, stdout and stderr: all output comes as stdout); `onStart` then gets its pid before any output.
   */
  pty?: { rows: number; cols: number };
  onStart?: (pid: number) => void;
}

export interface AgentRun {
  readonly result: Promise<SandboxProcessResult>;
  kill(reason: KillReason): void;
  /** A signal (its number) to the command's process group, delivered by the agent: no process is started. */
  signal(signal: number): void;
  /** A pty command's new window size (the kernel sends its foreground process group SIGWINCH); no process is started. */
  resize(rows: number, cols: number): void;
}

/** The frame header: payload length, type, request id. */
const HEAD = 9;
/**
 * The largest frame the agent may send (it sends output in 64 KiB pieces). The agent runs as the
 * sandbox user, so a command could take it over and send anything: a frame past this, or one that
 * does not parse, is a broken agent (the sandbox is lost), never a reason to buffer without end.
 */
const MAX_FRAME = 1024 * 1024;
/** Stdin is sent in frames of at most this many bytes. */
const STDIN_FRAME = 1024 * 1024;
const START_TIMEOUT_MS = 30_000;
/** Past its own timeout, how long a command may go unanswered before the agent counts as hung. */
const ANSWER_GRACE_MS = 15_000;
/**
 * The agent's argv: a bootstrap reads the program from fd 4 (a pipe), so /proc/1/cmdline stays
 * short. bwrap sets PWD for the program it starts; the bootstrap starts itself again with no
 * environment at all, so the sandbox's /proc/1/environ is empty, as with a bwrap per exec.
 */
const BOOTSTRAP = [
  'import os,sys',
  // Only PWD: python puts LC_CTYPE in its own environment (PEP 538), which /proc/1/environ does not show.
  "if 'PWD' in os.environ:os.execve(sys.executable,[sys.executable,'-I','-S','-c',sys.argv[1],sys.argv[1]],{})",
  "f=os.fdopen(4,'rb');s=f.read();f.close();exec(compile(s,'winnower-exec-agent','exec'))",
].join('\n');
export const AGENT_ARGS = ['-I', '-S', '-c', BOOTSTRAP, BOOTSTRAP];

interface Pending {
  stdout: CappedBuffer;
  stderr: CappedBuffer;
  started: number;
  killed: KillReason | undefined;
  onOutput: AgentRequest['onOutput'];
  onStart: AgentRequest['onStart'];
  listening: boolean;
  resolve(result: SandboxProcessResult): void;
  reject(error: unknown): void;
  cleanup(): void;
}

export class ExecAgent {
  readonly #child: ChildProcess;
  readonly #sandbox: string;
  readonly #pending = new Map<number, Pending>();
  readonly #stderr = new CappedBuffer(16 * 1024);
  #buffer: Buffer = Buffer.alloc(0);
  #nextId = 1;
  #lost: WinnowerError | undefined;
  #closing = false;
  /** The agent process has exited. */
  #dead = false;
  readonly #exited: Promise<void>;
  #ready: { resolve(): void; reject(error: Error): void } | undefined;

  /** Spawns the launch chain (argv from launchArgv, bwrap's options for ARGS_FD) and waits for the agent's hello. */
  static async start(sandbox: string, argv: string[], bwrapArgs: Buffer): Promise<ExecAgent> {
    const { agent, ready } = ExecAgent.spawn(sandbox, argv, bwrapArgs);
    await ready;
    return agent;
  }

  /**
   * Spawns the agent without waiting for it: requests sent before its hello wait in the pipe.
   * `ready` rejects (and the agent is killed) when it exits or does not say hello in time.
   */
  static spawn(sandbox: string, argv: string[], bwrapArgs: Buffer): { agent: ExecAgent; ready: Promise<void> } {
    const agent = new ExecAgent(sandbox, argv, bwrapArgs);
    return { agent, ready: agent.#waitReady() };
  }

  private constructor(sandbox: string, argv: string[], bwrapArgs: Buffer) {
    this.#sandbox = sandbox;
    const [file, ...args] = argv;
    this.#child = spawn(file!, args, { env: { PATH: HOST_PATH }, stdio: ['pipe', 'pipe', 'pipe', 'pipe', 'pipe', 'pipe', 'pipe'] });
    const child = this.#child;
    for (const stream of child.stdio) stream?.on('error', () => undefined);
    child.stdout!.on('data', (chunk: Buffer) => this.#onData(chunk));
    child.stderr!.on('data', (chunk: Buffer) => this.#stderr.push(chunk));
    // bwrap's JSON status (STATUS_FD): read and dropped; the agent's own frames say what happened.
    (child.stdio[3] as NodeJS.ReadableStream | null)?.resume();
    this.#exited = new Promise<void>((resolve) => {
      child.on('error', (error) => {
        this.#dead = true;
        this.#onExit(`could not be started (${error.message})`);
        resolve();
      });
      child.on('exit', (code, signal) => {
        this.#dead = true;
        this.#onExit(`exited (${signal ?? `code ${code}`})`);
        resolve();
      });
    });
    const fd = (index: number): Writable | undefined => (child.stdio as ReadonlyArray<unknown>)[index] as Writable | undefined;
    fd(4)?.end(AGENT_SCRIPT);
    // Always pipes, as in SandboxProcess: nothing the server inherited sits at 5 or 6.
    fd(SECCOMP_FD)?.end(seccompProgram() ?? Buffer.alloc(0));
    fd(ARGS_FD)?.end(bwrapArgs);
  }

  /** Set once the agent has died while the sandbox was open. */
  get lost(): WinnowerError | undefined {
    return this.#lost;
  }

  run(request: AgentRequest): AgentRun {
    const id = this.#nextId++;
    let pending: Pending | undefined;
    const kill = (reason: KillReason): void => {
      if (!pending || pending.killed) return;
      pending.killed = reason;
      this.#send('K', id, Buffer.from(reason));
    };
    const live = (): boolean => pending !== undefined && !pending.killed && this.#pending.has(id);
    const signal = (number: number): void => {
      if (live() && Number.isInteger(number) && number > 0 && number < 65) this.#send('S', id, Buffer.from(String(number)));
    };
    const resize = (rows: number, cols: number): void => {
      if (!live() || !request.pty) return;
      const size = Buffer.alloc(4);
      size.writeUInt16BE(Math.min(Math.max(1, Math.floor(rows)), 0xffff), 0);
      size.writeUInt16BE(Math.min(Math.max(1, Math.floor(cols)), 0xffff), 2);
      this.#send('W', id, size);
    };
    const result = new Promise<SandboxProcessResult>((resolve, reject) => {
      if (this.#lost) return reject(this.#lost);
      const empty = (): CappedBuffer => new CappedBuffer(request.maxOutputBytes);
      if (this.#dead)
        return resolve({
          exitCode: null,
          started: false,
          killed: 'close',
          stdout: empty(),
          stderr: empty(),
          durationMs: 0,
          hostExit: { code: null, signal: null },
        });
      const onAbort = (): void => kill('abort');
      // The agent applies the timeout; this only catches an agent that stopped answering.
      const backstop = setTimeout(() => this.#hung(), request.timeoutMs + ANSWER_GRACE_MS);
      backstop.unref();
      pending = {
        stdout: new CappedBuffer(request.maxOutputBytes),
        stderr: new CappedBuffer(request.maxOutputBytes),
        started: performance.now(),
        killed: undefined,
        onOutput: request.onOutput,
        onStart: request.onStart,
        listening: true,
        resolve,
        reject,
        cleanup: () => {
          clearTimeout(backstop);
          request.signal?.removeEventListener('abort', onAbort);
        },
      };
      this.#pending.set(id, pending);
      const header = Buffer.from(
        JSON.stringify({
          argv: request.argv,
          env: request.env,
          cwd: request.cwd,
          timeout_ms: request.timeoutMs,
          max_bytes: request.maxOutputBytes,
          stdin: request.stdin !== undefined,
          ...(request.pty ? { pty: request.pty } : {}),
        }),
      );
      const size = Buffer.alloc(4);
      size.writeUInt32BE(header.length);
      this.#send('X', id, Buffer.concat([size, header, request.fd4 === undefined ? Buffer.alloc(0) : Buffer.from(request.fd4)]));
      request.signal?.addEventListener('abort', onAbort, { once: true });
      if (request.signal?.aborted) onAbort();
      this.#feed(id, request.stdin);
    });
    return { result, kill, signal, resize };
  }

  /** Kills the agent and with it every process of the sandbox (its pid namespace); running calls end as killed by close. */
  async close(): Promise<void> {
    this.#closing = true;
    this.killNow();
    await this.#exited;
    for (const stream of this.#child.stdio) stream?.destroy();
  }

  /** SIGKILLs the launch chain's bwrap at once (process exit). */
  killNow(): void {
    this.#closing = true;
    if (this.#child.exitCode === null && this.#child.signalCode === null) this.#child.kill('SIGKILL');
  }

  #waitReady(): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.killNow();
        reject(new Error(`the exec agent did not start in ${START_TIMEOUT_MS / 1000} s`));
      }, START_TIMEOUT_MS);
      this.#ready = {
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      };
    });
  }

  #feed(id: number, stdin: AgentRequest['stdin']): void {
    if (stdin === undefined) return;
    if (typeof stdin === 'string' || stdin instanceof Uint8Array) {
      const bytes = typeof stdin === 'string' ? Buffer.from(stdin) : Buffer.from(stdin.buffer, stdin.byteOffset, stdin.byteLength);
      for (let at = 0; at < bytes.length; at += STDIN_FRAME) this.#send('I', id, bytes.subarray(at, at + STDIN_FRAME));
      this.#send('E', id);
      return;
    }
    stdin.on('data', (chunk: Buffer | string) => {
      if (this.#pending.has(id)) this.#send('I', id, typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
    });
    stdin.on('end', () => {
      if (this.#pending.has(id)) this.#send('E', id);
    });
    stdin.on('error', () => undefined);
  }

  #send(type: string, id: number, payload: Buffer = Buffer.alloc(0)): void {
    const stdin = this.#child.stdin;
    if (!stdin || stdin.destroyed || this.#lost) return;
    const head = Buffer.alloc(HEAD);
    head.writeUInt32BE(payload.length, 0);
    head.write(type, 4, 'latin1');
    head.writeUInt32BE(id, 5);
    stdin.write(payload.length > 0 ? Buffer.concat([head, payload]) : head);
  }

  #onData(chunk: Buffer): void {
    if (this.#lost) return;
    this.#buffer = this.#buffer.length > 0 ? Buffer.concat([this.#buffer, chunk]) : chunk;
    while (this.#buffer.length >= HEAD) {
      const length = this.#buffer.readUInt32BE(0);
      if (length > MAX_FRAME) return this.#broken(`sent a frame of ${length} bytes`);
      if (this.#buffer.length < HEAD + length) break;
      const type = String.fromCharCode(this.#buffer[4]!);
      const id = this.#buffer.readUInt32BE(5);
      const payload = this.#buffer.subarray(HEAD, HEAD + length);
      this.#buffer = this.#buffer.subarray(HEAD + length);
      this.#onFrame(type, id, payload);
    }
  }

  #onFrame(type: string, id: number, payload: Buffer): void {
    if (type === 'H') {
      this.#ready?.resolve();
      return;
    }
    const pending = this.#pending.get(id);
    if (!pending) return;
    if (type === 'P') {
      const pid = Number(payload.toString('latin1'));
      if (Number.isInteger(pid) && pid > 0) {
        try {
          pending.onStart?.(pid);
        } catch {
          // As with output: a throwing listener must not take the call down.
        }
      }
      return;
    }
    if (type === 'O' || type === 'R') {
      const stream = type === 'O' ? 'stdout' : 'stderr';
      // Copied: the payload is a view of the read buffer, which the next frames reuse.
      const kept = pending[stream].push(Buffer.from(payload));
      if (kept.length > 0 && pending.listening && pending.onOutput) {
        try {
          pending.onOutput(stream, kept);
        } catch {
          // A throwing listener must not take the call down; the output is still collected.
          pending.listening = false;
        }
      }
      return;
    }
    if (type !== 'D' && type !== 'F') return;
    let answer: { code?: unknown; signal?: unknown; killed?: unknown; truncated?: unknown; error?: unknown };
    try {
      answer = JSON.parse(payload.toString('utf8')) as typeof answer;
    } catch {
      return this.#broken('sent an answer that is not JSON');
    }
    this.#pending.delete(id);
    pending.cleanup();
    const truncated = Array.isArray(answer.truncated) ? answer.truncated : [];
    if (type === 'F') pending.stderr.push(Buffer.from(typeof answer.error === 'string' ? answer.error : 'could not start the command'));
    if (truncated[0] === true) pending.stdout.truncated = true;
    if (truncated[1] === true) pending.stderr.truncated = true;
    const reported = answer.killed === 'timeout' || answer.killed === 'abort' || answer.killed === 'close' ? answer.killed : undefined;
    const killed = pending.killed ?? reported;
    const code = typeof answer.code === 'number' && Number.isInteger(answer.code) ? answer.code : null;
    const signal = typeof answer.signal === 'number' && Number.isInteger(answer.signal) && answer.signal > 0 ? answer.signal : undefined;
    pending.resolve({
      exitCode: killed || type === 'F' ? null : code,
      ...(signal && code !== null && !killed ? { signal } : {}),
      started: type === 'D',
      killed,
      stdout: pending.stdout,
      stderr: pending.stderr,
      durationMs: Math.round(performance.now() - pending.started),
      hostExit: { code: null, signal: null },
    });
  }

  /** A command went unanswered long past its timeout: the agent is stuck; kill it (the sandbox is lost). */
  #hung(): void {
    this.#broken('stopped answering');
  }

  /** The agent broke the protocol or hangs: the sandbox is lost, and the agent (with every process of the sandbox) killed. */
  #broken(why: string): void {
    this.#buffer = Buffer.alloc(0);
    this.#onExit(why);
    this.killNow();
  }

  #onExit(how: string): void {
    this.#ready?.reject(new Error(`the exec agent ${how}${this.#stderr.toString() ? `: ${tail(this.#stderr.toString())}` : ''}`));
    this.#ready = undefined;
    const closing = this.#closing;
    if (!closing && !this.#lost) {
      this.#lost = wnwError(
        'WNW_ERR_SBX_LOST',
        `sandbox ${this.#sandbox} is lost: its exec agent ${how}; its processes and /tmp are gone, so it is not recreated (create a new sandbox)`,
        {
          details: { sandbox: this.#sandbox, lost: true, ...(this.#stderr.toString() ? { stderr: tail(this.#stderr.toString()) } : {}) },
        },
      );
    }
    for (const [id, pending] of this.#pending) {
      this.#pending.delete(id);
      pending.cleanup();
      if (closing) {
        pending.resolve({
          exitCode: null,
          started: true,
          killed: 'close',
          stdout: pending.stdout,
          stderr: pending.stderr,
          durationMs: Math.round(performance.now() - pending.started),
          hostExit: { code: null, signal: null },
        });
      } else pending.reject(this.#lost);
    }
  }
}
