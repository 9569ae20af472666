/**
 * Whether the sandbox user can reach a host path. Bubblewrap opens bind sources, and the local
 * provider's workspace holder mounts its folders, as the unprivileged uid sandboxes run as, which
 * must pass through (x) every folder above them: a checkout, TMPDIR or cache below a mode-0700
 * folder (`mktemp -d`, /root, a private $HOME) stops it with "Permission denied". These checks name
 * that folder, and `makeDirs` creates folders with their modes whatever the umask.
 */
import { chmodSync, mkdirSync, realpathSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

export interface PathUser {
  uid: number;
  gid: number;
}

/** A user who owns nothing: what a folder must allow to every user but its owner and group. */
export const OTHER_USER: PathUser = { uid: -1, gid: -1 };

/** Who sandboxes run as, for a check made before a provider exists: as root any other user (the uid is a setting), else ourselves. */
export function sandboxUser(): PathUser {
  const uid = process.getuid?.();
  if (uid === undefined || uid === 0) return OTHER_USER;
  return { uid, gid: process.getgid?.() ?? uid };
}

/** A folder (or the path itself) the user cannot pass, and what it lacks. */
export interface Blocker {
  folder: string;
  /** Permission bits (0o777). */
  mode: number;
  /** The permission missing: 'x' to pass through, or what `own` asked for the path itself. */
  missing: string;
}

const BITS: Record<string, number> = { r: 4, w: 2, x: 1 };

function allows(folder: string, user: PathUser, wanted: string): Blocker | undefined {
  let info;
  try {
    info = statSync(folder);
  } catch {
    // Missing, or not ours to look at: the caller's own checks (exists, permission denied) speak for it.
    return undefined;
  }
  if (user.uid === 0) return undefined;
  const shift = info.uid === user.uid ? 6 : info.gid === user.gid ? 3 : 0;
  const granted = (info.mode >> shift) & 7;
  const missing = [...wanted].filter((bit) => !(granted & BITS[bit]!)).join('');
  return missing ? { folder, mode: info.mode & 0o777, missing } : undefined;
}

/** The folders above `path`: as written (symlinks there count too) and after resolving symlinks. */
function foldersAbove(path: string): string[] {
  const folders: string[] = [];
  const add = (start: string): void => {
    for (let folder = dirname(start); ; folder = dirname(folder)) {
      if (!folders.includes(folder)) folders.push(folder);
      if (folder === dirname(folder)) return;
    }
  };
  const absolute = resolve(path);
  add(absolute);
  try {
    add(realpathSync(absolute));
  } catch {
    // not there (yet): the folders as written are all there is to check
  }
  // Outermost first, so the message names the folder that stops the walk.
  return folders.sort((a, b) => a.length - b.length);
}

/**
 * The first folder above `path` that `user` cannot pass through, or `path` itself when it lacks
 * `own` ('r', 'rx', 'wx'...); undefined when the user can get there.
 */
export function findBlocker(path: string, user: PathUser, own = ''): Blocker | undefined {
  for (const folder of foldersAbove(path)) {
    const blocked = allows(folder, user, 'x');
    if (blocked) return blocked;
  }
  return own ? allows(resolve(path), user, own) : undefined;
}

/** "/x (mode 700)" and the command that opens it to the sandbox user. */
export function describeBlocker(blocker: Blocker): { where: string; fix: string } {
  return {
    where: `${blocker.folder} (mode ${blocker.mode.toString(8).padStart(3, '0')})`,
    fix: `chmod o+${blocker.missing} ${blocker.folder}`,
  };
}

/** Who `user` is, in a message. */
export function userLabel(user: PathUser): string {
  return user.uid === OTHER_USER.uid ? 'the sandbox user' : `the sandbox user (uid ${user.uid})`;
}

/** The first of `candidates` (folders) that `user` can reach, with why each one before it was passed over. */
export function firstReachable(
  candidates: string[],
  user: PathUser,
): { dir: string | undefined; passedOver: Array<{ dir: string; blocker: Blocker }> } {
  const passedOver: Array<{ dir: string; blocker: Blocker }> = [];
  for (const dir of [...new Set(candidates.map((candidate) => resolve(candidate)))]) {
    const blocker = findBlocker(dir, user, 'x');
    if (!blocker) return { dir, passedOver };
    passedOver.push({ dir, blocker });
  }
  return { dir: undefined, passedOver };
}

/**
 * Creates `dir` and any missing folder above it, each with exactly `mode` (the umask does not
 * apply: under `umask 077` a plain mkdir makes folders the sandbox user cannot pass). Folders
 * already there keep their mode.
 */
export function makeDirs(dir: string, mode: number): void {
  const first = mkdirSync(dir, { recursive: true, mode });
  if (first === undefined) return;
  for (let folder = resolve(dir); ; folder = dirname(folder)) {
    chmodSync(folder, mode);
    if (folder === resolve(first) || folder === dirname(folder)) return;
  }
}
