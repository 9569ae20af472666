/**
 * What the host offers the local provider, found once on first use: bubblewrap and helper
 * binaries, whether we are root (then sandboxes run as an unprivileged uid), cgroups, overlay
 * support. Also builds the launch chain every sandboxed process goes through.
 */
import { randomBytes } from 'node:crypto';
import { access, constants, mkdtemp, chmod, lstat, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { wnwError } from '../../../errors.js';
import { describeBlocker, findBlocker, firstReachable, makeDirs, userLabel, type PathUser } from '../../reachable.js';
import { baseSandboxEnv, bwrapArgs, detectRootLayout, type RootEntry } from './bwrap-args.js';
import { isAlive } from '../../../util/process-alive.js';
import { LocalCgroups, type SandboxLimits } from './limits.js';
import { createOverlayWorkspace, makeOwnedDirs, removeTree, type Owner, type WorkspaceMode } from './overlay.js';
import { pickNetworkHelper, type NetworkHelper, type NetworkHelperKind } from './network.js';
import { ARGS_FD, SandboxProcess, STATUS_FD, type SandboxProcessResult } from './process.js';
import { HOST_PATH, tail } from '../../host-command.js';

export const INSTALL_HINT = 'apt-get install -y bubblewrap';

export interface LocalHostOptions {
  rootDir?: string;
  uid?: number;
  gid?: number;
  innerUid?: number;
  innerGid?: number;
  workspace?: 'auto' | 'overlay' | 'copy';
  bwrapPath?: string;
  /** Processes and threads of all sandboxes together (default: half the host's pid_max). */
  maxTotalProcesses?: number;
  /** Memory of all sandboxes together, in MiB (default: three quarters of the host's). */
  maxTotalMemoryMb?: number;
  /** What connects a networked sandbox's own network namespace (network.ts): the first installed of pasta and slirp4netns, or the one named. */
  networkHelper?: 'auto' | NetworkHelperKind;
}

export interface LocalHost {
  bwrap: string;
  unshare: string;
  nsenter: string;
  setpriv: string | undefined;
  prlimit: string | undefined;
  /** The helper that connects networked sandboxes (undefined: none installed, so none can be made), and iproute2's ip. */
  network: { helper: NetworkHelper | undefined; ip: string | undefined };
  /** bash on the host, which closes inherited descriptors before each launch (undefined: none). */
  hostBash: string | undefined;
  /** Set when we are root: the uid/gid every sandboxed process drops to. */
  dropTo: Owner | undefined;
  /** Owner of snapshot and workspace files when we are root (undefined: ourselves). */
  owner: Owner | undefined;
  /** The uid the sandboxes run as on the host. */
  hostUid: number;
  innerUid: number;
  innerGid: number;
  rootLayout: RootEntry[];
  shell: string;
  /** The provider's own folder (mode 0711): snapshots/ and sandboxes/. */
  rootDir: string;
  /** Set when the temp folder was closed to the sandbox user and rootDir went elsewhere: why (a start-up warning). */
  rootDirNote: string | undefined;
  cgroups: LocalCgroups;
  workspaceMode: WorkspaceMode;
  /** Why overlay is not used, when it is not. */
  overlayProblem: string | undefined;
}

/** Finds everything the provider needs, or throws WNW_ERR_SBX_UNAVAILABLE saying what is missing. */
export async function detectLocalHost(options: LocalHostOptions): Promise<LocalHost> {
  if (process.platform !== 'linux')
    throw wnwError('WNW_ERR_SBX_UNAVAILABLE', `the local sandbox provider needs Linux (this is ${process.platform})`);
  const bwrap = options.bwrapPath ?? (await which('bwrap'));
  if (!bwrap || !(await isExecutable(bwrap))) {
    throw wnwError('WNW_ERR_SBX_UNAVAILABLE', `bubblewrap (bwrap) is not installed; install it with: ${INSTALL_HINT}`, {
      details: { install: INSTALL_HINT },
    });
  }
  const isRoot = process.getuid?.() === 0;
  const [unshare, nsenter, setpriv, prlimit, hostBash, pasta, slirp4netns, ip] = await Promise.all(
    ['unshare', 'nsenter', 'setpriv', 'prlimit', 'bash', 'pasta', 'slirp4netns', 'ip'].map(which),
  );
  if (!unshare || !nsenter || (isRoot && !setpriv)) {
    throw wnwError(
      'WNW_ERR_SBX_UNAVAILABLE',
      'util-linux tools (unshare, nsenter, setpriv) are missing; install them with: apt-get install -y util-linux',
    );
  }
  let dropTo: Owner | undefined;
  if (isRoot) {
    dropTo = { uid: options.uid ?? 65534, gid: options.gid ?? options.uid ?? 65534 };
    if (dropTo.uid === 0 || dropTo.gid === 0) {
      throw wnwError('WNW_ERR_CFG_INVALID', 'sandbox.local.uid/gid: sandboxes never run as root; pick an unprivileged uid', {
        details: { field: 'uid' },
      });
    }
  }
  const { parent, note } = rootParent(options.rootDir, dropTo ?? { uid: process.getuid?.() ?? 0, gid: process.getgid?.() ?? 0 });
  await removeStaleRootDirs(parent);
  const rootDir = await mkdtemp(join(parent, `winnower-local-${process.pid}-`));
  if (/[,:\\]/.test(rootDir))
    throw wnwError('WNW_ERR_CFG_INVALID', `rootDir ${rootDir}: overlay paths cannot contain ',', ':' or '\\'`, {
      details: { field: 'rootDir' },
    });
  await chmod(rootDir, 0o711);
  makeDirs(join(rootDir, 'snapshots'), 0o711);
  makeDirs(join(rootDir, 'sandboxes'), 0o711);
  const host: LocalHost = {
    bwrap,
    unshare,
    nsenter,
    setpriv,
    prlimit,
    network: { helper: pickNetworkHelper({ pasta, slirp4netns }, options.networkHelper), ip },
    hostBash,
    dropTo,
    owner: dropTo,
    hostUid: dropTo?.uid ?? process.getuid?.() ?? 0,
    innerUid: options.innerUid ?? 1000,
    innerGid: options.innerGid ?? options.innerUid ?? 1000,
    rootLayout: await detectRootLayout(),
    shell: (await isExecutable('/usr/bin/bash')) || (await isExecutable('/bin/bash')) ? 'bash' : 'sh',
    rootDir,
    rootDirNote: note,
    cgroups: await LocalCgroups.create({ maxTotalProcesses: options.maxTotalProcesses, maxTotalMemoryMb: options.maxTotalMemoryMb }),
    workspaceMode: 'copy',
    overlayProblem: undefined,
  };
  try {
    await probe(host, options.workspace ?? 'auto');
  } catch (error) {
    await host.cgroups.close().catch(() => undefined);
    await rm(rootDir, { recursive: true, force: true });
    throw error;
  }
  return host;
}

/**
 * Where the provider's folder goes: sandbox.settings.rootDir, else the temp folder, else /tmp or
 * /var/tmp: a folder the sandbox user can pass through, since every workspace, snapshot and
 * private /tmp of a sandbox lives below it (a TMPDIR under a mode-0700 folder would stop bwrap
 * with "Can't find source path ...: Permission denied").
 */
function rootParent(configured: string | undefined, user: PathUser): { parent: string; note?: string } {
  const who = userLabel(user);
  if (configured !== undefined) {
    const blocker = findBlocker(configured, user, 'x');
    if (!blocker) return { parent: configured };
    const { where, fix } = describeBlocker(blocker);
    throw wnwError(
      'WNW_ERR_CFG_INVALID',
      `sandbox.settings.rootDir ${configured}: ${who} cannot pass through ${where}, so no sandbox could reach its files; run \`${fix}\`, or pick a folder every user can pass through`,
      {
        details: { field: 'sandbox.settings.rootDir', folder: blocker.folder },
      },
    );
  }
  const temp = tmpdir();
  const { dir, passedOver } = firstReachable([temp, '/tmp', '/var/tmp'], user);
  const closed = passedOver[0];
  const described = closed ? describeBlocker(closed.blocker) : undefined;
  if (!dir) {
    throw wnwError(
      'WNW_ERR_SBX_UNAVAILABLE',
      `the local sandbox provider has no folder ${who} can reach: it cannot pass through ${described!.where}, above the temp folder ${temp}; run \`${described!.fix}\`, or set sandbox.settings.rootDir (or TMPDIR) to a folder every user can pass through`,
      {
        details: { folder: closed!.blocker.folder },
      },
    );
  }
  if (!described) return { parent: dir };
  return {
    parent: dir,
    note: `the temp folder ${closed!.dir} is out of reach of ${who}: it cannot pass through ${described.where}; sandbox files go under ${dir} instead (run \`${described.fix}\`, or set sandbox.settings.rootDir, to choose)`,
  };
}

/**
 * Removes the folders (snapshots, workspaces) of winnower processes killed before their exit hook
 * could run: ours only (same owner, a real folder), named after a process that no longer exists.
 */
async function removeStaleRootDirs(parent: string): Promise<void> {
  const uid = process.getuid?.();
  for (const entry of await readdir(parent, { withFileTypes: true }).catch(() => [])) {
    const match = /^winnower-local-(\d+)-[A-Za-z0-9]{6}$/.exec(entry.name);
    if (!match || !entry.isDirectory() || isAlive(Number(match[1]))) continue;
    const dir = join(parent, entry.name);
    const info = await lstat(dir).catch(() => undefined);
    if (!info?.isDirectory() || info.uid !== uid) continue;
    await removeTree(dir).catch(() => undefined);
  }
}

async function probe(host: LocalHost, workspace: 'auto' | 'overlay' | 'copy'): Promise<void> {
  const probeDir = join(host.rootDir, 'probe');
  const lower = join(probeDir, 'lower');
  await makeOwnedDirs([probeDir, lower], host.owner);
  try {
    const result = await runOneOff(host, lower, 'true');
    if (result.exitCode !== 0) {
      const why = tail(result.stderr.toString());
      throw wnwError(
        'WNW_ERR_SBX_UNAVAILABLE',
        `bubblewrap cannot create a sandbox on this host${why ? `: ${why}` : ''}${probeHint(why, host)}`,
      );
    }
    if (workspace === 'copy') {
      host.overlayProblem = 'copy workspaces requested by configuration';
      return;
    }
    try {
      const overlay = await createOverlayWorkspace(join(probeDir, 'sandbox'), lower, { unshare: host.unshare, owner: host.owner });
      await overlay.close();
      host.workspaceMode = 'overlay';
    } catch (error) {
      if (workspace === 'overlay')
        throw wnwError('WNW_ERR_SBX_UNAVAILABLE', `overlay workspaces are not available: ${(error as Error).message}`);
      host.overlayProblem = (error as Error).message;
    }
  } finally {
    await removeTree(join(probeDir, 'sandbox')).catch(() => undefined);
    await removeTree(probeDir);
  }
}

/** What a failed probe most likely means: a path the sandbox user cannot reach, or no user namespaces. */
function probeHint(why: string, host: LocalHost): string {
  const source = /Can't find source path (.+?): Permission denied/.exec(why);
  if (source)
    return ` (uid ${host.hostUid}, which sandboxes run as, cannot reach ${source[1]}: every folder above it must let other users pass, chmod o+x)`;
  if (/namespace|uid map|setgroups|Operation not permitted/i.test(why))
    return ' (unprivileged user namespaces must be enabled: sysctl kernel.unprivileged_userns_clone=1)';
  return '';
}

export interface LaunchParts {
  procsFiles: string[];
  limits: SandboxLimits;
  holderPid: number | undefined;
  /** Enter the holder's network namespace too (it has its own: a networked sandbox). */
  holderNetwork?: boolean;
  bwrap: string[];
  program: string[];
}

// Joins the sandbox's cgroups (as root, before the drop), then execs the rest of the chain.
const JOIN_SCRIPT = 'while [ "$1" != -- ]; do echo $$ > "$1" || exit 125; shift; done; shift; exec "$@"';
// Descriptors above 6 (3: bwrap's status, 4: a long command, 5: the seccomp filter, 6: bwrap's
// options) are ones this process inherited without close-on-exec (a parent's pipe or socket);
// neither bwrap nor the tools before it close them, so they would reach every sandbox. bash closes
// them first (dash cannot name fds past 9).
const CLOSE_INHERITED_FDS = `for f in /proc/self/fd/*; do n=\${f##*/}; if [ "$n" -gt ${ARGS_FD} ]; then exec {n}>&-; fi; done; `;

export interface Launch {
  argv: string[];
  /** bwrap's options, for SandboxProcess's ARGS_FD. */
  bwrapArgs: Buffer;
}

/**
 * [close inherited fds, cgroup join] → env -i → [setpriv drop] → [prlimit] → [nsenter holder] →
 * bwrap → program. The sandbox's pid 1 is a bwrap process: `env -i` leaves it no environment (the
 * server's PWD was in its /proc/1/environ), and its options (host paths) come through ARGS_FD, so
 * its /proc/1/cmdline is `bwrap --args 6` and the program.
 */
export function launchArgv(host: LocalHost, parts: LaunchParts): Launch {
  const prlimitArgs = host.prlimit ? host.cgroups.prlimitArgs(parts.limits) : [];
  const chain = [
    'env',
    '-i',
    ...(host.dropTo ? [host.setpriv!, `--reuid=${host.dropTo.uid}`, `--regid=${host.dropTo.gid}`, '--clear-groups', '--'] : []),
    ...(prlimitArgs.length > 0 ? [host.prlimit!, ...prlimitArgs, '--'] : []),
    ...(parts.holderPid !== undefined
      ? [
          host.nsenter,
          `--target=${parts.holderPid}`,
          '--user',
          '--mount',
          ...(parts.holderNetwork ? ['--net'] : []),
          '--preserve-credentials',
        ]
      : []),
    host.bwrap,
    '--args',
    String(ARGS_FD),
    ...parts.program,
  ];
  const bwrapArgs = Buffer.from(parts.bwrap.map((arg) => `${arg}\0`).join(''));
  // --norc --noprofile: with stdin a socket (calls that pass stdin), Debian's bash takes this for
  // an sshd session and would source /etc/bash.bashrc and the server user's ~/.bashrc, as root.
  if (host.hostBash)
    return {
      argv: [
        host.hostBash,
        '--norc',
        '--noprofile',
        '-c',
        CLOSE_INHERITED_FDS + JOIN_SCRIPT,
        'wnw-launch',
        ...parts.procsFiles,
        '--',
        ...chain,
      ],
      bwrapArgs,
    };
  return {
    argv: parts.procsFiles.length > 0 ? ['/bin/sh', '-c', JOIN_SCRIPT, 'wnw-join', ...parts.procsFiles, '--', ...chain] : chain,
    bwrapArgs,
  };
}

export interface OneOffOptions {
  timeoutMs?: number;
  signal?: AbortSignal;
  /** `workspace` is an image's root filesystem: run with it as / (read-only or not), with this environment. */
  image?: { readOnly: boolean; env: Record<string, string> };
  maxOutputBytes?: number;
  /** The shell that runs `command` (default sh). */
  shell?: string;
}

/** Runs one command in a throwaway sandbox over `workspace` (probes, index refresh, image inspection). */
export async function runOneOff(
  host: LocalHost,
  workspace: string,
  command: string,
  options: OneOffOptions = {},
): Promise<SandboxProcessResult & { stderrText: string }> {
  const tmp = join(workspace, '..', `oneoff-tmp-${process.pid}-${randomBytes(4).toString('hex')}`);
  await makeOwnedDirs([tmp], host.owner, 0o700);
  try {
    const bwrap = bwrapArgs({
      workspace,
      workdir: '/workspace',
      tmpDir: tmp,
      varTmpDir: tmp,
      cwd: options.image ? '/' : '/workspace',
      network: false,
      env: options.image?.env ?? baseSandboxEnv(),
      innerUid: host.innerUid,
      innerGid: host.innerGid,
      rootLayout: host.rootLayout,
      statusFd: STATUS_FD,
      ...(options.image ? { imageRoot: { readOnly: options.image.readOnly } } : {}),
    });
    const launch = launchArgv(host, {
      procsFiles: [],
      limits: {},
      holderPid: undefined,
      bwrap,
      program: [options.shell ?? 'sh', '-c', command],
    });
    const result = await new SandboxProcess({
      argv: launch.argv,
      bwrapArgs: launch.bwrapArgs,
      timeoutMs: options.timeoutMs ?? 600_000,
      maxOutputBytes: options.maxOutputBytes ?? 64 * 1024,
      signal: options.signal,
    }).result;
    return { ...result, stderrText: result.stderr.toString() };
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}

/** Looks a program up in PATH (and the sbin folders, which a non-login root PATH may lack). */
export async function which(name: string): Promise<string | undefined> {
  const dirs = [...(process.env.PATH ?? '').split(delimiter), ...HOST_PATH.split(':')].filter(Boolean);
  for (const dir of dirs) {
    const candidate = join(dir, name);
    if (await isExecutable(candidate)) return candidate;
  }
  return undefined;
}

async function isExecutable(path: string): Promise<boolean> {
  try {
    await access(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
