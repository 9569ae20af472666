/**
 * The `docker` provider: one container per sandbox on a host with a Docker engine, driven through
 * the Engine API over its unix socket. No network unless the spec asks, memory/cpu/pids limits
 * from the spec, host folders bound from `spec.mounts`, the image's entrypoint replaced by `sleep`,
 * removal with force on close; snapshots are `docker commit`s that forks are created from
 * (snapshot.ts). Every command runs as an unprivileged user (`1000:1000` unless
 * `user` says otherwise; root only with `allowRoot`), with no capabilities and no-new-privileges;
 * one root exec at create gives it the workdir (docker-sandbox.ts). The API version is
 * negotiated with the engine on first use.
 * No I/O until first use; a missing socket is WNW_ERR_SBX_UNAVAILABLE.
 *
 * @example
 * const provider = createDockerProvider({ user: '1000:1000' }); // the default
 * const sandbox = await provider.create({ image: 'swebench/sweb.eval.x86_64.django__django-11095' });
 * try { await sandbox.exec('python -m pytest -q'); } finally { await sandbox.close(); }
 */
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { wnwError, WinnowerError } from '../../../errors.js';
import { BaseProvider, type TrackSandbox } from '../../base-provider.js';
import { snakeCase, userField } from '../../../config-keys.js';
import { patchPolicy, PatchSettingsSchema, SANDBOX_BASE_ENV, type PatchPolicy, type PatchSettings } from '../../patch-policy.js';
import type { CallOptions, ForkOptions, Sandbox, SandboxProvider, SandboxSnapshot, SandboxSpec } from '../../types.js';
import { DockerCreateResponse, DockerVersion } from './api-types.js';
import { DockerClient } from './client.js';
import { DockerSandbox } from './sandbox.js';
import { checkForkable, commitContainer, DockerSnapshot } from './snapshot.js';
import { checkMounts } from '../../mounts.js';

/** The sandbox user when none is set: numeric, as images built from a bare rootfs have no /etc/passwd. */
const DEFAULT_USER = '1000:1000';
/** The container's capabilities, used only by the root exec that gives the workdir to the user. */
const CAPABILITIES = ['CHOWN', 'DAC_OVERRIDE', 'FOWNER'] as const;

export interface DockerProviderSettings {
  /** Engine socket (default: DOCKER_HOST when it is unix://..., else /var/run/docker.sock). */
  socketPath?: string;
  /** Where the repository is inside the image (default /testbed, as in SWE-bench images). */
  workdir?: string;
  /** A fixed Engine API version, e.g. v1.41 (default: the newest both the engine and this client speak). */
  apiVersion?: string;
  /**
   * User every command runs as, `uid:gid` or a name the image knows (default `1000:1000`: numeric,
   * since minimal images have no /etc/passwd). Root (`0`, `root`, `0:…`) is refused without `allowRoot`.
   */
  user?: string;
  /** Lets `user` be root (default false): agent code as root is refused otherwise. */
  allowRoot?: boolean;
  /** Deadline of one API request that does not stream (default 60 000 ms). */
  requestTimeoutMs?: number;
  /** Pull a missing image before creating the container (default true). */
  pull?: boolean;
  /** Deadline of an image pull (default 900 000 ms). */
  pullTimeoutMs?: number;
  /** Largest file readFile returns, in bytes (default 64 MiB); a larger one, or a directory, is refused unread. */
  maxTransferBytes?: number;
  /** What a patch leaves out and its cap (src/sandbox/patch-policy.ts). */
  patch?: PatchSettings;
  /** Snapshot images held at once (default 64). */
  maxSnapshots?: number;
  /** What the held snapshots' containers wrote, together, in MiB (default 8192). */
  maxSnapshotMb?: number;
  /** Snapshots held at once of one sandbox (default 16). */
  maxSnapshotsPerSandbox?: number;
}

const DEFAULT_MAX_SNAPSHOTS = 64;
const DEFAULT_MAX_SNAPSHOT_MB = 8192;
const DEFAULT_MAX_SNAPSHOTS_PER_SANDBOX = 16;

// The descriptions are what docs/configuration.md shows (scripts/gen-config-docs.ts), in the config file's spelling.
export const DockerSettingsSchema = z.strictObject({
  socketPath: z.string().startsWith('/').optional().meta({
    description: "The engine's unix socket (default: DOCKER_HOST when it is unix://…, else /var/run/docker.sock).",
    env: 'DOCKER_HOST',
  }),
  workdir: z
    .string()
    .startsWith('/')
    .optional()
    .describe('Where the repository is inside the image (default /testbed, as in SWE-bench images).'),
  apiVersion: z
    .string()
    .regex(/^v?\d+\.\d+$/, 'like v1.43')
    .optional()
    .describe('A fixed Engine API version such as v1.43 (default: the newest that both the engine and winnower speak).'),
  user: z
    .string()
    .regex(/^[^\s:]+(:[^\s:]+)?$/, 'like 1000:1000 or a user name')
    .optional()
    .describe(
      'User every command runs as, `uid:gid` or a name the image knows (default `1000:1000`, numeric because minimal images have no /etc/passwd); root is refused unless allow_root is true.',
    ),
  allowRoot: z.boolean().optional().describe('Let `user` be root (default false: agent code never runs as root).'),
  requestTimeoutMs: z.number().int().positive().optional().describe('Deadline of one API request that does not stream (default 60000).'),
  pull: z.boolean().optional().describe('Pull a missing image before creating the container (default true).'),
  pullTimeoutMs: z.number().int().positive().optional().describe('Deadline of an image pull (default 900000).'),
  maxTransferBytes: z
    .number()
    .int()
    .positive()
    .optional()
    .describe('Largest file a read returns (default 64 MiB); a larger one, or a folder, is refused without reading it.'),
  maxSnapshots: z
    .number()
    .int()
    .positive()
    .optional()
    .describe('Snapshot images (docker commits forks start from) held at once (default 64).'),
  maxSnapshotMb: z
    .number()
    .positive()
    .optional()
    .describe("What the held snapshots' containers wrote, together, in MiB, on the engine's disk (default 8192)."),
  maxSnapshotsPerSandbox: z.number().int().positive().optional().describe('Snapshots held at once of one sandbox (default 16).'),
  patch: PatchSettingsSchema.optional().meta({
    description: "This provider's patch settings, key by key over sandbox.patch.",
    sameAs: 'sandbox.patch',
  }),
});

/**
 * Creates the provider; reads DOCKER_HOST for the default socket but contacts nothing yet.
 * Settings that are not valid throw WNW_ERR_CFG_INVALID naming the field.
 */
export function createDockerProvider(settings: DockerProviderSettings = {}): SandboxProvider {
  const parsed = DockerSettingsSchema.safeParse(settings);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    // Named as the config file spells it (src/config-keys.ts renamed the keys on the way in).
    const field = `sandbox.settings.${userField(issue?.path ?? []) || (issue && 'keys' in issue ? issue.keys.map(snakeCase).join(',') : '')}`;
    throw wnwError('WNW_ERR_CFG_INVALID', `invalid docker provider setting ${field}: ${issue?.message ?? 'invalid'}`, {
      details: { field, provider: 'docker' },
    });
  }
  if (settings.user !== undefined && isRootUser(settings.user) && settings.allowRoot !== true) {
    const field = 'sandbox.settings.user';
    throw wnwError(
      'WNW_ERR_CFG_INVALID',
      `invalid docker provider setting ${field}: ${settings.user} is root, and agent code never runs as root unless sandbox.settings.allowRoot is true`,
      {
        details: { field, provider: 'docker', user: settings.user },
      },
    );
  }
  return new DockerProvider(settings);
}

/** The socket from DOCKER_HOST (unix:// only), or the engine's default. */
function defaultSocket(): { socketPath: string } | { problem: string } {
  const host = process.env.DOCKER_HOST;
  if (!host) return { socketPath: '/var/run/docker.sock' };
  if (host.startsWith('unix://')) return { socketPath: host.slice('unix://'.length) };
  return {
    problem: `DOCKER_HOST=${host} is not a unix socket; the docker provider speaks to the engine over unix:// only (set socketPath)`,
  };
}

class DockerProvider extends BaseProvider<DockerSandbox> {
  readonly name = 'docker';
  readonly #settings: Required<
    Omit<DockerProviderSettings, 'socketPath' | 'patch' | 'apiVersion' | 'maxSnapshots' | 'maxSnapshotMb' | 'maxSnapshotsPerSandbox'>
  > & { apiVersion?: string };
  readonly #caps: { count: number; bytes: number; perSandbox: number };
  readonly #patch: PatchPolicy;
  readonly #socket: { socketPath: string } | { problem: string };
  #client: DockerClient | undefined;
  /** Snapshots whose image is still on the engine (snapshot.ts). */
  readonly #snapshots = new Set<DockerSnapshot>();

  constructor(settings: DockerProviderSettings) {
    super();
    this.#socket = settings.socketPath ? { socketPath: settings.socketPath } : defaultSocket();
    this.#patch = patchPolicy(settings.patch);
    this.#caps = {
      count: settings.maxSnapshots ?? DEFAULT_MAX_SNAPSHOTS,
      bytes: (settings.maxSnapshotMb ?? DEFAULT_MAX_SNAPSHOT_MB) * 1024 * 1024,
      perSandbox: settings.maxSnapshotsPerSandbox ?? DEFAULT_MAX_SNAPSHOTS_PER_SANDBOX,
    };
    this.#settings = {
      workdir: settings.workdir ?? '/testbed',
      ...(settings.apiVersion ? { apiVersion: settings.apiVersion } : {}),
      requestTimeoutMs: settings.requestTimeoutMs ?? 60_000,
      pull: settings.pull ?? true,
      pullTimeoutMs: settings.pullTimeoutMs ?? 900_000,
      maxTransferBytes: settings.maxTransferBytes ?? 64 * 1024 * 1024,
      user: settings.user ?? DEFAULT_USER,
      allowRoot: settings.allowRoot ?? false,
    };
  }

  get #api(): DockerClient {
    if ('problem' in this.#socket)
      throw wnwError('WNW_ERR_SBX_UNAVAILABLE', this.#socket.problem, { details: { DOCKER_HOST: process.env.DOCKER_HOST } });
    this.#client ??= new DockerClient({
      socketPath: this.#socket.socketPath,
      requestTimeoutMs: this.#settings.requestTimeoutMs,
      ...(this.#settings.apiVersion ? { apiVersion: this.#settings.apiVersion } : {}),
    });
    return this.#client;
  }

  async describe(): Promise<Record<string, unknown>> {
    let engine: string;
    let apiVersion = this.#settings.apiVersion ?? 'negotiated on first use';
    try {
      const version = await this.#api.json({ method: 'GET', path: '/version', unversioned: true, timeoutMs: 5_000 }, DockerVersion);
      const range = version.MinAPIVersion ? `${version.MinAPIVersion} to ${version.ApiVersion}` : version.ApiVersion;
      engine = `Docker ${version.Version} (API ${range}${version.Os ? `, ${version.Os}/${version.Arch ?? '?'}` : ''})`;
      apiVersion = await this.#api
        .apiVersion()
        .catch((error: unknown) => `none: ${error instanceof Error ? error.message : String(error)}`);
    } catch (error) {
      engine = `unavailable: ${error instanceof Error ? error.message : String(error)}`;
    }
    return {
      provider: this.name,
      isolation: 'one container per sandbox (Docker Engine)',
      socketPath: 'socketPath' in this.#socket ? this.#socket.socketPath : undefined,
      apiVersion,
      engine,
      workdir: this.#settings.workdir,
      user: this.#settings.user,
      capabilities: `none for commands (no-new-privileges); ${CAPABILITIES.join(', ')} for root, which runs only the ownership step at create`,
      network: 'none unless the spec asks',
      limits: 'memory, cpu and pids per container from the spec',
      fork: 'commit: a snapshot is `docker commit` of the container (its files, not its processes); a fork is a container created from that image (docs/sandboxes.md#snapshots-and-forks)',
    };
  }

  protected async createSandbox(spec: SandboxSpec, options: CallOptions, track: TrackSandbox<DockerSandbox>): Promise<DockerSandbox> {
    if (!spec.image) {
      throw wnwError(
        'WNW_ERR_SBX_UNSUPPORTED',
        'the docker provider runs container images: set spec.image (SWE-bench images keep the repository in /testbed)',
        {
          details: { field: 'image', provider: this.name },
        },
      );
    }
    const workdir = spec.workdir ?? this.#settings.workdir;
    return this.#start({ spec, image: spec.image, workdir, baseCommit: spec.repo?.base_commit, signal: options.signal }, track);
  }

  /** A container from the snapshot's image, with its parent's spec (the fork's own mounts in place of the parent's). */
  async fork(snapshot: SandboxSnapshot, options: ForkOptions = {}): Promise<Sandbox> {
    const from = checkForkable(snapshot, this.#snapshots);
    const { spec: parentSpec, workdir, base } = from.source;
    const { mounts: _parentMounts, ...rest } = parentSpec;
    const spec: SandboxSpec = options.mounts?.length ? { ...rest, mounts: options.mounts } : rest;
    from.use();
    // Exactly once, whether the fork closes later or fails to start (adopt closes a tracked one).
    let unused = false;
    const unuse = (): Promise<void> => {
      if (unused) return Promise.resolve();
      unused = true;
      return from.unuse();
    };
    try {
      return await this.adopt((track) =>
        this.#start(
          {
            spec,
            image: from.image,
            workdir,
            baseCommit: base,
            signal: options.signal,
            from,
            // A failed removal leaves the image for closeShared, which removes every image still held.
            onClosed: () => unuse().catch(() => undefined),
          },
          track,
        ),
      );
    } catch (error) {
      await unuse().catch(() => undefined);
      throw error;
    }
  }

  async #start(
    start: {
      spec: SandboxSpec;
      image: string;
      workdir: string;
      baseCommit: string | undefined;
      signal: AbortSignal | undefined;
      /** The snapshot a fork starts from. */
      from?: DockerSnapshot;
      onClosed?: () => Promise<void>;
    },
    track: TrackSandbox<DockerSandbox>,
  ): Promise<DockerSandbox> {
    const { spec, image, workdir, signal } = start;
    const api = this.#api;
    await api.ready();
    if (spec.mounts) checkBinds(spec.mounts, workdir);
    const id = await this.#createContainer(spec, image, workdir, signal);
    let tracked = false;
    try {
      await api.empty({
        method: 'POST',
        path: `/containers/${id}/start`,
        ok: [204, 304],
        signal,
        errors: { 404: { code: 'WNW_ERR_SBX_CREATE', message: `container ${id} vanished before it started` } },
      });
      const created: DockerSandbox = new DockerSandbox({
        client: api,
        id,
        workdir,
        user: this.#settings.user,
        allowRoot: this.#settings.allowRoot,
        maxTransferBytes: this.#settings.maxTransferBytes,
        patch: this.#patch,
        ...(start.baseCommit ? { baseCommit: start.baseCommit } : {}),
        takeSnapshot: (base, snapshotSignal) => this.#snapshot({ sandboxId: id, spec, workdir, base, from: start.from }, snapshotSignal),
        onClosed: async () => {
          this.untrack(created);
          await start.onClosed?.();
        },
      });
      track(created);
      tracked = true;
      await created.start(signal);
      return created;
    } catch (error) {
      // Once tracked, the base closes the sandbox (and with it the container).
      if (!tracked) {
        await api
          .empty({ method: 'DELETE', path: `/containers/${id}`, query: { force: true, v: true }, ok: [204, 404, 409] })
          .catch((removeError: unknown) => this.onCleanupError(error, removeError));
      }
      throw error;
    }
  }

  async #snapshot(source: DockerSnapshot['source'], signal: AbortSignal | undefined): Promise<DockerSnapshot> {
    this.assertOpen();
    const held = [...this.#snapshots];
    const refuse = (setting: string, what: string, cap: number): never => {
      throw wnwError('WNW_ERR_SBX_DISK', `${what}, its cap (sandbox.settings.${setting})`, {
        details: { field: `sandbox.settings.${setting}`, cap },
      });
    };
    if (held.length >= this.#caps.count) refuse('max_snapshots', `the docker provider holds ${held.length} snapshots`, this.#caps.count);
    const mine = held.filter((snapshot) => snapshot.sandboxId === source.sandboxId).length;
    if (mine >= this.#caps.perSandbox)
      refuse('max_snapshots_per_sandbox', `sandbox ${source.sandboxId} holds ${mine} snapshots`, this.#caps.perSandbox);
    const { id, image, bytes } = await commitContainer(this.#api, source.sandboxId, signal);
    const total = held.reduce((sum, snapshot) => sum + snapshot.bytes, bytes);
    if (total > this.#caps.bytes) {
      // Nothing is kept of a refused snapshot.
      await this.#api.empty({ method: 'DELETE', path: `/images/${encodeURIComponent(image)}`, query: { force: true }, ok: [200, 404] });
      refuse('max_snapshot_mb', `snapshots would hold ${total} bytes together`, this.#caps.bytes / (1024 * 1024));
    }
    const snapshot = new DockerSnapshot({
      client: this.#api,
      id,
      image,
      bytes,
      source,
      onRemoved: (removed) => this.#snapshots.delete(removed),
    });
    this.#snapshots.add(snapshot);
    return snapshot;
  }

  protected override onCleanupError(error: unknown, removeError: unknown): void {
    if (WinnowerError.isInstance(error))
      error.details.removeError = removeError instanceof Error ? removeError.message : String(removeError);
  }

  protected async closeShared(): Promise<void> {
    // Its sandboxes are closed by now, so no container holds a snapshot's image; the newest first,
    // since an image with children cannot be removed (each removal frees its parent's).
    const held = [...this.#snapshots];
    for (const snapshot of held) snapshot.markReleased();
    for (const snapshot of held.reverse()) await snapshot.remove().catch(() => undefined);
    await this.#client?.close();
  }

  async #createContainer(spec: SandboxSpec, image: string, workdir: string, signal: AbortSignal | undefined): Promise<string> {
    const network = spec.network === true;
    const body = {
      Image: image,
      // The image's entrypoint does not run (as with Orchard Env): the container only hosts execs.
      Entrypoint: ['sleep'],
      Cmd: [spec.lifetimeS ? String(Math.ceil(spec.lifetimeS)) : 'infinity'],
      WorkingDir: workdir,
      Env: Object.entries({ ...SANDBOX_BASE_ENV, ...homeFor(this.#settings.user), ...spec.env }).map(([key, value]) => `${key}=${value}`),
      // The container (its init and `sleep`) is root so that the one ownership exec keeps the
      // capabilities below; every command names the sandbox user (an exec as root in a container
      // of another user gets no capabilities at all on docker 20.10).
      User: '0:0',
      NetworkDisabled: !network,
      Labels: { 'winnower.sandbox': 'true', ...(spec.label ? { 'winnower.label': spec.label } : {}) },
      HostConfig: {
        NetworkMode: network ? 'bridge' : 'none',
        Init: true,
        // Removed by the engine when `sleep` ends (lifetime) as well as by close().
        AutoRemove: true,
        SecurityOpt: ['no-new-privileges'],
        // Only what `chown -R` as root needs; the sandbox user holds none of them (not root, and
        // no-new-privileges keeps setuid and file capabilities from granting any).
        CapDrop: ['ALL'],
        CapAdd: [...CAPABILITIES],
        ...(spec.memoryMb ? { Memory: Math.round(spec.memoryMb * 1024 * 1024), MemorySwap: Math.round(spec.memoryMb * 1024 * 1024) } : {}),
        ...(spec.cpu ? { NanoCpus: Math.round(spec.cpu * 1e9) } : {}),
        ...(spec.maxProcesses ? { PidsLimit: spec.maxProcesses } : {}),
        ...(spec.mounts?.length
          ? { Binds: spec.mounts.map((mount) => `${mount.source}:${mount.target}:${mount.readOnly === false ? 'rw' : 'ro'}`) }
          : {}),
      },
    };
    const name = `winnower-${randomBytes(6).toString('hex')}`;
    const create = (): Promise<{ Id: string }> =>
      this.#api.json(
        {
          method: 'POST',
          path: '/containers/create',
          query: { name },
          json: body,
          signal,
          errors: {
            400: { code: 'WNW_ERR_SBX_CREATE', message: `container for ${image} rejected`, details: { image } },
            404: { code: 'WNW_ERR_SBX_CREATE', message: `image ${image} not found`, details: { image, missingImage: true } },
            409: { code: 'WNW_ERR_SBX_CREATE', message: `container name ${name} taken`, details: { image } },
          },
        },
        DockerCreateResponse,
      );
    try {
      return (await create()).Id;
    } catch (error) {
      if (!this.#settings.pull || !WinnowerError.isInstance(error) || error.details.missingImage !== true) throw error;
    }
    await this.#pull(image, signal);
    return (await create()).Id;
  }

  /** POST /images/create; the answer streams JSON progress lines, one of which may carry `error`. */
  async #pull(image: string, signal: AbortSignal | undefined): Promise<void> {
    const lastPart = image.slice(image.lastIndexOf('/') + 1);
    const reference = lastPart.includes(':') || lastPart.includes('@') ? image : `${image}:latest`;
    const response = await this.#api.send({
      method: 'POST',
      path: '/images/create',
      query: { fromImage: reference },
      timeoutMs: this.#settings.pullTimeoutMs,
      signal,
      // The engine answers these before any progress line: no such manifest (404), or no registry (500).
      errors: {
        404: {
          code: 'WNW_ERR_SBX_CREATE',
          message: `image ${image} not found (not on this engine, and the registry has no such image)`,
          details: { image, missingImage: true },
        },
        500: { code: 'WNW_ERR_SBX_CREATE', message: `pulling image ${image} failed`, details: { image } },
      },
    });
    const text = await response.body.text();
    for (const line of text.split('\n')) {
      if (!line.trim()) continue;
      let progress: { error?: unknown };
      try {
        progress = JSON.parse(line) as { error?: unknown };
      } catch {
        continue;
      }
      if (typeof progress.error === 'string') {
        throw wnwError('WNW_ERR_SBX_CREATE', `pulling image ${image} failed: ${progress.error}`, { details: { image } });
      }
    }
  }
}

/**
 * HOME for the commands: /tmp (always writable) for a numeric user, who mostly has no passwd entry
 * and would get HOME=/; a named user keeps the home the image gives it, root its own.
 */
function homeFor(user: string): Record<string, string> {
  return /^\d+(:\d+)?$/.test(user) && !isRootUser(user) ? { HOME: '/tmp' } : {};
}

/** `0`, `root`, `0:0`, `root:staff`: the user part is uid 0. */
function isRootUser(user: string): boolean {
  const name = user.split(':')[0] ?? '';
  return name === 'root' || /^0+$/.test(name);
}

/**
 * spec.mounts as the local provider checks them (absolute paths, sources that exist, targets clear
 * of the system folders and the workspace), and without the `:` that Binds uses as separator.
 */
function checkBinds(mounts: NonNullable<SandboxSpec['mounts']>, workdir: string): void {
  checkMounts(mounts, workdir);
  mounts.forEach((mount, index) => {
    if (mount.source.includes(':') || mount.target.includes(':')) {
      const field = `spec.mounts[${index}]`;
      throw wnwError('WNW_ERR_INPUT_INVALID', `${field}: the docker provider cannot bind a path with ':' in it`, {
        details: { field, source: mount.source, target: mount.target },
      });
    }
  });
}
