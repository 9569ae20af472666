/**
 * The bubblewrap command line of one exec: read-only system, private /tmp, own namespaces, no
 * capabilities, cleared environment (the line of docs/design/04-local-sandbox.md#7 that passed
 * every isolation check), plus the sandbox's workspace and options.
 */
import { lstat, readlink } from 'node:fs/promises';
import { wnwError } from '../../../errors.js';
import type { SandboxMount } from '../../types.js';
import { SANDBOX_BASE_ENV } from '../../patch-policy.js';
import { SECCOMP_FD, seccompProgram } from './seccomp.js';

/** How the host's top-level system folders appear in the sandbox (merged /usr or not). */
export type RootEntry = { kind: 'symlink'; name: string; target: string } | { kind: 'bind'; name: string };

export interface BwrapCommand {
  /** Host path of the workspace (overlay mount or copy). */
  workspace: string;
  /** Where the workspace appears inside the sandbox. */
  workdir: string;
  /** Host folders bound at /tmp and /var/tmp: private to the sandbox, kept across execs. */
  tmpDir: string;
  varTmpDir: string;
  /** A host folder bound at the sandbox's HOME (a checkout sandbox's own home: home.ts). */
  home?: { source: string; target: string };
  /** Absolute working directory inside the sandbox. */
  cwd: string;
  network: boolean;
  env: Record<string, string>;
  innerUid: number;
  innerGid: number;
  rootLayout: RootEntry[];
  /** File descriptor bwrap writes its JSON status to ({"child-pid"}, then {"exit-code"}). */
  statusFd: number;
  /** Checked by checkMounts at create. */
  mounts?: SandboxMount[];
  /**
   * Set for an image: `workspace` is the sandbox's whole root (the image's rootfs, or an overlay
   * over it) instead of the host's /usr and /etc with the workspace at `workdir`.
   */
  imageRoot?: { readOnly: boolean };
}

export const SANDBOX_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
const SYSTEM_DIRS = ['bin', 'sbin', 'lib', 'lib32', 'lib64', 'libx32'];
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const RUN_TMPFS_BYTES = 16 * 1024 * 1024;

/**
 * Environment every exec starts from: SANDBOX_BASE_ENV, and git trusts the workspace whatever its
 * owner (docs/design/04-local-sandbox.md#6). HOME here is the one-off commands' (probes, image
 * inspection); a sandbox sets its own (home.ts).
 */
export function baseSandboxEnv(): Record<string, string> {
  return {
    PATH: SANDBOX_PATH,
    HOME: '/tmp',
    LANG: 'C.UTF-8',
    TERM: 'dumb',
    ...SANDBOX_BASE_ENV,
    GIT_CONFIG_COUNT: '1',
    GIT_CONFIG_KEY_0: 'safe.directory',
    GIT_CONFIG_VALUE_0: '*',
  };
}

/** Reads whether /bin, /lib, ... are symlinks into /usr (merged /usr) or real folders. */
export async function detectRootLayout(): Promise<RootEntry[]> {
  const entries: RootEntry[] = [];
  for (const name of SYSTEM_DIRS) {
    try {
      const stats = await lstat(`/${name}`);
      if (stats.isSymbolicLink()) entries.push({ kind: 'symlink', name, target: await readlink(`/${name}`) });
      else if (stats.isDirectory()) entries.push({ kind: 'bind', name });
    } catch {
      // absent on this host
    }
  }
  return entries;
}

/** Checks environment names and values before they reach bwrap's argv. */
export function checkEnv(env: Record<string, string>, field: string): void {
  for (const [name, value] of Object.entries(env)) {
    if (!ENV_NAME.test(name) || value.includes('\0')) {
      throw wnwError('WNW_ERR_INPUT_INVALID', `${field}: invalid environment variable ${JSON.stringify(name)}`, {
        details: { field, name },
      });
    }
  }
}

/** The host's system folders, read-only: /usr, /bin, /lib... as on the host, and /etc. */
function systemBinds(rootLayout: RootEntry[]): string[] {
  const args = ['--ro-bind', '/usr', '/usr'];
  for (const entry of rootLayout) {
    if (entry.kind === 'symlink') args.push('--symlink', entry.target, `/${entry.name}`);
    else args.push('--ro-bind', `/${entry.name}`, `/${entry.name}`);
  }
  args.push('--ro-bind', '/etc', '/etc');
  return args;
}

/** bwrap's arguments up to (not including) the program to run. */
export function bwrapArgs(command: BwrapCommand): string[] {
  const args = command.imageRoot
    ? [command.imageRoot.readOnly ? '--ro-bind' : '--bind', command.workspace, '/']
    : systemBinds(command.rootLayout);
  args.push(
    '--dev',
    '/dev',
    '--proc',
    '/proc',
    '--bind',
    command.tmpDir,
    '/tmp',
    '--bind',
    command.varTmpDir,
    '/var/tmp',
    // bwrap's own tmpfs, new for each exec; capped like /tmp (local-overlay.ts) rather than half the RAM.
    '--size',
    String(RUN_TMPFS_BYTES),
    '--tmpfs',
    '/run',
    ...(command.home ? ['--bind', command.home.source, command.home.target] : []),
    ...(command.imageRoot ? [] : ['--bind', command.workspace, command.workdir]),
    // After /run's tmpfs, so a mount under /run (the proxy's socket folder) lands on it.
    ...(command.mounts ?? []).flatMap((mount) => [mount.readOnly === false ? '--bind' : '--ro-bind', mount.source, mount.target]),
    '--chdir',
    command.cwd,
    '--unshare-all',
    ...(command.network ? ['--share-net'] : []),
    '--unshare-user',
    '--uid',
    String(command.innerUid),
    '--gid',
    String(command.innerGid),
    '--hostname',
    'sandbox',
    '--die-with-parent',
    '--new-session',
    '--cap-drop',
    'ALL',
    // No user namespace inside: the kernel's limit (bwrap) and the seccomp filter (clone/unshare flags) both say so.
    '--disable-userns',
    // The filter comes through SECCOMP_FD, which every SandboxProcess opens (local-process.ts).
    ...(seccompProgram() ? ['--seccomp', String(SECCOMP_FD)] : []),
    '--clearenv',
    '--json-status-fd',
    String(command.statusFd),
  );
  for (const [name, value] of Object.entries(command.env)) args.push('--setenv', name, value);
  return args;
}
