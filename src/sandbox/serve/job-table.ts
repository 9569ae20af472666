/**
 * The jobs of `winnower sandbox serve`: one per exec request, run one at a time per sandbox in
 * order of submission, through the backing provider's `Sandbox.exec` (which kills the whole
 * process tree at the timeout and caps the output). A death by signal N is −N, as Orchard's agent
 * says it. Unlike the real Orchard Env, a timeout leaves the sandbox alive: the job fails with exit 124 and the agent's note on stderr.
 * Accepting a job never fails afterwards, so the SDK's resubmit-on-error never runs a command twice.
 * Output is capped per stream, and a command that passes the cap is killed at once. A job outlives
 * the request that submitted it (the SDK polls `wait: false` jobs), so a client's disconnect does
 * not kill it: its timeout (at most the sandbox's lifetime) and the cap bound it.
 */
import { randomUUID } from 'node:crypto';
import { WinnowerError } from '../../errors.js';
import { CappedBuffer, shellQuote } from '../base-sandbox.js';
import { loginShellCommand, stripNoTtyNoise } from '../providers/orchard/command.js';
import type { ExecResult } from '../types.js';
import type { ExecRequest, JobView } from './orchard-shapes.js';
import type { SandboxEntry } from './sandbox-table.js';

export interface JobRecord {
  readonly view: JobView;
  readonly done: Promise<void>;
}

export interface JobTableOptions {
  /** Cap per stream, in bytes (default 8 MiB); Orchard caps nothing. */
  maxOutputBytes?: number;
  /** How long a finished job stays readable (default 1 h). */
  retainMs?: number;
}

export class JobTable {
  readonly #jobs = new Map<string, JobRecord>();
  readonly #maxOutputBytes: number;
  readonly #retainMs: number;

  constructor(options: JobTableOptions = {}) {
    this.#maxOutputBytes = options.maxOutputBytes ?? 8 * 1024 * 1024;
    this.#retainMs = options.retainMs ?? 3_600_000;
  }

  get(id: string): JobRecord | undefined {
    return this.#jobs.get(id);
  }

  /** Queues the command behind the sandbox's other jobs; the record is `queued` until it runs. */
  submit(entry: SandboxEntry, request: ExecRequest): JobRecord {
    // A list is quoted word by word (Orchard joins it unquoted, which breaks any argument with a space).
    const command = Array.isArray(request.command) ? request.command.map(shellQuote).join(' ') : request.command;
    const view: JobView = {
      job_id: randomUUID(),
      sandbox_id: entry.view.sandbox_id,
      command,
      status: 'queued',
      stdout: '',
      stderr: '',
      exit_code: null,
      created_at: Date.now() / 1000,
      started_at: null,
      completed_at: null,
      error: null,
      truncated: false,
    };
    const run = entry.queue.then(() => this.#run(entry, view, request));
    entry.queue = run.catch(() => undefined);
    const record: JobRecord = { view, done: run.catch(() => undefined) };
    this.#jobs.set(view.job_id, record);
    void record.done.then(() => setTimeout(() => this.#jobs.delete(view.job_id), this.#retainMs).unref());
    return record;
  }

  /** Waits until the job is finished or `ms` pass. */
  async wait(record: JobRecord, ms: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([record.done, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
    clearTimeout(timer);
  }

  async #run(entry: SandboxEntry, view: JobView, request: ExecRequest): Promise<void> {
    const sandbox = entry.sandbox;
    if (!sandbox || entry.deleted) return finish(view, { exit_code: null, error: `Sandbox ${view.sandbox_id} was deleted` });
    view.status = 'running';
    view.started_at = Date.now() / 1000;
    const script = request.login_shell ? loginShellCommand(view.command) : view.command;
    // A command that passes the cap is killed there, not left running to its timeout (`yes`, `cat /dev/zero`):
    // the provider keeps one byte more than the cap, so reaching it means there was more.
    const cap = this.#maxOutputBytes;
    const overCap = new AbortController();
    const seen = { stdout: new CappedBuffer(cap), stderr: new CappedBuffer(cap) };
    try {
      const result = await sandbox.exec(script, {
        // Orchard's working directory is /workspace, where --repo puts the checkout; an image's sandbox has its own.
        cwd: request.cwd ?? sandbox.workdir,
        ...(request.env ? { env: request.env } : {}),
        timeoutMs: request.timeout_seconds * 1000,
        maxOutputBytes: cap + 1,
        signal: AbortSignal.any([entry.abort.signal, overCap.signal]),
        onOutput: (stream, chunk) => {
          seen[stream].push(Buffer.from(chunk));
          if (seen[stream].truncated) overCap.abort();
        },
      });
      view.stdout = clip(result.stdout, cap);
      view.stderr = clip(request.login_shell ? stripNoTtyNoise(result.stderr) : result.stderr, cap);
      view.truncated = result.truncated || seen.stdout.truncated || seen.stderr.truncated;
      if (result.timedOut) {
        view.stderr += `\nCommand timed out after ${request.timeout_seconds}s and was killed`;
        return finish(view, { exit_code: 124, error: `Command timed out after ${request.timeout_seconds}s` });
      }
      return finish(view, { exit_code: orchardExitCode(result), error: result.exitCode === null ? 'Command was killed' : null });
    } catch (error) {
      if (overCap.signal.aborted && !entry.deleted) {
        view.stdout = seen.stdout.toString();
        view.stderr = seen.stderr.toString();
        view.truncated = true;
        return finish(view, {
          exit_code: null,
          error: `Output passed the server's cap of ${cap} bytes per stream; the command was killed`,
        });
      }
      const message = WinnowerError.isInstance(error) ? `${error.code}: ${error.message}` : String(error);
      return finish(view, { exit_code: null, error: entry.deleted ? `Sandbox ${view.sandbox_id} was deleted` : message });
    }
  }
}

/**
 * Orchard's agent answers `returncode`: −N when a signal killed the command's process
 * (docs/design/02-orchard-real-behaviour.md#9), which Orchard's SDK documents and its scripts check;
 * winnower's own API keeps the shell's 128 + N.
 */
export function orchardExitCode(result: Pick<ExecResult, 'exitCode' | 'signal'>): number | null {
  return result.signal ? -result.signal : result.exitCode;
}

/** At most `cap` bytes of `text` (a provider that cannot stream returns one byte more than asked). */
function clip(text: string, cap: number): string {
  const bytes = Buffer.from(text);
  return bytes.length <= cap ? text : bytes.subarray(0, cap).toString('utf8');
}

function finish(view: JobView, result: { exit_code: number | null; error: string | null }): void {
  view.exit_code = result.exit_code;
  view.error = result.error;
  view.status = result.exit_code === 0 ? 'succeeded' : 'failed';
  view.completed_at = Date.now() / 1000;
}
