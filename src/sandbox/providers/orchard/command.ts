/**
 * How a command is sent to Orchard Env's in-pod agent, and how its answer is read back
 * (docs/design/02-orchard-real-behaviour.md#1, #2, #8, #9).
 *
 * The agent kills a command at `timeout_seconds` with killpg on the pod's own process group,
 * which takes the whole pod down. So every command runs under coreutils `timeout` (its own
 * process group: only the command's tree dies), the agent's timeout is only a backstop, and a
 * random marker the wrapper prints on stderr says the timeout was ours (a bare 124 is ambiguous).
 * `login_shell` is never sent (the agent rewrites stderr under it); a login or conda environment
 * is set up inside the command instead. The wrapper `cd`s itself: the agent silently runs in `/`
 * when `cwd` is not a directory.
 */
import { randomBytes } from 'node:crypto';
import { shellQuote } from '../../base-sandbox.js';

/** Grace between `timeout`'s TERM and its KILL. */
export const KILL_AFTER_S = 5;
/** The agent's own timeout is this much past ours, so ours always fires first. */
export const AGENT_BACKSTOP_S = KILL_AFTER_S + 10;

export interface CommandShape {
  /** Absolute working directory; the command fails with exit 1 when it does not exist. */
  cwd: string;
  timeoutMs: number;
  /** An uploaded file (relative to cwd) to feed as stdin; removed before the command starts. */
  stdinFile?: string;
  /** Shell lines run before the command in the same shell (e.g. `source /opt/conda/bin/activate testbed`). */
  activate?: string;
  /** Run the command in an interactive login bash (`bash -lic`), so ~/.bashrc and the profile run first. */
  loginShell?: boolean;
}

export interface WrappedCommand {
  /** What to send as `command`. */
  script: string;
  /** What to send as `timeout_seconds` (the agent's backstop). */
  agentTimeoutS: number;
  /** The line the wrapper prints on stderr when our timeout killed the command. */
  marker: string;
}

export function wrapCommand(command: string, shape: CommandShape): WrappedCommand {
  const marker = `winnower-timeout-${randomBytes(8).toString('hex')}`;
  const seconds = Math.max(0.001, shape.timeoutMs / 1000);
  const inner = shape.activate ? `${shape.activate}\n${command}` : command;
  const run = shape.loginShell ? loginShellCommand(inner) : `bash -c ${shellQuote(inner)}`;
  const lines = [
    `cd -- ${shellQuote(shape.cwd)} || exit 1`,
    ...(shape.stdinFile ? [`exec 0< ${shellQuote(shape.stdinFile)} || exit 1`, `rm -f -- ${shellQuote(shape.stdinFile)}`] : []),
    // Microseconds from bash 5's EPOCHREALTIME (either decimal mark); whole seconds on older bash.
    'wnw_t0=${EPOCHREALTIME//[.,]/}; SECONDS=0',
    // The command's stderr is fd 3 (the real one); the shell's own "Killed" report goes nowhere.
    'exec 3>&2',
    `{ if command -v timeout >/dev/null 2>&1; then timeout -k ${KILL_AFTER_S} ${formatSeconds(seconds)} ${run} 2>&3 3>&-; else ${run} 2>&3 3>&-; fi; } 2>/dev/null`,
    'rc=$?',
    'if [ -n "$wnw_t0" ]; then wnw_ms=$(( (${EPOCHREALTIME//[.,]/} - wnw_t0) / 1000 )); else wnw_ms=$(( SECONDS * 1000 + 999 )); fi',
    // 124 after TERM, 137 after the KILL that follows a trapped TERM; only past the timeout is it ours.
    `if { [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; } && [ "$wnw_ms" -ge ${Math.floor(shape.timeoutMs)} ]; then printf '\\n%s\\n' ${shellQuote(marker)} >&2; fi`,
    'exit "$rc"',
  ];
  return { script: lines.join('\n'), agentTimeoutS: Math.ceil(seconds) + AGENT_BACKSTOP_S, marker };
}

/**
 * `command` in an interactive login bash that sources ~/.bashrc first, as Orchard's agent runs
 * `login_shell` commands (a login shell reads the profile, not ~/.bashrc, where images put their
 * conda setup; `-i` gets past the usual "not interactive: return" at its top).
 */
export function loginShellCommand(command: string): string {
  return `bash --login -i -c ${shellQuote(`if [ -f ~/.bashrc ]; then . ~/.bashrc; fi\n${command}`)}`;
}

/** The noise an interactive bash without a terminal prints first. */
const NO_TTY_NOISE = /^bash: (cannot set terminal process group \(-?\d+\): Inappropriate ioctl for device|no job control in this shell)\n/;

/** Drops what {@link loginShellCommand}'s bash prints about the missing terminal, and nothing else. */
export function stripNoTtyNoise(stderr: string): string {
  let text = stderr;
  while (NO_TTY_NOISE.test(text)) text = text.replace(NO_TTY_NOISE, '');
  return text;
}

/** Reads our marker off stderr; exit codes of signal deaths (the agent reports −N) become 128 + N. */
export function unwrapResult(
  exitCode: number,
  stderr: string,
  wrapped: WrappedCommand,
  loginShell = false,
): { exitCode: number; stderr: string; timedOut: boolean } {
  const text = loginShell ? stripNoTtyNoise(stderr) : stderr;
  const tail = `\n${wrapped.marker}\n`;
  if (text.endsWith(tail)) return { exitCode, stderr: text.slice(0, -tail.length), timedOut: true };
  return { exitCode: normaliseExitCode(exitCode), stderr: text, timedOut: false };
}

/** The agent reports a death by signal N as −N (`returncode`); every other provider says 128 + N. */
export function normaliseExitCode(code: number): number {
  return code < 0 ? 128 + Math.abs(code) : code;
}

function formatSeconds(seconds: number): string {
  return Number.isInteger(seconds) ? String(seconds) : seconds.toFixed(3).replace(/0+$/, '');
}
