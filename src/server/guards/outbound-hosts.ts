/**
 * Allowlists of the hosts a request may make the server call: `server.policy_hosts` (policy
 * servers named in a request) and `server.repo_hosts` (git remotes it clones). Empty = any host,
 * for local use; an operator of a shared server sets them, so that clients cannot point the
 * server at addresses of their choosing (its own loopback, the cloud metadata service, ...).
 *
 * An entry is a host name or IP address (`github.com`, `10.0.0.7`, `[::1]`), optionally with a
 * port (`gpu-1:8000`, then only that port), or `*.example.com` for every subdomain of example.com.
 * Names are compared as written, case aside: no DNS lookup happens here.
 */
import { wnwError } from '../../errors.js';

/** `host` and `port` ('' when none) of a URL's authority, lower-cased. */
export interface Authority {
  host: string;
  port: string;
}

function matches(entry: string, { host, port }: Authority): boolean {
  const [, entryHost = '', entryPort] = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(entry.trim().toLowerCase()) ?? [];
  if (entryPort !== undefined && entryPort !== port) return false;
  if (entryHost.startsWith('*.')) return host.endsWith(entryHost.slice(1)) && host.length > entryHost.length - 1;
  return host === entryHost;
}

/** Whether `authority` is allowed by `hosts` (empty: every host is). */
export function hostAllowed(authority: Authority, hosts: readonly string[]): boolean {
  return hosts.length === 0 || hosts.some((entry) => matches(entry, authority));
}

/** Throws WNW_ERR_INPUT_INVALID naming `field` and the `setting` that would allow it when `authority` is not allowed by `hosts`. */
export function checkHostAllowed(authority: Authority, hosts: readonly string[], field: string, setting: string): void {
  if (hostAllowed(authority, hosts)) return;
  throw wnwError(
    'WNW_ERR_INPUT_INVALID',
    `${field}: host ${authority.host}${authority.port ? `:${authority.port}` : ''} is not one this server calls (${setting})`,
    {
      details: { field, setting },
    },
  );
}

/** A policy URL (http/https, already validated) against `server.policy_hosts`. */
export function checkPolicyHost(url: string | undefined, hosts: readonly string[], field: string): void {
  if (url === undefined || hosts.length === 0) return;
  const parsed = new URL(url);
  checkHostAllowed({ host: parsed.hostname.toLowerCase(), port: parsed.port }, hosts, field, 'server.policy_hosts');
}
