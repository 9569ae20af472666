/**
 * Workspaces of local sandboxes, each in a small "holder" process's own user and mount namespaces
 * (so no mount shows in the host's mount table, and all of them go when the holder exits):
 * - a size-capped tmpfs for the workspace's writes: the upper layer of a kernel overlayfs over the
 *   shared, immutable base snapshot ('overlay'), or a plain copy of the snapshot where overlay is
 *   unavailable ('copy', the tmpfs then also holds the copy);
 * - a size-capped tmpfs for the sandbox's /tmp and /var/tmp, and the home folder a checkout
 *   sandbox's HOME is bound to (home.ts), kept across its execs.
 * The kernel enforces both caps (ENOSPC); nothing the sandbox writes reaches the host's disk. The
 * pages are memory, charged to the cgroup of the sandbox process that writes them, so the sandbox's
 * memory limit bounds them too. A watchdog on a disk folder, tried while choosing this design, let
 * a writer get 130 MB past a 20 MB cap at a 100 ms poll in one trial run; a loop-mounted filesystem
 * needs root and loop devices.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { chmod, chown, lstat, rm, statfs } from 'node:fs/promises';
import { join } from 'node:path';
import { makeDirs } from '../../reachable.js';
import { HOST_PATH, runHostCommand, tail } from '../../host-command.js';

export type WorkspaceMode = 'overlay' | 'copy';

export interface Owner {
  uid: number;
  gid: number;
}

/** The two capped areas of a sandbox. */
export type DiskArea = 'workspace' | 'tmp';

export interface DiskCaps {
  /** What the workspace may grow by (overlay's upper layer; a copy gets the snapshot's size on top). */
  workspaceBytes: number;
  /** /tmp, /var/tmp and a checkout sandbox's home together. */
  tmpBytes: number;
}

export interface DiskUsage {
  area: DiskArea;
  usedBytes: number;
  sizeBytes: number;
  /** No byte left: a write there fails with ENOSPC. */
  full: boolean;
}

export interface Workspace {
  readonly mode: WorkspaceMode;
  /** Host path to bind at the sandbox's workdir (seen through the holder's mount namespace). */
  readonly hostPath: string;
  /** Host paths bound at /tmp and /var/tmp (in the holder's mount namespace too). */
  readonly tmpDir: string;
  readonly varTmpDir: string;
  /** Host path of the sandbox's own home folder, on the same capped tmpfs (bound at HOME over a checkout: home.ts). */
  readonly homeDir: string;
  /** The holder whose namespaces each exec enters. */
  readonly holderPid: number | undefined;
  /** The holder has a network namespace of its own (a networked sandbox: network.ts), which each exec enters too. */
  readonly ownNetwork: boolean;
  readonly caps: DiskCaps;
  /** False once the holder has died: the workspace is gone. */
  alive(): boolean;
  /** How full each capped area is (statfs through the holder's /proc/<pid>/root). */
  usage(): Promise<DiskUsage[]>;
  /** Stops the holder (the mounts go with it). The folders are removed by removeTree. */
  close(): Promise<void>;
  /** SIGKILLs the holder at once (process exit); close() still reaps it. */
  killNow(): void;
}

export interface WorkspaceTools {
  unshare: string;
  /** Owner of the files (the unprivileged sandbox user); undefined: the current user. */
  owner: Owner | undefined;
  /** Give the holder a network namespace of its own too, for network.ts to connect (default: none, the host's). */
  network?: boolean;
}

/** Caps of a workspace nobody writes to (the start-up probe). */
const PROBE_CAPS: DiskCaps = { workspaceBytes: 1024 * 1024, tmpBytes: 1024 * 1024 };

// Runs inside `unshare --user --map-root-user --mount`: mounts the capped tmpfs for /tmp and
// /var/tmp, then the workspace (a tmpfs for overlay's upper and work dirs plus the overlay, or a
// tmpfs holding a copy of the snapshot, sized for the copy plus the cap), says so, then waits for
// stdin's EOF (the provider closing it, or this process dying) and exits, which releases the mounts.
// $1 mode, $2 lower, $3 layers, $4 workspace, $5 scratch, $6 workspace bytes, $7 scratch bytes.
// A fork (WNW_SEED set: a snapshot's copy of /tmp, /var/tmp and home) starts its scratch from that copy.
const HOLDER_SCRIPT = [
  'set -e',
  'mount -t tmpfs -o "size=$7,mode=0755" tmpfs "$5"',
  'if [ -n "$WNW_SEED" ]; then cp -a -- "$WNW_SEED/." "$5/"; else',
  '  mkdir -m 1777 "$5/tmp" "$5/var-tmp"',
  '  mkdir -m 0700 "$5/home"',
  'fi',
  'if [ "$1" = overlay ]; then',
  '  mount -t tmpfs -o "size=$6,mode=0755" tmpfs "$3"',
  '  mkdir "$3/upper" "$3/work"',
  // userxattr (Linux 5.11+, tmpfs keeps user xattrs from 6.6) lets overlay mark a folder opaque in
  // a user namespace: without it, re-making a removed folder of the snapshot fails with EIO
  // (docs/design/04-local-sandbox.md#11). Older kernels refuse the option and mount without it.
  '  mount -t overlay overlay -o "lowerdir=$2,upperdir=$3/upper,workdir=$3/work,userxattr" "$4" 2>/dev/null ||',
  '    mount -t overlay overlay -o "lowerdir=$2,upperdir=$3/upper,workdir=$3/work" "$4"',
  'else',
  // Room for the copy (its block usage, an eighth more for page rounding), then exactly what the
  // copy took plus the cap.
  '  base=$(du -s -B1 -- "$2" | cut -f1)',
  '  mount -t tmpfs -o "size=$((base + base / 8 + $6)),mode=0755" tmpfs "$4"',
  '  cp -a -- "$2/." "$4/"',
  '  set -- "$@" $(stat -f -c "%S %b %f" -- "$4")',
  '  mount -t tmpfs -o "remount,size=$(( $8 * ($9 - ${10}) + $6 ))" tmpfs "$4"',
  'fi',
  'echo ready',
  'read -r _ || true',
].join('\n');
const HOLDER_START_TIMEOUT_MS = 60_000;

/** Creates folders owned by the sandbox user (missing folders above them get `mode` too, whatever the umask). */
export async function makeOwnedDirs(dirs: string[], owner: Owner | undefined, mode = 0o755): Promise<void> {
  for (const dir of dirs) {
    makeDirs(dir, mode);
    await chmod(dir, mode);
    if (owner) await chown(dir, owner.uid, owner.gid);
  }
}

/**
 * Mounts an overlay of `lowerDir` at `<sandboxDir>/merged` inside a new holder process. A fork's
 * `lowerDir` is several layers, topmost first (`snapshot:…:base`, overlayfs's own syntax), and
 * `seedScratch` its snapshot's /tmp, /var/tmp and home.
 */
export function createOverlayWorkspace(
  sandboxDir: string,
  lowerDir: string,
  tools: WorkspaceTools,
  caps: DiskCaps = PROBE_CAPS,
  seedScratch?: string,
): Promise<Workspace> {
  return createHeldWorkspace('overlay', sandboxDir, lowerDir, tools, caps, seedScratch);
}

/** Copies the snapshot into a capped tmpfs (fallback when overlay mounts are not possible on this host). */
export function createCopyWorkspace(
  sandboxDir: string,
  lowerDir: string,
  tools: WorkspaceTools,
  caps: DiskCaps = PROBE_CAPS,
  seedScratch?: string,
): Promise<Workspace> {
  return createHeldWorkspace('copy', sandboxDir, lowerDir, tools, caps, seedScratch);
}

/**
 * Copies what a workspace wrote (overlay: its upper layer, whiteouts and opaque marks included, so
 * it can serve as a lower layer of forks; copy: the whole workspace) to `<dest>/layer`, and its
 * scratch to `<dest>/scratch`. Run in the holder's namespaces as the files' owner, so the sandbox's
 * symlinks resolve inside it and the host's files stay out of reach.
 */
export async function copyWorkspaceFiles(
  workspace: Workspace,
  dest: string,
  tools: { nsenter: string; owner: Owner | undefined },
  options: { timeoutMs: number; signal?: AbortSignal },
): Promise<void> {
  if (!(workspace instanceof HeldWorkspace) || !workspace.alive() || workspace.holderPid === undefined)
    throw new Error('the workspace is gone');
  const layer = workspace.mode === 'overlay' ? join(workspace.dirs.layers, 'upper') : workspace.dirs.workspace;
  await makeOwnedDirs([dest, join(dest, 'layer'), join(dest, 'scratch')], tools.owner, 0o700);
  const result = await runHostCommand(
    tools.nsenter,
    [
      `--target=${workspace.holderPid}`,
      '--user',
      '--mount',
      // The user namespace allows no setgroups (--map-root-user): keep our ids, which it maps to its root.
      '--preserve-credentials',
      '--',
      'sh',
      '-c',
      'cp -a -- "$1/." "$2/layer/" && cp -a -- "$3/." "$2/scratch/"',
      'snapshot',
      layer,
      dest,
      workspace.dirs.scratch,
    ],
    { uid: tools.owner?.uid, gid: tools.owner?.gid, timeoutMs: options.timeoutMs, signal: options.signal },
  );
  if (result.timedOut) throw new Error(`copying the workspace took longer than ${options.timeoutMs} ms`);
  if (result.code !== 0) throw new Error(`copying the workspace failed (exit ${result.code ?? result.signal}): ${tail(result.stderr)}`);
  // The layer is read by every fork's holder as a lower layer: readable by the owner only is enough.
  await chmod(dest, 0o711);
}

async function createHeldWorkspace(
  mode: WorkspaceMode,
  sandboxDir: string,
  lowerDir: string,
  tools: WorkspaceTools,
  caps: DiskCaps,
  seedScratch?: string,
): Promise<Workspace> {
  const [layers, workspace, scratch] = ['layers', mode === 'overlay' ? 'merged' : 'workspace', 'scratch'].map((name) =>
    join(sandboxDir, name),
  ) as [string, string, string];
  await makeOwnedDirs([layers, workspace, scratch], tools.owner);
  const args = [mode, lowerDir, layers, workspace, scratch, String(caps.workspaceBytes), String(caps.tmpBytes)];
  const holder = spawn(
    tools.unshare,
    [
      '--user',
      '--map-root-user',
      '--mount',
      ...(tools.network ? ['--net'] : []),
      '--propagation',
      'private',
      'sh',
      '-c',
      HOLDER_SCRIPT,
      'holder',
      ...args,
    ],
    {
      env: { PATH: HOST_PATH, ...(seedScratch ? { WNW_SEED: seedScratch } : {}) },
      uid: tools.owner?.uid,
      gid: tools.owner?.gid,
      stdio: ['pipe', 'pipe', 'pipe'],
    },
  );
  await waitReady(holder, mode);
  return new HeldWorkspace(mode, holder, { workspace, layers, scratch }, caps, tools.network === true);
}

class HeldWorkspace implements Workspace {
  readonly hostPath: string;
  readonly tmpDir: string;
  readonly varTmpDir: string;
  readonly homeDir: string;
  #exited: Promise<void>;
  #alive = true;

  constructor(
    readonly mode: WorkspaceMode,
    readonly holder: ChildProcess,
    readonly dirs: { workspace: string; layers: string; scratch: string },
    readonly caps: DiskCaps,
    readonly ownNetwork: boolean,
  ) {
    this.hostPath = dirs.workspace;
    this.tmpDir = join(dirs.scratch, 'tmp');
    this.varTmpDir = join(dirs.scratch, 'var-tmp');
    this.homeDir = join(dirs.scratch, 'home');
    this.#exited = new Promise<void>((resolve) => {
      if (holder.exitCode !== null || holder.signalCode !== null) resolve();
      holder.once('exit', () => resolve());
    }).then(() => {
      this.#alive = false;
    });
  }

  get holderPid(): number | undefined {
    return this.holder.pid;
  }

  alive(): boolean {
    return this.#alive;
  }

  async usage(): Promise<DiskUsage[]> {
    const areas: Array<[DiskArea, string]> = [
      ['workspace', this.mode === 'overlay' ? this.dirs.layers : this.dirs.workspace],
      ['tmp', this.dirs.scratch],
    ];
    return Promise.all(
      areas.map(async ([area, dir]) => {
        // The mounts exist only in the holder's mount namespace; its /proc root leads there.
        const stats = await statfs(`/proc/${this.holder.pid}/root${dir}`);
        return {
          area,
          usedBytes: (stats.blocks - stats.bfree) * stats.bsize,
          sizeBytes: stats.blocks * stats.bsize,
          full: stats.bavail === 0,
        };
      }),
    );
  }

  killNow(): void {
    if (this.#alive) this.holder.kill('SIGKILL');
  }

  async close(): Promise<void> {
    this.killNow();
    await this.#exited;
    for (const stream of this.holder.stdio) stream?.destroy();
  }
}

function waitReady(holder: ChildProcess, mode: WorkspaceMode): Promise<void> {
  return new Promise((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    const onStdout = (chunk: Buffer): void => {
      stdout += chunk.toString('utf8');
      if (!stdout.includes('ready\n')) return;
      cleanup();
      resolve();
    };
    const onStderr = (chunk: Buffer): void => {
      stderr += chunk.toString('utf8');
    };
    const fail = (message: string): void => {
      cleanup();
      holder.kill('SIGKILL');
      reject(new Error(`${message}${stderr ? `: ${tail(stderr)}` : ''}`));
    };
    const what = mode === 'overlay' ? 'overlay' : 'workspace copy';
    const onError = (error: Error): void => fail(`workspace holder could not start (${error.message})`);
    const onExit = (code: number | null, signal: NodeJS.Signals | null): void => fail(`${what} mount failed (exit ${code ?? signal})`);
    const timer = setTimeout(() => fail('workspace holder did not start in time'), HOLDER_START_TIMEOUT_MS);
    const cleanup = (): void => {
      clearTimeout(timer);
      holder.stdout!.off('data', onStdout);
      holder.off('error', onError);
      holder.off('exit', onExit);
    };
    holder.stdout!.on('data', onStdout);
    holder.stderr!.on('data', onStderr);
    holder.stdin!.on('error', () => undefined);
    holder.on('error', onError);
    holder.on('exit', onExit);
  });
}

/** Removes a sandbox or snapshot folder; overlay work dirs are left mode 000 (docs/design/04-local-sandbox.md#4). */
export async function removeTree(dir: string): Promise<void> {
  const workDir = join(dir, 'work', 'work');
  if ((await lstat(workDir).catch(() => undefined))?.isDirectory()) await chmod(workDir, 0o700).catch(() => undefined);
  try {
    await rm(dir, { recursive: true, force: true, maxRetries: 3 });
  } catch {
    // Folders the sandbox made unwritable (chmod 000) stop a non-root rm: open them up first.
    await runHostCommand('chmod', ['-R', 'u+rwX', '--', dir]);
    await rm(dir, { recursive: true, force: true, maxRetries: 3 });
  }
}
