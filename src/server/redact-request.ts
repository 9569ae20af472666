/**
 * What the job store keeps of a /solve request: everything but its secrets. The policy's API key
 * and the credentials inside any URL (`https://user:token@host/...`) go to the job only.
 */
import type { SolveRequest } from '../solve/solve-request.js';

export const REDACTED = '[redacted]';

/** `scheme://user:password@host/path` → `scheme://[redacted]@host/path`; other strings unchanged. */
export function redactUrlCredentials(url: string): string {
  const match = /^([a-z][a-z0-9+.-]*:\/\/)([^/?#]*)(.*)$/is.exec(url);
  if (!match) return url;
  const [, scheme, authority, rest] = match as unknown as [string, string, string, string];
  // The host follows the last '@': a password may hold a raw '@' of its own.
  const at = authority.lastIndexOf('@');
  return at < 0 ? url : `${scheme}${REDACTED}@${authority.slice(at + 1)}${rest}`;
}

export function redactRequest(request: SolveRequest): SolveRequest {
  const repo = request.repo?.url === undefined ? request.repo : { ...request.repo, url: redactUrlCredentials(request.repo.url) };
  const policy =
    request.policy?.kind === 'openai'
      ? { ...request.policy, url: redactUrlCredentials(request.policy.url), ...(request.policy.api_key === undefined ? {} : { api_key: REDACTED }) }
      : request.policy;
  return { ...request, ...(repo ? { repo } : {}), ...(policy ? { policy } : {}) };
}
