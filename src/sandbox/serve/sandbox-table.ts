/**
 * The sandboxes of `winnower sandbox serve`, each backed by a sandbox of any winnower provider:
 * asynchronous create (answered `pending` at once), readiness waits, heartbeats and the TTL with
 * Orchard Env's semantics (docs/design/02-orchard-real-behaviour.md#10: a heartbeat enrols a ready
 * sandbox in heartbeat reaping; the TTL counts from creation whatever it sent; a sandbox that never
 * gets ready is removed after its create timeout plus a buffer), and delete.
 */
import { randomBytes } from 'node:crypto';
import { wnwError, WinnowerError } from '../../errors.js';
import type { RepoSource } from '../../types/task.js';
import type { Sandbox, SandboxProvider, SandboxSnapshot, SandboxSpec } from '../types.js';
import { NAMESPACE, parseCpu, parseMemoryMb, type CreateRequest, type SandboxView } from './orchard-shapes.js';

export interface SandboxTableOptions {
  provider: SandboxProvider;
  /**
   * A checkout of this repository at /workspace (on the host's /usr): what a sandbox gets when its
   * image cannot be had, or always with `repoMode: 'always'`.
   */
  repo?: RepoSource;
  /** With `repo`: `fallback` (default) tries the request's image first; `always` never pulls it. */
  repoMode?: 'fallback' | 'always';
  /** Commands run as root inside the sandbox's user namespace (no capabilities; default false). */
  asRoot?: boolean;
  /** Whether `block_network: false` is honoured (default false: every sandbox is offline). */
  allowNetwork?: boolean;
  /** Sandboxes open at once (default 32); past it, create answers 503 with Retry-After. */
  maxSandboxes?: number;
  /** Hard lifetime from creation, heartbeats or not (default 7200 s, Orchard's SANDBOX_TTL_HOURS). */
  ttlS?: number;
  /** A gap between heartbeats longer than this deletes an enrolled sandbox (default 180 s). */
  heartbeatTimeoutS?: number;
  /** How often the sweep runs (default 30 000 ms; 0: only `sweep()`). */
  cleanupIntervalMs?: number;
  /** A sandbox still pending this long past its create timeout is removed (default 600 s). */
  pendingBufferS?: number;
}

export interface SandboxEntry {
  readonly view: SandboxView;
  /** Set once ready. */
  sandbox: Sandbox | undefined;
  /** Aborts the provider's create, and every exec of the sandbox, on delete. */
  readonly abort: AbortController;
  /** Settles when the sandbox leaves `pending` (ready or failed). */
  readonly settled: Promise<void>;
  /** Execs run one at a time, in order of submission. */
  queue: Promise<void>;
  deleted: boolean;
  lastHeartbeat: number | undefined;
  readonly createTimeoutS: number;
  /** Snapshots taken through `POST /sandboxes/:id/snapshot`, held until released or the sandbox goes. */
  readonly snapshots: Map<string, SandboxSnapshot>;
}

/** Most forks one request may ask for. */
export const MAX_FORKS_PER_REQUEST = 16;

/** Errors that mean "this image cannot be had here", after which a configured repository stands in. */
const IMAGE_UNUSABLE = new Set([
  'WNW_ERR_SBX_IMAGE',
  'WNW_ERR_SBX_REGISTRY',
  'WNW_ERR_SBX_UNSUPPORTED',
  'WNW_ERR_SBX_UNAVAILABLE',
  'WNW_ERR_INPUT_INVALID',
]);

/** How many deleted ids are remembered for DELETE's answer. */
const GONE_KEPT = 10_000;

export type ReapReason = 'ttl' | 'heartbeat' | 'pending';

export class SandboxTable {
  readonly #options: Required<Omit<SandboxTableOptions, 'repo'>> & Pick<SandboxTableOptions, 'repo'>;
  readonly #entries = new Map<string, SandboxEntry>();
  /** Ids deleted or reaped, oldest first (a DELETE of one of them is still answered `deleted`). */
  readonly #gone = new Set<string>();
  readonly #sweeper: NodeJS.Timeout | undefined;
  /** Called with each sandbox the sweep removed (for the log). */
  onReap: ((id: string, reason: ReapReason) => void) | undefined;

  constructor(options: SandboxTableOptions) {
    this.#options = {
      provider: options.provider,
      allowNetwork: options.allowNetwork ?? false,
      maxSandboxes: options.maxSandboxes ?? 32,
      ttlS: options.ttlS ?? 7_200,
      heartbeatTimeoutS: options.heartbeatTimeoutS ?? 180,
      cleanupIntervalMs: options.cleanupIntervalMs ?? 30_000,
      pendingBufferS: options.pendingBufferS ?? 600,
      repoMode: options.repoMode ?? 'fallback',
      asRoot: options.asRoot ?? false,
      ...(options.repo ? { repo: options.repo } : {}),
    };
    if (this.#options.cleanupIntervalMs > 0) {
      this.#sweeper = setInterval(() => void this.sweep(), this.#options.cleanupIntervalMs);
      this.#sweeper.unref();
    }
  }

  get size(): number {
    return this.#entries.size;
  }

  get limits(): { maxSandboxes: number; ttlS: number; heartbeatTimeoutS: number; allowNetwork: boolean; repo: RepoSource | undefined } {
    const { maxSandboxes, ttlS, heartbeatTimeoutS, allowNetwork, repo } = this.#options;
    return { maxSandboxes, ttlS, heartbeatTimeoutS, allowNetwork, repo };
  }

  get(id: string): SandboxEntry | undefined {
    return this.#entries.get(id);
  }

  /** Registers the sandbox and starts the provider's create; answers at once (status `pending`). */
  create(request: CreateRequest): SandboxView {
    // 8 hex digits, as Orchard's ids (the first 8 characters of a uuid4).
    const id = request.sandbox_id ?? randomBytes(4).toString('hex');
    if (this.#entries.has(id)) throw wnwError('WNW_ERR_JOB_STATE', `Sandbox ${id} already exists`, { details: { sandbox: id } });
    if (this.#entries.size >= this.#options.maxSandboxes) {
      throw wnwError('WNW_ERR_SBX_UNAVAILABLE', `Server at capacity (${this.#options.maxSandboxes} sandboxes); retry later`, {
        details: { retry_after_s: 5 },
      });
    }
    if (!request.block_network && !this.#options.allowNetwork) {
      throw wnwError(
        'WNW_ERR_AUTH_INVALID',
        'Network access is disabled on this server: block_network must be true, or start `winnower sandbox serve` with --allow-network (config: sandbox.serve.allow_network: true) to permit block_network: false',
        { details: { field: 'block_network' } },
      );
    }
    const view: SandboxView = {
      sandbox_id: id,
      namespace: NAMESPACE,
      image: request.image,
      pod_name: `sandbox-${id}`,
      block_network: request.block_network,
      cpu: request.cpu ?? '',
      memory: request.memory ?? '',
      created_at: Date.now() / 1000,
      ready: false,
      status: 'pending',
      status_message: '',
      source: this.#options.repo && this.#options.repoMode === 'always' ? 'repo' : this.#options.repo ? null : 'image',
    };
    let settle = (): void => undefined;
    const entry: SandboxEntry = {
      view,
      sandbox: undefined,
      abort: new AbortController(),
      settled: new Promise<void>((resolve) => (settle = resolve)),
      queue: Promise.resolve(),
      deleted: false,
      lastHeartbeat: undefined,
      createTimeoutS: request.timeout,
      snapshots: new Map(),
    };
    this.#entries.set(id, entry);
    this.#gone.delete(id);
    void this.#start(entry, request, id).finally(settle);
    return view;
  }

  /** Waits until the sandbox leaves `pending` or `ms` pass; true when it did. */
  async waitSettled(entry: SandboxEntry, ms: number): Promise<boolean> {
    if (entry.view.status !== 'pending') return true;
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
    try {
      return await Promise.race([entry.settled.then(() => true as const), timedOut]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** A heartbeat: enrols a ready sandbox in heartbeat reaping (docs/design/02-orchard-real-behaviour.md#10). */
  heartbeat(entry: SandboxEntry): void {
    if (entry.view.status === 'ready') entry.lastHeartbeat = Date.now() / 1000;
  }

  /** Seconds left before the TTL removes the sandbox (an exec may not be given longer). */
  remainingLifetimeS(entry: SandboxEntry, now = Date.now() / 1000): number {
    return Math.max(0, this.#options.ttlS - (now - entry.view.created_at));
  }

  /** Whether `id` named a sandbox of this server that was deleted or reaped (recently: the last GONE_KEPT). */
  wasDeleted(id: string): boolean {
    return this.#gone.has(id);
  }

  /**
   * Removes the sandbox: aborts its create and its commands, closes it. False for an id this server
   * does not hold (never created, or already deleted: `wasDeleted` tells which).
   */
  async delete(id: string): Promise<boolean> {
    const entry = this.#entries.get(id);
    if (!entry) return false;
    this.#entries.delete(id);
    this.#gone.add(id);
    if (this.#gone.size > GONE_KEPT) this.#gone.delete(this.#gone.values().next().value!);
    entry.deleted = true;
    entry.abort.abort();
    await entry.sandbox?.close();
    // Forks made from its snapshots keep what they mount (forks.ts).
    await Promise.allSettled([...entry.snapshots.values()].map((snapshot) => snapshot.release()));
    entry.snapshots.clear();
    return true;
  }

  /**
   * Snapshots a ready sandbox between its commands (on its exec queue): held by this server until
   * released or the sandbox is deleted (docs/sandbox-serve.md#snapshots-and-forks-an-extension).
   */
  async snapshot(entry: SandboxEntry): Promise<SandboxSnapshot> {
    const sandbox = this.#forkable(entry);
    if (!sandbox.snapshot) throw unsupported(this.#options.provider.name);
    const take = entry.queue.then(() => sandbox.snapshot!({ signal: entry.abort.signal }));
    entry.queue = take.then(
      () => undefined,
      () => undefined,
    );
    const snapshot = await take;
    if (entry.deleted) {
      await snapshot.release();
      throw wnwError('WNW_ERR_SBX_CLOSED', `Sandbox ${entry.view.sandbox_id} was deleted`);
    }
    entry.snapshots.set(snapshot.id, snapshot);
    return snapshot;
  }

  async releaseSnapshot(entry: SandboxEntry, snapshotId: string): Promise<boolean> {
    const snapshot = entry.snapshots.get(snapshotId);
    if (!snapshot) return false;
    entry.snapshots.delete(snapshotId);
    await snapshot.release();
    return true;
  }

  /**
   * `count` new sandboxes from a snapshot of `entry` (the one named, or one taken now and released
   * once they exist), ready at once, each under this server's TTL and caps like a created one.
   */
  async fork(entry: SandboxEntry, count: number, snapshotId?: string): Promise<SandboxView[]> {
    const sandbox = this.#forkable(entry);
    const provider = this.#options.provider;
    if (!provider.fork || !sandbox.snapshot) throw unsupported(provider.name);
    if (this.#entries.size + count > this.#options.maxSandboxes) {
      throw wnwError(
        'WNW_ERR_SBX_UNAVAILABLE',
        `Server at capacity: ${count} forks would pass its ${this.#options.maxSandboxes} sandboxes (${this.#entries.size} held); retry later`,
        { details: { retry_after_s: 5 } },
      );
    }
    const named = snapshotId === undefined ? undefined : entry.snapshots.get(snapshotId);
    if (snapshotId !== undefined && !named)
      throw wnwError('WNW_ERR_INPUT_INVALID', `Snapshot ${snapshotId} of sandbox ${entry.view.sandbox_id} not found`, {
        details: { field: 'snapshot_id' },
      });
    const snapshot = named ?? (await this.snapshot(entry));
    try {
      const views: SandboxView[] = [];
      for (let index = 0; index < count; index += 1) views.push(await this.#adoptFork(entry, await provider.fork(snapshot)));
      return views;
    } finally {
      if (!named) await this.releaseSnapshot(entry, snapshot.id);
    }
  }

  #forkable(entry: SandboxEntry): Sandbox {
    if (!entry.sandbox || entry.deleted || entry.view.status !== 'ready')
      throw wnwError('WNW_ERR_JOB_STATE', `Sandbox ${entry.view.sandbox_id} is not ready`);
    return entry.sandbox;
  }

  /** A fork as a sandbox of this server: the parent's settings, a new id, ready. */
  async #adoptFork(parent: SandboxEntry, sandbox: Sandbox): Promise<SandboxView> {
    await sandbox.ready?.();
    const id = randomBytes(4).toString('hex');
    const view: SandboxView = {
      ...parent.view,
      sandbox_id: id,
      pod_name: `sandbox-${id}`,
      created_at: Date.now() / 1000,
      ready: true,
      status: 'ready',
      status_message: `forked from sandbox ${parent.view.sandbox_id}`,
    };
    const entry: SandboxEntry = {
      view,
      sandbox,
      abort: new AbortController(),
      settled: Promise.resolve(),
      queue: Promise.resolve(),
      deleted: false,
      lastHeartbeat: undefined,
      createTimeoutS: parent.createTimeoutS,
      snapshots: new Map(),
    };
    this.#entries.set(id, entry);
    return view;
  }

  /** One cleanup pass: TTL, heartbeat gaps of enrolled sandboxes, sandboxes that never got ready. */
  async sweep(now = Date.now() / 1000): Promise<{ id: string; reason: ReapReason }[]> {
    const reaped: { id: string; reason: ReapReason }[] = [];
    for (const [id, entry] of this.#entries) {
      const age = now - entry.view.created_at;
      let reason: ReapReason | undefined;
      if (age > this.#options.ttlS) reason = 'ttl';
      else if (entry.lastHeartbeat !== undefined && now - entry.lastHeartbeat > this.#options.heartbeatTimeoutS) reason = 'heartbeat';
      else if (entry.view.status === 'pending' && age > entry.createTimeoutS + this.#options.pendingBufferS) reason = 'pending';
      if (reason) reaped.push({ id, reason });
    }
    for (const { id, reason } of reaped) {
      await this.delete(id).catch(() => undefined);
      this.onReap?.(id, reason);
    }
    return reaped;
  }

  /** Deletes every sandbox and stops the sweep (the provider itself belongs to the caller). */
  async close(): Promise<void> {
    if (this.#sweeper) clearInterval(this.#sweeper);
    const results = await Promise.allSettled([...this.#entries.keys()].map((id) => this.delete(id)));
    const failed = results.find((result): result is PromiseRejectedResult => result.status === 'rejected');
    if (failed) throw failed.reason;
  }

  #spec(request: CreateRequest, id: string, source: 'image' | 'repo'): SandboxSpec {
    const repo = this.#options.repo;
    return {
      ...(source === 'repo' && repo ? { repo, workdir: '/workspace' } : { image: request.image }),
      network: !request.block_network && this.#options.allowNetwork,
      ...(this.#options.asRoot ? { asRoot: true } : {}),
      ...(request.cpu ? { cpu: parseCpu(request.cpu) } : {}),
      ...(request.memory ? { memoryMb: parseMemoryMb(request.memory) } : {}),
      lifetimeS: this.#options.ttlS,
      label: `sandbox serve ${id}`,
    };
  }

  /** The request's image; with a repository configured, its checkout instead when the image cannot be had (or always). */
  async #create(entry: SandboxEntry, request: CreateRequest, id: string): Promise<Sandbox> {
    const { provider, repo, repoMode } = this.#options;
    const options = { signal: entry.abort.signal };
    if (!repo || repoMode === 'always') return provider.create(this.#spec(request, id, repo ? 'repo' : 'image'), options);
    try {
      const sandbox = await provider.create(this.#spec(request, id, 'image'), options);
      entry.view.source = 'image';
      return sandbox;
    } catch (error) {
      if (!WinnowerError.isInstance(error) || !IMAGE_UNUSABLE.has(error.code) || entry.deleted) throw error;
      const sandbox = await provider.create(this.#spec(request, id, 'repo'), options);
      entry.view.source = 'repo';
      entry.view.status_message = `image ${request.image} could not be used (${error.code}: ${error.message.split('\n')[0]}); this sandbox is the --repo checkout at /workspace on the host's /usr`;
      return sandbox;
    }
  }

  async #start(entry: SandboxEntry, request: CreateRequest, id: string): Promise<void> {
    try {
      const sandbox = await this.#create(entry, request, id);
      // Ready as Orchard's clients read it: the first exec runs at once, not after the sandbox's own start-up.
      await sandbox.ready?.();
      if (entry.deleted) {
        await sandbox.close();
        return;
      }
      entry.sandbox = sandbox;
      entry.view.status = 'ready';
      entry.view.ready = true;
    } catch (error) {
      entry.view.status = 'failed';
      entry.view.status_message = WinnowerError.isInstance(error) ? `${error.code}: ${error.message}` : String(error);
    }
  }
}

function unsupported(provider: string): Error {
  return wnwError(
    'WNW_ERR_SBX_UNSUPPORTED',
    `The ${provider} provider cannot snapshot or fork sandboxes (the local, docker and orchard providers can)`,
  );
}
