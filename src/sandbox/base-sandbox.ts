/**
 * The lifecycle of a sandbox, written once: state checks, tracking in the process-wide registry,
 * idempotent close, and the output cap. Providers implement the protected hooks only.
 */
import { wnwError } from '../errors.js';
import { trackSandbox, untrackSandbox } from './lifecycle.js';
import { splitGitlinks } from './patch-gitlinks.js';
import type { CallOptions, ExecOptions, ExecResult, FileEntry, PatchApplied, Sandbox } from './types.js';

export const DEFAULT_EXEC_TIMEOUT_MS = 120_000;
export const DEFAULT_MAX_OUTPUT_BYTES = 1024 * 1024;

export abstract class BaseSandbox implements Sandbox {
  abstract readonly id: string;
  abstract readonly provider: string;
  abstract readonly workdir: string;
  #closing: Promise<void> | undefined;

  protected abstract doExec(
    command: string,
    options: Required<Pick<ExecOptions, 'timeoutMs' | 'maxOutputBytes'>> & ExecOptions,
  ): Promise<ExecResult>;
  protected abstract doWriteFile(path: string, content: Uint8Array, options: CallOptions): Promise<void>;
  protected abstract doReadFile(path: string, options: CallOptions): Promise<Uint8Array>;
  protected abstract doListFiles(path: string, options: CallOptions): Promise<FileEntry[]>;
  protected abstract doDiff(options: CallOptions): Promise<string>;
  protected abstract doApplyPatch(patch: string, options: CallOptions): Promise<void>;
  protected abstract doClose(): Promise<void>;

  /** Call once the sandbox exists, so shutdown closes it. */
  protected track(): void {
    trackSandbox(this);
  }

  get closed(): boolean {
    return this.#closing !== undefined;
  }

  protected assertOpen(): void {
    if (this.#closing) throw wnwError('WNW_ERR_SBX_CLOSED', `sandbox ${this.id} is closed`, { details: { sandbox: this.id } });
  }

  /** Whether doExec calls `onOutput` as output arrives; otherwise exec calls it once at the end. */
  protected readonly streamsOutput: boolean = false;

  /** Whether doExec feeds `input` to the command as it arrives. */
  protected readonly streamsInput: boolean = false;

  async exec(command: string, options: ExecOptions = {}): Promise<ExecResult> {
    this.assertOpen();
    if (options.input && !this.streamsInput) {
      throw wnwError('WNW_ERR_SBX_UNSUPPORTED', `the ${this.provider} provider cannot stream a command's stdin (an interactive session)`, {
        details: { sandbox: this.id },
      });
    }
    const result = await this.doExec(command, {
      ...options,
      timeoutMs: options.timeoutMs ?? DEFAULT_EXEC_TIMEOUT_MS,
      maxOutputBytes: options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES,
    });
    if (options.onOutput && !this.streamsOutput) {
      if (result.stdout) options.onOutput('stdout', Buffer.from(result.stdout));
      if (result.stderr) options.onOutput('stderr', Buffer.from(result.stderr));
    }
    return result;
  }

  async writeFile(path: string, content: string | Uint8Array, options: CallOptions = {}): Promise<void> {
    this.assertOpen();
    const bytes = typeof content === 'string' ? new TextEncoder().encode(content) : content;
    return this.doWriteFile(path, bytes, options);
  }

  async readFile(path: string, options: CallOptions = {}): Promise<Uint8Array> {
    this.assertOpen();
    return this.doReadFile(path, options);
  }

  async listFiles(path: string, options: CallOptions = {}): Promise<FileEntry[]> {
    this.assertOpen();
    return this.doListFiles(path, options);
  }

  async diff(options: CallOptions = {}): Promise<string> {
    this.assertOpen();
    return this.doDiff(options);
  }

  async applyPatch(patch: string, options: CallOptions = {}): Promise<PatchApplied> {
    this.assertOpen();
    // Every provider applies without the index, where a submodule section changes nothing but could fail on an overlay.
    const split = splitGitlinks(patch);
    if (split.patch.trim() !== '') await this.doApplyPatch(split.patch, options);
    return { dropped: split.dropped };
  }

  close(): Promise<void> {
    this.#closing ??= this.doClose().finally(() => untrackSandbox(this));
    return this.#closing;
  }
}

/** Collects a stream's bytes up to a cap; what comes after is counted and dropped. */
export class CappedBuffer {
  #chunks: Buffer[] = [];
  #size = 0;
  truncated = false;

  constructor(readonly maxBytes: number) {}

  /** Keeps what fits; returns the part kept (empty once the cap is reached). */
  push(chunk: Buffer): Buffer {
    const room = this.maxBytes - this.#size;
    if (room <= 0) {
      this.truncated ||= chunk.length > 0;
      return chunk.subarray(0, 0);
    }
    if (chunk.length > room) {
      const kept = chunk.subarray(0, room);
      this.#chunks.push(kept);
      this.#size += room;
      this.truncated = true;
      return kept;
    }
    this.#chunks.push(chunk);
    this.#size += chunk.length;
    return chunk;
  }

  toString(): string {
    return this.toBuffer().toString('utf8');
  }

  /** The collected bytes, for binary content. */
  toBuffer(): Buffer {
    return Buffer.concat(this.#chunks);
  }
}

/** Single-quotes a string for bash. */
export function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}
