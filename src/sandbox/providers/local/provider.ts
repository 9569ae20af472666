/**
 * The `local` sandbox provider, winnower's embedded default: bubblewrap sandboxes on this machine.
 * Each sandbox's workspace is a copy-on-write overlay over one immutable base snapshot per
 * (repository, commit); each sandbox is one hardened bwrap, run as an unprivileged uid inside the
 * sandbox's cgroups, whose pid 1 is a resident exec agent that forks each command (or, the
 * fallback, each exec is a fresh bwrap in its own pid namespace). Nothing happens until the first call.
 *
 * @example
 * const provider = createLocalProvider();
 * const sandbox = await provider.create({ repo: { path: '.', base_commit: 'HEAD' } });
 * try { console.log((await sandbox.exec('git status')).stdout); } finally { await sandbox.close(); }
 */
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { chmod, lstat, mkdir } from 'node:fs/promises';
import { isAbsolute, join, posix } from 'node:path';
import { z } from 'zod';
import { userField } from '../../../config-keys.js';
import { throwIfAborted, wnwError, WinnowerError } from '../../../errors.js';
import { BaseProvider, type TrackSandbox } from '../../base-provider.js';
import { onProcessExit } from '../../lifecycle.js';
import { patchPolicy, PatchSettingsSchema, type PatchPolicy, type PatchSettings } from '../../patch-policy.js';
import type { CallOptions, ForkOptions, Sandbox, SandboxProvider, SandboxSnapshot, SandboxSpec } from '../../types.js';
import { checkMounts } from '../../mounts.js';
import { describeBlocker, findBlocker, makeDirs, userLabel } from '../../reachable.js';
import { checkEnv } from './bwrap-args.js';
import { checkoutHome, hostPasswdHome, imageHome, type SandboxHome } from './home.js';
import { detectLocalHost, runOneOff, type LocalHost, type LocalHostOptions } from './host.js';
import type { SandboxCgroup, SandboxLimits } from './limits.js';
import { copyWorkspaceFiles, createCopyWorkspace, createOverlayWorkspace, removeTree, type DiskCaps, type Workspace } from './overlay.js';
import {
  checkImageSettings,
  DEFAULT_IMAGE_WORKDIR,
  describeImages,
  ImageSettingsSchema,
  LocalImages,
  type LocalImageSettings,
} from './image.js';
import { NETWORK_HELPERS, NETWORK_INSTALL_HINT, startSandboxNetwork, type NetworkTools, type SandboxNetwork } from './network.js';
import { LocalSandbox } from './sandbox.js';
import { DENIED_SYSCALLS, seccompProgram } from './seccomp.js';
import { SnapshotStore, type Snapshot } from './snapshot.js';
import { type LocalSnapshot, SnapshotRegistry, type LocalSnapshotSource } from './forks.js';
import { tail } from '../../host-command.js';

export interface LocalProviderLogger {
  info(message: string, details?: Record<string, unknown>): void;
  warn(message: string, details?: Record<string, unknown>): void;
}

export interface LocalProviderSettings extends LocalHostOptions, LocalImageSettings {
  /** Memory limit per sandbox when the spec gives none (MiB, default 4096). */
  defaultMemoryMb?: number;
  /** Process limit per sandbox when the spec gives none (default 1024). */
  defaultMaxProcesses?: number;
  /** CPU limit per sandbox when the spec gives none (cores; default none). */
  defaultCpu?: number;
  /**
   * How much a sandbox's workspace may grow, in MiB (default 2048). A capped tmpfs: its pages count
   * against the sandbox's memory limit, so the cap is at most half of that limit.
   */
  diskMb?: number;
  /** Size of a sandbox's /tmp and /var/tmp together, in MiB (default 1024); at most a quarter of the memory limit. */
  tmpMb?: number;
  /** Largest file read or listing returned, in bytes (default 64 MiB). */
  maxTransferBytes?: number;
  /** What a patch leaves out and its cap (src/sandbox/patch-policy.ts). */
  patch?: PatchSettings;
  /** Deadline for each git step (clone, fetch, checkout) of a base snapshot on the host (default 5 min). */
  cloneTimeoutMs?: number;
  /** Start-up report and warnings (default: warnings to stderr, no info). */
  logger?: LocalProviderLogger;
  /**
   * How commands run: 'agent' (default) starts one resident exec agent per sandbox (python3 inside
   * the sandbox; where it has none, or the agent cannot start, that sandbox falls back to 'launch');
   * 'launch' enters the sandbox afresh for every exec (a new bwrap each time; slower, no python3 needed).
   */
  exec?: 'agent' | 'launch';
  /** Snapshots held at once (default 64), their size together in MiB (default 8192), and per sandbox (default 16). */
  maxSnapshots?: number;
  maxSnapshotMb?: number;
  maxSnapshotsPerSandbox?: number;
}

const image = ImageSettingsSchema.shape;
/**
 * The settings as the config file may give them, for checking and for docs/configuration.md
 * (scripts/gen-config-docs.ts; descriptions in the config file's spelling). Keys it does not name
 * pass, as before it existed.
 */
export const LocalSettingsSchema = z.object({
  rootDir: z
    .string()
    .min(1)
    .optional()
    .describe(
      "Folder under which the provider keeps snapshots, workspaces and each sandbox's /tmp (default: the temp folder, else /tmp or /var/tmp); the sandbox user must be able to pass through every folder above it.",
    ),
  uid: z
    .number()
    .int()
    .nonnegative()
    .optional()
    .describe('Run as root: the unprivileged host uid sandboxes run as (default 65534; never 0).'),
  gid: z.number().int().nonnegative().optional().describe('Run as root: the host gid sandboxes run as (default: uid).'),
  innerUid: z.number().int().nonnegative().optional().describe('The uid commands see inside a sandbox (default 1000).'),
  innerGid: z.number().int().nonnegative().optional().describe('The gid commands see inside a sandbox (default: inner_uid).'),
  workspace: z
    .enum(['auto', 'overlay', 'copy'])
    .optional()
    .describe(
      'How a workspace sits on its base snapshot: `overlay` (copy-on-write; an error where the host cannot), `copy` (a plain copy), or `auto` (default: overlay where it works, else copy).',
    ),
  bwrapPath: z.string().min(1).optional().describe('The bubblewrap binary (default: bwrap on PATH).'),
  networkHelper: z
    .enum(['auto', ...NETWORK_HELPERS])
    .optional()
    .describe(
      "What connects a sandbox that asks for network to the outside, from its own network namespace (egress only): `pasta` (Debian's passt package), `slirp4netns`, or `auto` (default: the first of them installed).",
    ),
  maxTotalProcesses: z
    .number()
    .int()
    .positive()
    .optional()
    .describe("Processes and threads of all sandboxes together (default: half the host's pid_max)."),
  maxTotalMemoryMb: z
    .number()
    .int()
    .positive()
    .optional()
    .describe("Memory of all sandboxes together, in MiB (default: three quarters of the host's)."),
  defaultMemoryMb: z.number().positive().optional().describe('Memory limit of a sandbox whose spec sets none, in MiB (default 4096).'),
  defaultMaxProcesses: z.number().int().positive().optional().describe('Process limit of a sandbox whose spec sets none (default 1024).'),
  defaultCpu: z.number().positive().optional().describe('CPU limit of a sandbox whose spec sets none, in cores (default: none).'),
  diskMb: z
    .number()
    .positive()
    .optional()
    .describe(
      "How much a sandbox's workspace may grow, in MiB (default 2048); a tmpfs whose pages count against the sandbox's memory limit, so at most half of it.",
    ),
  tmpMb: z
    .number()
    .positive()
    .optional()
    .describe("Size of a sandbox's /tmp and /var/tmp together, in MiB (default 1024); at most a quarter of the memory limit."),
  maxTransferBytes: z.number().int().positive().optional().describe('Largest file read or listing returned (default 64 MiB).'),
  cloneTimeoutMs: z
    .number()
    .int()
    .positive()
    .optional()
    .describe('Deadline of each git step (clone, fetch, checkout) that builds a base snapshot on the host (default 300000).'),
  exec: z
    .enum(['agent', 'launch'])
    .optional()
    .describe(
      'How commands run: `agent` (default) keeps one exec agent (python3) resident in each sandbox, falling back to `launch` where it cannot start; `launch` starts a fresh bwrap for every command (slower, no python3 needed).',
    ),
  maxSnapshots: z
    .number()
    .int()
    .positive()
    .optional()
    .describe('Sandbox snapshots (the files forks start from) held at once (default 64).'),
  maxSnapshotMb: z
    .number()
    .positive()
    .optional()
    .describe('Size of all held snapshots together, in MiB, on the disk under root_dir (default 8192).'),
  maxSnapshotsPerSandbox: z.number().int().positive().optional().describe('Snapshots held at once of one sandbox (default 16).'),
  imageCacheDir: image.imageCacheDir.describe(
    'Where unpacked images are kept (default /var/cache/winnower/images as root, else ~/.cache/winnower/images).',
  ),
  imageWorkdir: image.imageWorkdir.describe('The repository folder inside images (default /testbed, as in SWE-bench images).'),
  condaEnv: image.condaEnv.describe('Conda environment activated for every command when the image has it (default testbed; false: none).'),
  pullTimeoutMs: image.pullTimeoutMs.describe('Deadline of the first pull and unpack of an image (default 30 minutes).'),
  registryTimeoutMs: image.registryTimeoutMs.describe(
    "How long a registry may take to answer for an image's manifest (default 2 minutes).",
  ),
  registryAuthFile: image.registryAuthFile.meta({
    description: "A containers auth.json with registry credentials (default: REGISTRY_AUTH_FILE, then skopeo's own search).",
    env: 'REGISTRY_AUTH_FILE',
  }),
  insecureRegistries: image.insecureRegistries.describe(
    'Registries reached over plain HTTP or unverified TLS, as host:port (loopback ones always are).',
  ),
  skopeoPath: image.skopeoPath.describe('The skopeo binary that pulls images (default: skopeo on PATH).'),
  umociPath: image.umociPath.describe('The umoci binary that unpacks them (default: umoci on PATH).'),
  patch: PatchSettingsSchema.optional().meta({
    description: "This provider's patch settings, key by key over sandbox.patch.",
    sameAs: 'sandbox.patch',
  }),
  // Start-up report and warnings (default: warnings to stderr); code only.
  logger: z
    .custom<LocalProviderLogger>((value) => typeof value === 'object' && value !== null && 'warn' in value)
    .optional()
    .meta({ codeOnly: true }),
});

/** Where a sandbox's python3 may be, relative to its root (the first that exists runs the agent). */
const AGENT_PYTHONS = ['usr/bin/python3', 'usr/local/bin/python3', 'bin/python3'];

const DEFAULT_WORKDIR = '/workspace';
/** Workspace growth and /tmp + /var/tmp caps when the settings give none (MiB). */
const DEFAULT_DISK_MB = 2048;
const DEFAULT_TMP_MB = 1024;
const DEFAULT_MAX_SNAPSHOTS = 64;
const DEFAULT_MAX_SNAPSHOT_MB = 8192;
const DEFAULT_MAX_SNAPSHOTS_PER_SANDBOX = 16;
const RESERVED_DIRS = ['/usr', '/etc', '/proc', '/dev', '/tmp', '/var/tmp', '/run', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'];

const stderrLogger: LocalProviderLogger = {
  info: () => undefined,
  warn: (message) => process.stderr.write(`winnower: warning: ${message}\n`),
};

interface Ready {
  host: LocalHost;
  snapshots: SnapshotStore;
  images: LocalImages;
  /** Snapshots of sandboxes, which forks start from (forks.ts). */
  forks: SnapshotRegistry;
}

/** What a sandbox is made from besides its files: a fork reuses its parent's. */
interface SandboxPlan {
  spec: SandboxSpec;
  limits: SandboxLimits;
  networkTools: NetworkTools | undefined;
  base: Awaited<ReturnType<LocalImages['base']>> | undefined;
  snapshot: Snapshot | undefined;
  workdir: string;
  home: SandboxHome;
}

/** Deadline of the copy a snapshot makes. */
const SNAPSHOT_TIMEOUT_MS = 600_000;

/** Creates the local provider; no I/O until the first describe() or create(). */
export function createLocalProvider(settings: LocalProviderSettings = {}): SandboxProvider {
  return new LocalProvider(settings);
}

class LocalProvider extends BaseProvider<LocalSandbox> {
  readonly name = 'local';
  readonly #settings: LocalProviderSettings;
  readonly #logger: LocalProviderLogger;
  readonly #patch: PatchPolicy;
  readonly #disk: DiskCaps;
  #ready: Promise<Ready> | undefined;
  /** Unregisters the exit cleanup of #start. */
  #forgetExit: (() => void) | undefined;

  constructor(settings: LocalProviderSettings) {
    super();
    this.#settings = settings;
    this.#logger = settings.logger ?? stderrLogger;
    this.#patch = patchPolicy(settings.patch);
    this.#disk = diskCaps(settings);
    checkImageSettings(settings);
    if (settings.exec !== undefined && settings.exec !== 'agent' && settings.exec !== 'launch') {
      throw wnwError('WNW_ERR_CFG_INVALID', `sandbox.settings.exec: must be 'agent' or 'launch' (got ${JSON.stringify(settings.exec)})`, {
        details: { field: 'sandbox.settings.exec' },
      });
    }
    for (const field of ['maxTotalProcesses', 'maxTotalMemoryMb'] as const) {
      const value = settings[field];
      if (value !== undefined && !(Number.isInteger(value) && value > 0)) {
        throw wnwError('WNW_ERR_CFG_INVALID', `sandbox.settings.${field}: must be a positive integer`, {
          details: { field: `sandbox.settings.${field}` },
        });
      }
    }
    const parsed = LocalSettingsSchema.safeParse(settings);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      // Named as the config file spells it (src/config-keys.ts renamed the keys on the way in).
      const field = `sandbox.settings.${userField(issue.path)}`;
      throw wnwError('WNW_ERR_CFG_INVALID', `${field}: ${issue.message}`, { details: { field } });
    }
  }

  async describe(): Promise<Record<string, unknown>> {
    this.assertOpen();
    const { host } = await this.#init();
    return { ...describeHost(host, this.#settings), images: await describeImages(this.#settings) };
  }

  protected async createSandbox(spec: SandboxSpec, options: CallOptions, track: TrackSandbox<LocalSandbox>): Promise<LocalSandbox> {
    const plan = await this.#plan(spec, options);
    const lower = plan.base?.image.rootfs ?? plan.snapshot!.treeDir;
    return this.#materialize(plan, { lowers: [lower] }, options, track);
  }

  /**
   * A new sandbox from a snapshot of one of this provider's sandboxes, with that sandbox's spec:
   * on the overlay its own empty upper layer over the snapshot's layers; in copy mode a copy of
   * the snapshot's workspace. Processes are not carried over.
   */
  async fork(snapshot: SandboxSnapshot, options: ForkOptions = {}): Promise<Sandbox> {
    const { forks, host } = await this.#init();
    if (!forks.owns(snapshot))
      throw wnwError(
        'WNW_ERR_INPUT_INVALID',
        `snapshot ${snapshot.id} is not one this local provider holds (released, or another provider's)`,
        {
          details: { field: 'snapshot' },
        },
      );
    if (snapshot.released)
      throw wnwError('WNW_ERR_INPUT_INVALID', `snapshot ${snapshot.id} was released`, { details: { field: 'snapshot' } });
    const source = snapshot as LocalSnapshot<SandboxPlan>;
    const plan = options.mounts ? this.#withMounts(source.plan, options.mounts, host) : source.plan;
    source.use();
    try {
      return await this.adopt((track) =>
        this.#materialize(plan, { lowers: source.layers, seed: source.scratch, from: source, base: source.base }, options, track),
      );
    } catch (error) {
      await source.unuse();
      throw error;
    }
  }

  /** A fork's plan with its own binds in place of its parent's, checked as create checks them. */
  #withMounts(plan: SandboxPlan, mounts: NonNullable<SandboxSpec['mounts']>, host: LocalHost): SandboxPlan {
    checkMountsReachable(mounts, host);
    checkMounts(mounts, plan.workdir);
    return { ...plan, spec: { ...plan.spec, mounts } };
  }

  /** Everything a sandbox of `spec` needs that does not depend on which files it starts from. */
  async #plan(spec: SandboxSpec, options: CallOptions): Promise<SandboxPlan> {
    throwIfAborted(options.signal);
    const limits = this.#checkSpec(spec);
    const { host, snapshots, images } = await this.#init();
    if (spec.mounts) checkMountsReachable(spec.mounts, host);
    const networkTools = spec.network === true ? networkToolsOf(host, this.#settings.networkHelper) : undefined;
    // An image holds its repository; otherwise a base snapshot of spec.repo is the lower layer.
    const base = spec.image ? await images.base(spec.image, spec.workdir, options.signal) : undefined;
    const snapshot = base ? undefined : await snapshots.get(spec.repo!, options.signal);
    const workdir = base?.workdir ?? repoWorkdir(spec);
    if (base && spec.mounts) checkMounts(spec.mounts, workdir);
    const uid = spec.asRoot ? 0 : host.innerUid;
    const home = base ? imageHome(uid, base.envHome, base.passwdHomes[uid]) : checkoutHome(uid, await hostPasswdHome(uid), workdir);
    // Given to git inside the image as is (a checkout's is resolved to its SHA first): no option, no odd characters.
    const named = base ? spec.repo?.base_commit : undefined;
    if (named !== undefined && !/^[A-Za-z0-9][A-Za-z0-9._/^~-]*$/.test(named)) {
      throw wnwError('WNW_ERR_INPUT_INVALID', `spec.repo.base_commit: ${JSON.stringify(named)} is not a commit or branch name`, {
        details: { field: 'repo.base_commit' },
      });
    }
    return { spec, limits, networkTools, base, snapshot, workdir, home };
  }

  /** Builds the sandbox of `plan` over `files.lowers` (topmost first), its scratch seeded from `files.seed`. */
  async #materialize(
    plan: SandboxPlan,
    files: { lowers: string[]; seed?: string; from?: LocalSnapshot<SandboxPlan>; base?: string | undefined },
    options: CallOptions,
    track: TrackSandbox<LocalSandbox>,
  ): Promise<LocalSandbox> {
    const { spec, limits, networkTools, base, snapshot, workdir, home } = plan;
    const { host, forks } = await this.#init();
    throwIfAborted(options.signal);
    this.assertOpen();
    const id = `local-${randomBytes(6).toString('hex')}`;
    const dir = join(host.rootDir, 'sandboxes', id);
    let cgroup: SandboxCgroup | undefined;
    let workspace: Workspace | undefined;
    let network: SandboxNetwork | undefined;
    let sandbox: LocalSandbox | undefined;
    try {
      await mkdir(dir);
      await chmod(dir, 0o711);
      cgroup = await host.cgroups.createSandboxGroup(id, limits);
      const tools = { unshare: host.unshare, owner: host.owner, network: networkTools !== undefined };
      const caps = capsWithin(this.#disk, limits);
      workspace =
        host.workspaceMode === 'overlay'
          ? await createOverlayWorkspace(dir, files.lowers.join(':'), tools, caps, files.seed)
          : await createCopyWorkspace(dir, files.lowers[0]!, tools, caps, files.seed);
      if (networkTools) network = await startSandboxNetwork(workspace.holderPid!, networkTools, options.signal);
      const held = workspace;
      // What a snapshot of this sandbox stacks its copy on (copy mode: the copy is the whole workspace).
      const lowers = host.workspaceMode === 'overlay' ? files.lowers : [];
      sandbox = new LocalSandbox({
        id,
        host,
        spec,
        workdir,
        dir,
        workspace,
        ...(network ? { network } : {}),
        cgroup,
        limits,
        // An image's base is its repository's HEAD, or the commit the request names.
        baseCommit: files.base ?? snapshot?.commit ?? spec.repo?.base_commit ?? base?.baseCommit,
        ...(base ? { image: { env: base.env, shell: base.shell } } : {}),
        home,
        maxTransferBytes: this.#settings.maxTransferBytes ?? 64 * 1024 * 1024,
        ...(this.#settings.exec === 'launch' ? {} : await findAgentTools(base?.image.rootfs ?? '/')),
        patch: this.#patch,
        takeSnapshot: (self, callOptions) =>
          this.#snapshot(forks, host, held, { sandboxId: self.id, plan, lowers, from: files.from, base: self.diffBase }, callOptions),
        ...(files.from ? { afterClose: () => files.from!.unuse() } : {}),
        onClosed: this.untrack,
      });
      track(sandbox);
      // Closed meanwhile: stop before starting its agent (the base closes the sandbox).
      this.assertOpen();
      sandbox.startAgent((error) => {
        this.#logger.warn(
          `sandbox ${id}: the resident exec agent did not start, so each exec enters the sandbox afresh (slower): ${error.message}`,
        );
      });
      // A copy has new inode numbers and times: refresh its index once, not on every git call.
      if (workspace.mode === 'copy') await sandbox.exec('git update-index -q --refresh', { timeoutMs: 600_000 });
      return sandbox;
    } catch (error) {
      // Once tracked, the base closes the sandbox, which releases all of the below.
      if (!sandbox) {
        await network?.close().catch(() => undefined);
        await workspace?.close().catch(() => undefined);
        await cgroup?.remove().catch(() => undefined);
        await removeTree(dir).catch(() => undefined);
      }
      if (WinnowerError.isInstance(error)) throw error;
      throw wnwError('WNW_ERR_SBX_CREATE', `local sandbox could not be created: ${(error as Error).message}`, { cause: error });
    }
  }

  /** Copies a sandbox's files into a new snapshot, within the caps. */
  async #snapshot(
    forks: SnapshotRegistry,
    host: LocalHost,
    workspace: Workspace,
    source: LocalSnapshotSource<SandboxPlan>,
    options: CallOptions,
  ): Promise<SandboxSnapshot> {
    this.assertOpen();
    const snapshot = forks.reserve(source);
    try {
      await copyWorkspaceFiles(workspace, snapshot.dir, host, {
        timeoutMs: SNAPSHOT_TIMEOUT_MS,
        ...(options.signal ? { signal: options.signal } : {}),
      });
      await forks.admit(snapshot as LocalSnapshot<unknown>);
      return snapshot;
    } catch (error) {
      await snapshot.remove();
      if (WinnowerError.isInstance(error)) throw error;
      throw wnwError('WNW_ERR_SBX_DISK', `sandbox ${source.sandboxId} could not be snapshotted: ${(error as Error).message}`, {
        cause: error,
      });
    }
  }

  protected async closeShared(): Promise<void> {
    if (!this.#ready) return;
    const ready = await this.#ready.catch(() => undefined);
    if (!ready) return;
    await ready.forks.close();
    await ready.snapshots.close();
    await ready.images.close();
    await ready.host.cgroups.close();
    await removeTree(ready.host.rootDir);
    this.#forgetExit?.();
  }

  #init(): Promise<Ready> {
    this.#ready ??= this.#start();
    this.#ready.catch(() => {
      this.#ready = undefined;
    });
    return this.#ready;
  }

  async #start(): Promise<Ready> {
    const host = await detectLocalHost(this.#settings).catch((error: unknown) => {
      if (WinnowerError.isInstance(error)) throw error;
      throw wnwError('WNW_ERR_SBX_UNAVAILABLE', `the local sandbox provider could not start: ${(error as Error).message}`, {
        cause: error,
      });
    });
    const snapshots = new SnapshotStore({
      rootDir: host.rootDir,
      owner: host.owner,
      cloneTimeoutMs: this.#settings.cloneTimeoutMs,
      refreshIndex: async (treeDir, signal) => {
        const result = await runOneOff(host, treeDir, 'git update-index -q --refresh >/dev/null 2>&1; exit 0', { signal });
        if (result.exitCode !== 0) throw new Error(`refreshing the snapshot's index failed: ${tail(result.stderrText)}`);
      },
    });
    // If the process exits without close() (a crash, process.exit), still kill what runs and
    // remove our folders; only synchronous work is possible here.
    this.#forgetExit = onProcessExit(() => {
      for (const sandbox of this.openSandboxes) sandbox.killNow();
      try {
        rmSync(host.rootDir, { recursive: true, force: true });
      } catch {
        // best effort at exit
      }
      host.cgroups.removeSync();
    });
    const images = new LocalImages(host, this.#settings);
    const description = describeHost(host, this.#settings);
    this.#logger.info('local sandbox provider ready', description);
    if (host.rootDirNote) this.#logger.warn(host.rootDirNote);
    if (host.workspaceMode === 'copy') {
      this.#logger.warn(
        `local sandboxes copy the base snapshot instead of mounting an overlay (${host.overlayProblem}); creation is slower`,
      );
    }
    if (!seccompProgram())
      this.#logger.warn(
        `no seccomp filter for ${process.arch} (x64 and arm64 have one): sandboxes rely on namespaces, capabilities and --disable-userns alone`,
      );
    if (!host.hostBash)
      this.#logger.warn('bash is not installed on the host: descriptors this process inherited without close-on-exec reach every sandbox');
    const limits = host.cgroups.mechanisms();
    if (limits.memory !== 'cgroup v1' && limits.memory !== 'cgroup v2') {
      this.#logger.warn('no usable cgroup memory controller: sandbox memory is limited per process with prlimit --as only', { limits });
    }
    makeDirs(join(host.rootDir, 'forks'), 0o711);
    const forks = new SnapshotRegistry(join(host.rootDir, 'forks'), {
      count: this.#settings.maxSnapshots ?? DEFAULT_MAX_SNAPSHOTS,
      bytes: (this.#settings.maxSnapshotMb ?? DEFAULT_MAX_SNAPSHOT_MB) * 1024 * 1024,
      perSandbox: this.#settings.maxSnapshotsPerSandbox ?? DEFAULT_MAX_SNAPSHOTS_PER_SANDBOX,
    });
    return { host, snapshots, images, forks };
  }

  /** The spec's limits, once its fields are checked (the workdir of a repository too; an image's is checked with the image). */
  #checkSpec(spec: SandboxSpec): SandboxLimits {
    if (!spec.repo && !spec.image)
      throw wnwError('WNW_ERR_INPUT_INVALID', 'spec.repo or spec.image: the local provider needs a repository (path or url) or an image', {
        details: { field: 'repo' },
      });
    if (spec.env) checkEnv(spec.env, 'spec.env');
    // Before any clone or pull; an image's repository directory is known for sure only after its pull (create checks again).
    const workdir = spec.image ? (spec.workdir ?? this.#settings.imageWorkdir ?? DEFAULT_IMAGE_WORKDIR) : repoWorkdir(spec);
    if (spec.mounts) checkMounts(spec.mounts, workdir);
    const limits: SandboxLimits = {
      memoryMb: spec.memoryMb ?? this.#settings.defaultMemoryMb ?? 4096,
      maxProcesses: spec.maxProcesses ?? this.#settings.defaultMaxProcesses ?? 1024,
      cpu: spec.cpu ?? this.#settings.defaultCpu,
    };
    for (const [field, value] of Object.entries(limits)) {
      if (value !== undefined && !(Number.isFinite(value) && value > 0)) {
        throw wnwError('WNW_ERR_INPUT_INVALID', `spec.${field}: must be a positive number`, { details: { field } });
      }
    }
    return limits;
  }
}

/**
 * The python3 inside a sandbox over `root` ('/': the host's /usr), as seen from inside, and an
 * `env` to start it with no environment at all (without one, the agent restarts itself once to
 * shed bwrap's PWD); nothing when the sandbox has no python3.
 */
async function findAgentTools(root: string): Promise<{ agentPython?: string; agentEnv?: string }> {
  const exists = (path: string): Promise<boolean> =>
    lstat(join(root, path)).then(
      () => true,
      () => false,
    );
  for (const path of AGENT_PYTHONS) {
    if (!(await exists(path))) continue;
    const env = (await exists('usr/bin/env')) ? '/usr/bin/env' : (await exists('bin/env')) ? '/bin/env' : undefined;
    return { agentPython: `/${path}`, ...(env ? { agentEnv: env } : {}) };
  }
  return {};
}

/**
 * What a networked sandbox needs (network.ts), or WNW_ERR_SBX_UNAVAILABLE saying what to install:
 * never the host's network instead.
 */
function networkToolsOf(host: LocalHost, wanted: LocalProviderSettings['networkHelper']): NetworkTools {
  const { helper, ip } = host.network;
  if (!helper || !ip) {
    const missing = !helper ? (wanted && wanted !== 'auto' ? wanted : 'pasta or slirp4netns') : 'ip (iproute2)';
    throw wnwError(
      'WNW_ERR_SBX_UNAVAILABLE',
      `spec.network: a local sandbox with network gets its own network namespace, which needs ${missing}; install it with: ${NETWORK_INSTALL_HINT} (or ask for no network)`,
      { details: { field: 'network', install: NETWORK_INSTALL_HINT } },
    );
  }
  return { helper, ip, nsenter: host.nsenter, setpriv: host.setpriv, owner: host.owner };
}

/** Where a repository's workspace appears (checked: absolute, outside the system folders). */
function repoWorkdir(spec: SandboxSpec): string {
  const workdir = posix.normalize(spec.workdir ?? DEFAULT_WORKDIR);
  if (!isAbsolute(workdir) || workdir === '/' || RESERVED_DIRS.some((dir) => workdir === dir || workdir.startsWith(`${dir}/`))) {
    throw wnwError('WNW_ERR_INPUT_INVALID', `spec.workdir: ${spec.workdir} must be an absolute path outside the system folders`, {
      details: { field: 'workdir' },
    });
  }
  return workdir;
}

/**
 * bwrap binds each mount as the sandbox's uid, which must pass through every folder above the
 * source: one it cannot pass is named here, with the fix, rather than bwrap's "Permission denied".
 */
function checkMountsReachable(mounts: NonNullable<SandboxSpec['mounts']>, host: LocalHost): void {
  const user = host.dropTo ?? { uid: process.getuid?.() ?? 0, gid: process.getgid?.() ?? 0 };
  mounts.forEach((mount, index) => {
    const blocker = findBlocker(mount.source, user);
    if (!blocker) return;
    const { where, fix } = describeBlocker(blocker);
    throw wnwError(
      'WNW_ERR_SBX_CREATE',
      `spec.mounts[${index}]: ${userLabel(user)} cannot reach ${mount.source}: it cannot pass through ${where}; run \`${fix}\`, or keep the file under folders every user can pass through`,
      {
        details: { field: `spec.mounts[${index}]`, folder: blocker.folder },
      },
    );
  });
}

/** The disk caps of every sandbox, from the settings (WNW_ERR_CFG_INVALID naming a bad one). */
function diskCaps(settings: LocalProviderSettings): DiskCaps {
  const mib = (field: 'diskMb' | 'tmpMb', fallback: number): number => {
    const value = settings[field] ?? fallback;
    if (!(Number.isFinite(value) && value > 0)) {
      throw wnwError('WNW_ERR_CFG_INVALID', `sandbox.settings.${field}: must be a positive number of MiB`, {
        details: { field: `sandbox.settings.${field}` },
      });
    }
    return Math.ceil(value * 1024 * 1024);
  };
  return { workspaceBytes: mib('diskMb', DEFAULT_DISK_MB), tmpBytes: mib('tmpMb', DEFAULT_TMP_MB) };
}

/**
 * The caps of one sandbox: tmpfs pages are charged to the sandbox's memory, so full disks must
 * leave its processes a quarter of the limit at least (else no command could start to clean up).
 */
function capsWithin(caps: DiskCaps, limits: SandboxLimits): DiskCaps {
  if (!limits.memoryMb) return caps;
  const memory = limits.memoryMb * 1024 * 1024;
  return {
    workspaceBytes: Math.min(caps.workspaceBytes, Math.floor(memory / 2)),
    tmpBytes: Math.min(caps.tmpBytes, Math.floor(memory / 4)),
  };
}

function describeHost(host: LocalHost, settings: LocalProviderSettings): Record<string, unknown> {
  const limits = host.cgroups.mechanisms();
  return {
    provider: 'local',
    isolation:
      'bubblewrap: own user, pid, mount, ipc, uts, cgroup and network namespaces; read-only /usr and /etc; private /tmp; no capabilities; cleared environment',
    bwrap: host.bwrap,
    exec:
      settings.exec === 'launch'
        ? 'fresh bwrap per exec, in its own pid namespace (a timeout kills the whole tree)'
        : "resident exec agent per sandbox (python3 as the sandbox's pid 1) forks each command in its own session; a timeout kills its process group, and when no other command runs every other process of the sandbox; without python3 in the sandbox: a fresh bwrap per exec",
    runsAs: { hostUid: host.hostUid, sandboxUid: host.innerUid, droppedFromRoot: host.dropTo !== undefined },
    network: host.network.helper
      ? `off unless the spec asks; then its own network namespace through ${host.network.helper.kind}, egress only: no port forwarded in, no host loopback, no link-local (169.254.0.0/16) or host address${host.network.ip ? '' : ' (needs ip, from iproute2: not installed)'}`
      : `off; a spec asking for network is refused (install: ${NETWORK_INSTALL_HINT})`,
    workspace: host.workspaceMode,
    ...(host.overlayProblem ? { overlayProblem: host.overlayProblem } : {}),
    fork:
      host.workspaceMode === 'overlay'
        ? "copy-on-write: a snapshot copies the sandbox's writes (its overlay's upper layer) and its /tmp, /var/tmp and home to disk; a fork mounts that copy read-only under an empty upper layer of its own (no copy); running processes are not carried over"
        : 'copy: a snapshot copies the whole workspace and its /tmp, /var/tmp and home to disk; a fork copies it again; running processes are not carried over',
    snapshots: {
      max: settings.maxSnapshots ?? DEFAULT_MAX_SNAPSHOTS,
      maxMb: settings.maxSnapshotMb ?? DEFAULT_MAX_SNAPSHOT_MB,
      maxPerSandbox: settings.maxSnapshotsPerSandbox ?? DEFAULT_MAX_SNAPSHOTS_PER_SANDBOX,
    },
    limits: {
      ...limits,
      processes: limits.pids === 'prlimit' ? 'prlimit --nproc (per uid) + pid namespace' : `${limits.pids} + pid namespace`,
      disk: "capped tmpfs for the workspace's writes and for /tmp + /var/tmp (memory charged to the sandbox: at most 1/2 and 1/4 of its memory limit)",
      allSandboxes: host.cgroups.budget(),
    },
    syscalls: seccompProgram()
      ? `seccomp filter: ${DENIED_SYSCALLS.join(', ')} and user namespaces (clone/unshare CLONE_NEWUSER) refused, clone3 ENOSYS; --disable-userns`
      : `no seccomp filter on ${process.arch}; --disable-userns`,
    defaults: {
      memoryMb: settings.defaultMemoryMb ?? 4096,
      maxProcesses: settings.defaultMaxProcesses ?? 1024,
      cpu: settings.defaultCpu ?? null,
      diskMb: settings.diskMb ?? DEFAULT_DISK_MB,
      tmpMb: settings.tmpMb ?? DEFAULT_TMP_MB,
    },
    rootDir: host.rootDir,
  };
}
