/**
 * HOME of a local sandbox's commands, as a container engine sets it (docs/sandboxes.md#what-a-sandbox-gets):
 * the image's Env, else the home /etc/passwd gives the sandbox user, else /root for root and /tmp
 * for a uid /etc/passwd does not name. Over a checkout the sandbox reads the host's /etc/passwd,
 * but its root is bubblewrap's read-only tmpfs and holds none of the host's homes: there the home
 * is a folder of the sandbox's own on its /tmp area (overlay.ts), bound at that path, so it is
 * writable, private, empty at first and kept across execs. `spec.env` can still set HOME.
 */
import { readFile } from 'node:fs/promises';
import { posix } from 'node:path';

export interface SandboxHome {
  path: string;
  /** Bind the sandbox's own home folder at `path` (a checkout's; an image's root is writable). */
  bind: boolean;
}

/** Where bwrapArgs mounts the system, /tmp and /run: a home there cannot be bound. */
const MOUNTED = ['/usr', '/etc', '/proc', '/dev', '/tmp', '/var/tmp', '/run', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'];

const within = (path: string, dir: string): boolean => path === dir || path.startsWith(`${dir}/`);

/** Home folders by uid from the text of an /etc/passwd (an empty home field counts as none). */
export function passwdHomes(text: string): Map<number, string> {
  const homes = new Map<number, string>();
  for (const line of text.split('\n')) {
    const fields = line.split(':');
    if (fields.length < 7 || !/^\d+$/.test(fields[2]!) || !fields[5]) continue;
    const uid = Number(fields[2]);
    if (!homes.has(uid)) homes.set(uid, fields[5]);
  }
  return homes;
}

/** The home the host's /etc/passwd (what a checkout sandbox sees) gives `uid`; undefined when it names none or cannot be read. */
export async function hostPasswdHome(uid: number): Promise<string | undefined> {
  const text = await readFile('/etc/passwd', 'utf8').catch(() => '');
  return passwdHomes(text).get(uid);
}

/** A path a checkout sandbox's home can be bound at: absolute, not /, clear of the system mounts and of the workdir. */
function bindable(path: string, workdir: string): boolean {
  const normalized = posix.normalize(path);
  if (!posix.isAbsolute(normalized) || normalized === '/' || normalized.includes('\0')) return false;
  return !MOUNTED.some((dir) => within(normalized, dir)) && !within(normalized, workdir) && !within(workdir, normalized);
}

/** A checkout sandbox's home: its user's from /etc/passwd, else /root for root (both bound), else /tmp. */
export function checkoutHome(uid: number, passwdHome: string | undefined, workdir: string): SandboxHome {
  for (const path of [passwdHome, uid === 0 ? '/root' : undefined]) {
    if (path !== undefined && bindable(path, workdir)) return { path: posix.normalize(path), bind: true };
  }
  return { path: '/tmp', bind: false };
}

/** An image sandbox's home, as docker gives it: the image's Env HOME, else its /etc/passwd's, else /root for root, /tmp otherwise. */
export function imageHome(uid: number, envHome: string | undefined, passwdHome: string | undefined): SandboxHome {
  return { path: envHome || passwdHome || (uid === 0 ? '/root' : '/tmp'), bind: false };
}
