/**
 * One PTY session of `winnower sandbox serve` (`WS /sandboxes/{id}/exec/pty`), speaking the frame
 * protocol of Orchard's in-pod agent (docs/design/01-orchard-env-api.md#10): the client's
 * `init` (once), `stdin` (base64), `signal`, `resize`, `close`; the server's `ready {pid}`,
 * `stdout` (base64, stdout and stderr merged as a terminal does), `exit {code}`, `error`.
 *
 * The terminal is a real pseudo-terminal inside the sandbox (the pty must live in the sandbox's own
 * /dev/pts: a host pty handed to the sandbox would be a host device): the command runs as a session
 * leader with the pty as its controlling terminal, so `isatty`, job control, window size and ^C
 * behave as on the real agent. Two ways to make it:
 * - the provider's own (`Sandbox.openTerminal`: the local provider's resident exec agent opens the
 *   pty and spawns the command): `signal` and `resize` are frames to the agent, so no process is
 *   started for them, `ready` is sent when the command is spawned, and the exit status is exact;
 * - elsewhere (another provider, a sandbox without the agent), util-linux `script` (present in
 *   Debian/Ubuntu images through bsdutils, and on the host /usr of repository sandboxes) in one
 *   streaming exec of the provider: stdin goes in as it arrives; a small controller beside `script`
 *   applies `resize` (stty + SIGWINCH) and `signal` (kill of the command's process group) that the
 *   server writes to a FIFO in the sandbox's /tmp with a short exec each.
 * Ending the session (exit, `close`, the client leaving) never ends the sandbox.
 */
import { constants } from 'node:os';
import { PassThrough } from 'node:stream';
import { shellQuote } from '../base-sandbox.js';
import type { Sandbox, Terminal, TerminalResult } from '../types.js';

export const PTY_SIGNALS = ['TERM', 'KILL', 'INT', 'HUP', 'QUIT'] as const;
export type PtySignal = (typeof PTY_SIGNALS)[number];

export interface PtyInit {
  cmd: string[];
  env: Record<string, string>;
  cwd: string | undefined;
  rows: number;
  cols: number;
  loginShell: boolean;
}

/** What the session sends to the client (the route turns these into JSON text frames). */
export type PtyServerFrame =
  | { type: 'ready'; pid: number }
  | { type: 'stdout'; data: string }
  | { type: 'exit'; code: number }
  | { type: 'error'; message: string };

/** How a session ended: `exact` when the wait status was seen (the provider's terminal); `error` from the sandbox side. */
type SessionEnd = TerminalResult & { exact: boolean; error?: string };

/** Control lines the sandbox side writes to stderr, prefixed with ASCII RS so no program output is taken for one. */
const CONTROL = '\x1e';

/** The init frame, checked as the agent checks it; a string is the reason it is refused. */
export function parseInit(frame: unknown): PtyInit | string {
  if (!isRecord(frame) || frame.type !== 'init') return 'first frame must be type=init';
  const { cmd, env, cwd, rows, cols, login_shell: loginShell } = frame;
  if (!Array.isArray(cmd) || cmd.length === 0 || !cmd.every((part) => typeof part === 'string'))
    return 'cmd must be a non-empty list of strings';
  if (env !== undefined && env !== null && (!isRecord(env) || !Object.values(env).every((value) => typeof value === 'string')))
    return 'env must be an object of strings or null';
  if (cwd !== undefined && cwd !== null && typeof cwd !== 'string') return 'cwd must be a string or null';
  const strings = [
    ...(cmd as string[]),
    ...Object.entries((env as Record<string, string> | null) ?? {}).flat(),
    ...(typeof cwd === 'string' ? [cwd] : []),
  ];
  if (strings.some((value) => value.includes('\0'))) return 'cmd, env and cwd must not contain a NUL byte';
  return {
    cmd: cmd as string[],
    env: (env as Record<string, string> | null | undefined) ?? {},
    cwd: typeof cwd === 'string' && cwd !== '' ? cwd : undefined,
    rows: windowSize(rows, 24),
    cols: windowSize(cols, 80),
    loginShell: loginShell === true,
  };
}

export interface PtySessionOptions {
  sandbox: Sandbox;
  init: PtyInit;
  /** Longest the session may run (the sandbox's remaining lifetime). */
  timeoutMs: number;
  /** Output past this many bytes ends the session (default 64 MiB). */
  maxOutputBytes?: number;
  send(frame: PtyServerFrame): void;
}

export class PtySession {
  readonly #options: PtySessionOptions;
  readonly #stdin = new PassThrough();
  readonly #abort = new AbortController();
  /** The session's folder in the sandbox's /tmp (control FIFO, pid, tty), once the sandbox side reports it. */
  #dir: string | undefined;
  #pending = '';
  /**
   * Output that came before `ready` (its own pipe may be read first): held, so that `ready` is
   * always the first frame, as on Orchard's agent; undefined once `ready` is sent.
   */
  #held: PtyServerFrame[] | undefined = [];
  readonly #ready: Promise<void>;
  #markReady = (): void => undefined;
  #control: Promise<unknown> = Promise.resolve();
  /** Set when the provider made the terminal itself: control frames go to it. */
  #terminal: Terminal | undefined;
  #ended = false;
  /** Numbers of the signals this session sent the command (what its exit status can be told from). */
  readonly #delivered = new Set<number>();
  readonly done: Promise<void>;

  constructor(options: PtySessionOptions) {
    this.#options = options;
    this.#ready = new Promise<void>((resolve) => (this.#markReady = resolve));
    this.done = this.#run();
  }

  /** Bytes typed by the client. */
  write(data: Buffer): void {
    if (!this.#ended && data.length > 0) this.#stdin.write(data);
  }

  /** TIOCSWINSZ on the session's tty, and so SIGWINCH to its foreground process group (best effort, as the agent). */
  resize(rows: unknown, cols: unknown): void {
    const r = windowSize(rows, 0);
    const c = windowSize(cols, 0);
    if (r > 0 && c > 0) this.#afterReady((terminal) => (terminal ? terminal.resize(r, c) : this.#controlLine(`resize ${r} ${c}`)));
  }

  /** A signal to the command's process group; an unknown name is TERM, as the agent. */
  signal(name: unknown): void {
    const upper = typeof name === 'string' ? name.toUpperCase() : 'TERM';
    const known: PtySignal = (PTY_SIGNALS as readonly string[]).includes(upper) ? (upper as PtySignal) : 'TERM';
    const number = constants.signals[`SIG${known}`];
    this.#afterReady((terminal) => {
      this.#delivered.add(number);
      return terminal ? terminal.signal(number) : this.#controlLine(`signal ${known}`);
    });
  }

  /** The client's `close`: SIGTERM to the command, as the agent; `exit` follows when it is reaped. */
  close(): void {
    this.signal('TERM');
    this.#stdin.end();
  }

  /** The client left: the whole session's process tree is killed (the sandbox stays). */
  abandon(): void {
    this.#ended = true;
    this.#abort.abort();
    this.#stdin.end();
  }

  /** Runs a control action in order, once `ready` is sent (the command can then be found), unless the session has ended. */
  #afterReady(action: (terminal: Terminal | undefined) => unknown): void {
    if (this.#ended) return;
    this.#control = this.#control
      .then(async () => {
        await this.#ready;
        if (!this.#ended) await action(this.#terminal);
      })
      .catch(() => undefined);
  }

  /** Without the provider's terminal: a control line for the controller, by a short exec of its own (the session's shell is busy running `script`). */
  #controlLine(line: string): Promise<unknown> {
    const dir = this.#dir;
    if (!dir) return Promise.resolve();
    return this.#options.sandbox
      .exec(`[ -p ${shellQuote(`${dir}/ctl`)} ] && printf '%s\\n' ${shellQuote(line)} > ${shellQuote(`${dir}/ctl`)}`, {
        cwd: '/',
        timeoutMs: 10_000,
      })
      .catch(() => undefined);
  }

  async #run(): Promise<void> {
    const { sandbox, init, send } = this.#options;
    const maxOutputBytes = this.#options.maxOutputBytes ?? 64 * 1024 * 1024;
    try {
      const terminal = await sandbox.openTerminal?.({
        argv: commandArgv(init),
        env: { TERM: 'xterm-256color', ...init.env },
        cwd: init.cwd ?? sandbox.workdir,
        rows: init.rows,
        cols: init.cols,
        input: this.#stdin,
        timeoutMs: this.#options.timeoutMs,
        maxOutputBytes,
        signal: this.#abort.signal,
        onStart: (pid) => this.#sendReady(pid),
        onOutput: (chunk) => this.#output({ type: 'stdout', data: Buffer.from(chunk).toString('base64') }),
      });
      this.#terminal = terminal;
      const result: SessionEnd = terminal ? { ...(await terminal.result), exact: true } : await this.#runScript(maxOutputBytes);
      this.#ended = true;
      this.#flush();
      if (result.error) return send({ type: 'error', message: result.error });
      if (result.truncated)
        return send({ type: 'error', message: `the session's output passed the server's cap of ${maxOutputBytes} bytes` });
      if (result.timedOut)
        return send({
          type: 'error',
          message: `the session outlived its sandbox's lifetime (${Math.round(this.#options.timeoutMs / 1000)} s left at its start)`,
        });
      // Orchard's agent answers −N for a death by signal N (docs/design/02-orchard-real-behaviour.md#9).
      send({
        type: 'exit',
        code: result.signal ? -result.signal : result.exact ? (result.exitCode ?? -1) : this.#exitCode(result.exitCode),
      });
    } catch (failure) {
      this.#ended = true;
      this.#flush();
      if (!this.#abort.signal.aborted) send({ type: 'error', message: (failure as Error).message });
    } finally {
      this.#stdin.end();
    }
  }

  /** The session as one exec of the provider, running sessionScript. */
  async #runScript(maxOutputBytes: number): Promise<SessionEnd> {
    const { sandbox, init } = this.#options;
    let error: string | undefined;
    const result = await sandbox.exec(sessionScript({ ...init, cwd: init.cwd ?? sandbox.workdir }), {
      cwd: '/',
      env: { TERM: 'xterm-256color', ...init.env },
      input: this.#stdin,
      timeoutMs: this.#options.timeoutMs,
      maxOutputBytes,
      signal: this.#abort.signal,
      onOutput: (stream, chunk) => {
        if (stream === 'stdout') this.#output({ type: 'stdout', data: Buffer.from(chunk).toString('base64') });
        else error = this.#stderr(Buffer.from(chunk).toString('utf8')) ?? error;
      },
    });
    return { exitCode: result.exitCode, timedOut: result.timedOut, truncated: result.truncated, exact: false, ...(error ? { error } : {}) };
  }

  /**
   * Without the provider's terminal the wait status is not seen: `script` passes a death by signal N
   * on as the exit status 128 + N, which an `exit 137` also gives, so 128 + N is read as −N when this
   * session sent signal N; any other status is the command's own.
   */
  #exitCode(status: number | null): number {
    if (status === null) return -1;
    return status > 128 && this.#delivered.has(status - 128) ? -(status - 128) : status;
  }

  /** `ready {pid}` (once), then what was held. */
  #sendReady(pid: number): void {
    if (!this.#held) return;
    this.#options.send({ type: 'ready', pid });
    this.#flush();
  }

  /** Terminal output, held until `ready` is sent. */
  #output(frame: PtyServerFrame): void {
    if (this.#held) this.#held.push(frame);
    else this.#options.send(frame);
  }

  /** Sends what was held (after `ready`, or at the end of a session that never got one) and lets control lines go. */
  #flush(): void {
    const held = this.#held;
    this.#held = undefined;
    for (const frame of held ?? []) this.#options.send(frame);
    this.#markReady();
  }

  /** Reads the sandbox side's control lines (session folder, ready, failures); anything else is terminal output. */
  #stderr(text: string): string | undefined {
    this.#pending += text;
    let failure: string | undefined;
    let newline: number;
    while ((newline = this.#pending.indexOf('\n')) >= 0) {
      const line = this.#pending.slice(0, newline);
      this.#pending = this.#pending.slice(newline + 1);
      if (!line.startsWith(CONTROL)) {
        this.#output({ type: 'stdout', data: Buffer.from(`${line}\n`).toString('base64') });
        continue;
      }
      const [what, ...rest] = line.slice(1).split(' ');
      if (what === 'dir' && /^\/tmp\/\.wnw-pty\.[A-Za-z0-9]+$/.test(rest[0] ?? '')) this.#dir = rest[0];
      else if (what === 'ready' && /^\d+$/.test(rest[0] ?? '')) this.#sendReady(Number(rest[0]));
      else if (what === 'error') failure = rest.join(' ');
    }
    return failure;
  }
}

/**
 * The sandbox side, in POSIX sh plus `script`, `stty`, `mkfifo`, `mktemp`: a session folder with the
 * control FIFO; `script` running the command under a new pty (the inner shell records its pid and
 * tty, sets the window size, reports `ready <pid>` on fd 8, then execs the command); a controller
 * that applies control lines. Exit status: the command's (128+N when a signal killed it).
 */
export function sessionScript(init: PtyInit): string {
  const argv = commandArgv(init);
  // As the agent: a cwd that is not a directory means /.
  const cwd = `cd -- ${shellQuote(init.cwd ?? '/')} 2>/dev/null || cd /`;
  const inner = [
    'echo $$ > "$WNW_PTY/pid"',
    'tty > "$WNW_PTY/tty"',
    `stty rows ${init.rows} cols ${init.cols} 2>/dev/null`,
    "printf '\\036ready %s\\n' $$ >&8",
    'exec 8>&-',
    cwd,
    `exec ${argv.map(shellQuote).join(' ')}`,
  ].join('; ');
  return [
    `command -v script >/dev/null 2>&1 || { printf '${CONTROL}error this sandbox has no util-linux script, which sandbox serve uses to make the pseudo-terminal\\n' >&2; exit 127; }`,
    `WNW_PTY=$(mktemp -d /tmp/.wnw-pty.XXXXXXXX) && mkfifo "$WNW_PTY/ctl" || { printf '${CONTROL}error cannot make the session folder in /tmp\\n' >&2; exit 125; }`,
    'export WNW_PTY',
    `trap 'rm -rf "$WNW_PTY"' EXIT`,
    `printf '${CONTROL}dir %s\\n' "$WNW_PTY" >&2`,
    // The server writes control lines only after `ready`, so the pid and tty files are there.
    '(',
    '  exec 3<>"$WNW_PTY/ctl" </dev/null',
    '  while read -r what a b <&3; do',
    '    read -r pid < "$WNW_PTY/pid"',
    '    case $what in',
    '      resize) read -r tty < "$WNW_PTY/tty"; stty -F "$tty" rows "$a" cols "$b" 2>/dev/null; kill -WINCH -- "-$pid" 2>/dev/null ;;',
    '      signal) kill -s "$a" -- "-$pid" 2>/dev/null || kill -s "$a" "$pid" 2>/dev/null ;;',
    '    esac',
    '  done',
    ') &',
    'controller=$!',
    // fd 8 is the session's stderr, past the pty: the inner shell says `ready` there before the command runs.
    `SHELL=/bin/sh script -qfec ${shellQuote(inner)} /dev/null 8>&2`,
    'status=$?',
    'kill "$controller" 2>/dev/null',
    'exit $status',
  ].join('\n');
}

/** What the terminal runs: `cmd`, or with `login_shell` a login shell sourcing ~/.bashrc first, as the agent. */
function commandArgv(init: PtyInit): string[] {
  return init.loginShell
    ? ['bash', '--login', '-i', '-c', `if [ -f ~/.bashrc ]; then . ~/.bashrc; fi; ${init.cmd.map(shellQuote).join(' ')}`]
    : init.cmd;
}

function windowSize(value: unknown, fallback: number): number {
  const number = typeof value === 'number' ? value : typeof value === 'string' ? Number(value) : Number.NaN;
  return Number.isInteger(number) && number > 0 && number <= 10_000 ? number : fallback;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
