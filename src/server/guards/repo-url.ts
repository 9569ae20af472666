/**
 * What a request's `repo.url` may be, checked at submit so that an odd value is a 400 naming the
 * field rather than a job that fails later (or a git argument): a URL of git's remote transports
 * (`https`, `http`, `ssh`, `git`, `git+ssh`), git's scp-like `user@host:path` or `host.name:path`,
 * or a local repository (`file://`, an absolute path; those are `server.repo_roots`' business,
 * src/server/guards/repo-access.ts). Refused: anything starting with `-` (git would read an option),
 * `<transport>::` addresses (`ext::` runs a command), other schemes (`javascript:`, `data:`, ...),
 * and control characters. With `server.repo_hosts` set, a remote URL's host must be in it.
 */
import { wnwError } from '../../errors.js';
import { checkHostAllowed, type Authority } from './outbound-hosts.js';

const REMOTE_SCHEMES = new Set(['https', 'http', 'ssh', 'git', 'git+ssh', 'ssh+git']);
/** `[user@]host:path`, git's scp-like syntax: no slash before the first colon, no `//` after it. */
const SCP_LIKE = /^(?:([^@/:]+)@)?(\[[^\]/]+\]|[^@/:[\]]+):(?!\/\/)(.+)$/;
const HOST_NAME = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/i;

const refuse = (field: string, message: string) => wnwError('WNW_ERR_INPUT_INVALID', `${field}: ${message}`, { details: { field } });

/** The remote host of `url` (undefined for a local repository), or a 400 naming `field`. */
function remoteAuthority(url: string, field: string): Authority | undefined {
  if (url.startsWith('-')) throw refuse(field, 'may not start with "-" (git would read it as an option)');
  if (/\p{Cc}/u.test(url)) throw refuse(field, 'contains control characters');
  if (/^[A-Za-z][A-Za-z0-9+.-]*::/.test(url))
    throw refuse(field, 'git transports of the form <transport>::<address> (ext::, fd::) are not accepted; give an https, ssh or git URL');
  if (url.startsWith('/')) return undefined;
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(url)?.[1]?.toLowerCase();
  if (scheme === 'file') return undefined;
  if (scheme !== undefined) {
    if (!REMOTE_SCHEMES.has(scheme))
      throw refuse(field, `scheme ${scheme}:// is not a git remote; give an https, ssh or git URL, or an absolute path`);
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw refuse(field, 'is not a valid URL');
    }
    if (!parsed.hostname) throw refuse(field, 'has no host');
    return { host: parsed.hostname.toLowerCase(), port: parsed.port };
  }
  const scp = SCP_LIKE.exec(url);
  // A bare `word:rest` (`javascript:alert(1)`, `data:...`) reads as a URI scheme, not a host: git's
  // scp-like form is accepted with a user (`git@host:path`) or a dotted host name (`github.com:org/repo`).
  if (scp && (scp[1] !== undefined || scp[2]!.startsWith('[') || (scp[2]!.includes('.') && HOST_NAME.test(scp[2]!)))) {
    return { host: scp[2]!.toLowerCase(), port: '' };
  }
  throw refuse(
    field,
    'not a git URL: give https://host/path, ssh://[user@]host/path, user@host:path, git://host/path, file:///path or an absolute path',
  );
}

/** Throws WNW_ERR_INPUT_INVALID naming `field` for a `repo.url` the server will not clone. */
export function checkRepoUrl(url: string | undefined, field: string, repoHosts: readonly string[]): void {
  if (url === undefined) return;
  const authority = remoteAuthority(url, field);
  if (authority !== undefined && repoHosts.length > 0) checkHostAllowed(authority, repoHosts, field, 'server.repo_hosts');
}
