/**
 * Snapshots of local sandboxes and what forks of them hold (docs/sandboxes.md#snapshots-and-forks).
 * A snapshot is a copy of what a sandbox wrote (overlay: its upper layer; copy mode: its whole
 * workspace) and of its /tmp, /var/tmp and home, in a folder under the provider's own. On the
 * overlay a fork mounts that copy read-only between its own empty upper layer and the layers below
 * (so a fork costs a mount, not a copy); a fork of a fork stacks one more. A snapshot's folder goes
 * once it is released and no fork, and no snapshot stacked on it, still mounts it.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { wnwError } from '../../../errors.js';
import { runHostCommand } from '../../host-command.js';
import type { SandboxSnapshot } from '../../types.js';
import { removeTree } from './overlay.js';

export interface SnapshotCaps {
  /** Snapshots held at once by the provider. */
  count: number;
  /** Their bytes together. */
  bytes: number;
  /** Snapshots held at once per sandbox. */
  perSandbox: number;
}

/** Everything a fork needs besides the files: the parent's creation plan, opaque here. */
export interface LocalSnapshotSource<Plan> {
  sandboxId: string;
  plan: Plan;
  /** The layers under the parent's own writes, topmost first (empty in copy mode: the layer is the whole workspace). */
  lowers: string[];
  /** The snapshot the parent was forked from, whose layer is among `lowers`. */
  from: LocalSnapshot<Plan> | undefined;
  /** The parent's diff base when it was taken (a tree after `markBase`), which its forks diff against. */
  base?: string | undefined;
}

export class LocalSnapshot<Plan> implements SandboxSnapshot {
  readonly id: string;
  readonly sandboxId: string;
  readonly plan: Plan;
  readonly dir: string;
  /** The diff base its forks get; undefined: the plan's base commit. */
  readonly base: string | undefined;
  bytes = 0;
  /** Layers a fork mounts under its upper, topmost first; in copy mode the one folder a fork copies. */
  readonly layers: string[];
  readonly #registry: SnapshotRegistry;
  readonly #from: LocalSnapshot<Plan> | undefined;
  #users = 0;
  #released = false;
  #removed: Promise<void> | undefined;

  constructor(registry: SnapshotRegistry, dir: string, id: string, source: LocalSnapshotSource<Plan>) {
    this.#registry = registry;
    this.id = id;
    this.dir = dir;
    this.sandboxId = source.sandboxId;
    this.plan = source.plan;
    this.base = source.base;
    this.layers = [join(dir, 'layer'), ...source.lowers];
    this.#from = source.from;
    this.#from?.use();
  }

  /** Its copy of /tmp, /var/tmp and home, which a fork's scratch starts from. */
  get scratch(): string {
    return join(this.dir, 'scratch');
  }

  get released(): boolean {
    return this.#released;
  }

  /** A fork (or a snapshot stacked on this one) mounts it. */
  use(): void {
    this.#users += 1;
  }

  /** A fork closed, or a snapshot stacked on this one was removed. */
  unuse(): Promise<void> {
    this.#users -= 1;
    return this.#removeWhenFree();
  }

  release(): Promise<void> {
    this.#released = true;
    return this.#removeWhenFree();
  }

  /** Removes the folder now, whoever uses it (a failed snapshot, or the provider closing). */
  remove(): Promise<void> {
    this.#removed ??= (async () => {
      this.#registry.forget(this);
      await removeTree(this.dir).catch(() => undefined);
      await this.#from?.unuse();
    })();
    return this.#removed;
  }

  #removeWhenFree(): Promise<void> {
    return this.#released && this.#users <= 0 ? this.remove() : Promise.resolve();
  }
}

/** The provider's snapshots: where they go, their caps, and which are held. */
export class SnapshotRegistry {
  readonly #root: string;
  readonly #caps: SnapshotCaps;
  readonly #held = new Set<LocalSnapshot<unknown>>();

  constructor(root: string, caps: SnapshotCaps) {
    this.#root = root;
    this.#caps = caps;
  }

  /** A new snapshot's folder and handle, once the caps allow one more for this sandbox. */
  reserve<Plan>(source: LocalSnapshotSource<Plan>): LocalSnapshot<Plan> {
    if (this.#held.size >= this.#caps.count)
      throw wnwError(
        'WNW_ERR_SBX_DISK',
        `the local provider holds ${this.#held.size} snapshots, its cap (sandbox.settings.max_snapshots)`,
        {
          details: { field: 'sandbox.settings.max_snapshots', cap: this.#caps.count },
        },
      );
    const mine = [...this.#held].filter((snapshot) => snapshot.sandboxId === source.sandboxId).length;
    if (mine >= this.#caps.perSandbox)
      throw wnwError(
        'WNW_ERR_SBX_DISK',
        `sandbox ${source.sandboxId} holds ${mine} snapshots, the cap per sandbox (sandbox.settings.max_snapshots_per_sandbox)`,
        { details: { field: 'sandbox.settings.max_snapshots_per_sandbox', cap: this.#caps.perSandbox } },
      );
    const id = `snap-${randomBytes(6).toString('hex')}`;
    const snapshot = new LocalSnapshot(this, join(this.#root, id), id, source);
    this.#held.add(snapshot as LocalSnapshot<unknown>);
    return snapshot;
  }

  /** Measures a snapshot just copied and refuses it (removed) when the bytes of all would pass the cap. */
  async admit(snapshot: LocalSnapshot<unknown>): Promise<void> {
    const du = await runHostCommand('du', ['-s', '-B1', '--', snapshot.dir], { timeoutMs: 120_000 });
    snapshot.bytes = Number.parseInt(du.stdout, 10) || 0;
    const total = [...this.#held].reduce((sum, held) => sum + held.bytes, 0);
    if (total > this.#caps.bytes) {
      await snapshot.remove();
      throw wnwError(
        'WNW_ERR_SBX_DISK',
        `a snapshot of ${snapshot.bytes} bytes would bring the local provider's snapshots to ${total} bytes, past its cap of ${this.#caps.bytes} (sandbox.settings.max_snapshot_mb)`,
        { details: { field: 'sandbox.settings.max_snapshot_mb', cap: this.#caps.bytes, bytes: snapshot.bytes } },
      );
    }
  }

  owns(snapshot: SandboxSnapshot): snapshot is LocalSnapshot<unknown> {
    return snapshot instanceof LocalSnapshot && this.#held.has(snapshot as LocalSnapshot<unknown>);
  }

  forget(snapshot: LocalSnapshot<unknown>): void {
    this.#held.delete(snapshot);
  }

  /** What is held now: count and bytes (describe, tests). */
  usage(): { count: number; bytes: number } {
    return { count: this.#held.size, bytes: [...this.#held].reduce((sum, held) => sum + held.bytes, 0) };
  }

  /** Removes every snapshot (the provider is closing; its sandboxes are closed already). */
  async close(): Promise<void> {
    await Promise.all([...this.#held].map((snapshot) => snapshot.remove()));
  }
}
