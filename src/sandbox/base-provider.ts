/**
 * The provider lifecycle, written once for every provider: the set of open sandboxes, a close()
 * that closes them all (idempotent, concurrent callers share one pass), the refusal to create on a
 * closed provider, and the two races of a create: close() arriving while a sandbox is being built
 * (it is closed, never handed out) and a create that fails after its sandbox exists (it is closed
 * before the error goes up). What a provider owns beyond its sandboxes (clients, base snapshots,
 * host folders) it releases in closeShared().
 */
import { wnwError } from '../errors.js';
import { closeEach } from './lifecycle.js';
import type { CallOptions, Sandbox, SandboxProvider, SandboxSpec } from './types.js';

/** Hands a sandbox built by createSandbox to the provider's open set, as soon as it exists. */
export type TrackSandbox<S> = (sandbox: S) => void;

export abstract class BaseProvider<S extends Sandbox> implements SandboxProvider {
  abstract readonly name: string;
  readonly #open = new Set<S>();
  #closing: Promise<void> | undefined;

  abstract describe(): Promise<Record<string, unknown>>;

  /**
   * Builds one sandbox. Call `track(sandbox)` once the sandbox object exists (before any further
   * step that can fail), and pass `untrack` as its on-closed callback. Resources acquired before
   * the sandbox exists are this method's to release when it fails.
   */
  protected abstract createSandbox(spec: SandboxSpec, options: CallOptions, track: TrackSandbox<S>): Promise<S>;

  /** Releases what the provider holds besides its sandboxes; runs once, after they are closed. */
  protected abstract closeShared(): Promise<void>;

  /** A failed create closed its sandbox and that failed too: a provider may record it on the error. */
  protected onCleanupError(_error: unknown, _cleanupError: unknown): void {}

  /** Forgets a sandbox that closed itself; pass it as the sandbox's on-closed callback. */
  protected readonly untrack = (sandbox: S): void => {
    this.#open.delete(sandbox);
  };

  protected get openSandboxes(): ReadonlySet<S> {
    return this.#open;
  }

  protected assertOpen(): void {
    if (this.#closing) throw wnwError('WNW_ERR_SBX_CLOSED', `the ${this.name} provider is closed`);
  }

  async create(spec: SandboxSpec, options: CallOptions = {}): Promise<Sandbox> {
    return this.adopt((track) => this.createSandbox(spec, options, track));
  }

  /** Runs `build` with the races of a create handled (close meanwhile, failure after the sandbox exists); fork uses it too. */
  protected async adopt(build: (track: TrackSandbox<S>) => Promise<S>): Promise<S> {
    this.assertOpen();
    let made: S | undefined;
    try {
      const sandbox = await build((built) => {
        made = built;
        this.#open.add(built);
      });
      // close() ran meanwhile: the sandbox is closed below rather than handed out.
      if (this.#closing) throw wnwError('WNW_ERR_SBX_CLOSED', `the ${this.name} provider was closed while the sandbox was being created`);
      return sandbox;
    } catch (error) {
      if (made) await made.close().catch((cleanupError: unknown) => this.onCleanupError(error, cleanupError));
      throw error;
    }
  }

  close(): Promise<void> {
    this.#closing ??= this.#closeAll();
    return this.#closing;
  }

  async #closeAll(): Promise<void> {
    const failed = await closeEach(this.#open);
    await this.closeShared();
    if (failed) throw failed.reason;
  }
}
