/**
 * Which host repositories a request may name. A `repo.path` (or a `repo.url` that git reads from
 * this machine's disk: `file://`, a bare path) is cloned into the sandbox, where the request's
 * policy and test command can read every file of it. With `server.repo_roots` set, such a
 * repository must lie, after symlinks are resolved, under one of those folders; remote URLs
 * (https, ssh, git, scp-like) pass. Without roots any repository the server's user can read is
 * allowed, which suits local use only.
 */
import { realpath } from 'node:fs/promises';
import { isAbsolute, sep } from 'node:path';
import { wnwError } from '../../errors.js';
import { parseImageReference } from '../../sandbox/image-reference.js';

const REMOTE_URL = /^(https?|ssh|git|git\+ssh|ssh\+git):\/\//i;
/** `user@host:path` or `host:path`: git's scp-like syntax (no slash before the first colon). */
const SCP_LIKE = /^[^/:]+:/;

/** The local path git would read `url` from, `undefined` for a remote URL, `null` for a transport refused outright. */
function localPathOf(url: string): string | null | undefined {
  if (REMOTE_URL.test(url)) return undefined;
  if (/^file:\/\//i.test(url)) return decodeURIComponent(new URL(url).pathname);
  if (/^[A-Za-z][A-Za-z0-9+.-]*::/.test(url)) return null; // <transport>::<address> (ext::, fd::)
  if (SCP_LIKE.test(url)) return undefined;
  return url;
}

async function inside(path: string, roots: string[]): Promise<boolean> {
  const real = await realpath(path).catch(() => undefined);
  if (real === undefined) return false;
  for (const root of roots) {
    const realRoot = await realpath(root).catch(() => undefined);
    if (realRoot !== undefined && (real === realRoot || real.startsWith(realRoot.endsWith(sep) ? realRoot : realRoot + sep))) return true;
  }
  return false;
}

/** Throws WNW_ERR_INPUT_INVALID naming `<field>.path` or `<field>.url` when `repo` is a host repository outside `roots`. */
export async function checkRepoAccess(
  repo: { url?: string; path?: string } | undefined,
  roots: readonly string[],
  field: string,
): Promise<void> {
  if (!repo || roots.length === 0) return;
  const [key, local] =
    repo.path !== undefined
      ? (['path', repo.path] as const)
      : (['url', repo.url === undefined ? undefined : localPathOf(repo.url)] as const);
  if (local === undefined) return;
  if (local !== null && (await inside(local, [...roots]))) return;
  // One message whether the path exists or not: a client learns nothing about the host's files.
  throw wnwError('WNW_ERR_INPUT_INVALID', `${field}.${key}: not a repository under the folders this server allows (server.repo_roots)`, {
    details: { field: `${field}.${key}` },
  });
}

/**
 * The same rule for an image a request names from this machine's disk (an OCI layout or archive:
 * `oci:`, `oci-archive:`, `docker-archive:`), whose files the sandbox would see; registry
 * references pass. WNW_ERR_INPUT_INVALID naming `field` otherwise (a bad reference included).
 */
export async function checkImageAccess(image: string | undefined, roots: readonly string[], field: string): Promise<void> {
  if (image === undefined) return;
  const { path } = parseImageReference(image, field);
  if (path === undefined || roots.length === 0 || (await inside(path, [...roots]))) return;
  throw wnwError('WNW_ERR_INPUT_INVALID', `${field}: not an image under the folders this server allows (server.repo_roots)`, {
    details: { field },
  });
}

/**
 * The same rule for a task folder a request names on this machine (`harbor_task`): an absolute
 * path that lies, symlinks resolved, under `roots` when roots are set. WNW_ERR_INPUT_INVALID
 * naming `field` otherwise, with one message whether the folder exists or not.
 */
export async function checkFolderAccess(path: string, roots: readonly string[], field: string): Promise<void> {
  if (!isAbsolute(path))
    throw wnwError('WNW_ERR_INPUT_INVALID', `${field}: must be an absolute path on the server`, { details: { field } });
  if (roots.length === 0 || (await inside(path, [...roots]))) return;
  throw wnwError('WNW_ERR_INPUT_INVALID', `${field}: not a folder under the folders this server allows (server.repo_roots)`, {
    details: { field },
  });
}
