/**
 * What the job store keeps of a /solve request: everything but its secrets. The policy's API key
 * and the credentials inside any URL (`https://user:token@host/...`) go to the job only.
 */
import type { SolveRequest } from '../solve/solve-request.js';
import { redactUrlCredentials } from '../util/redact-url.js';

export const REDACTED = '[redacted]';

export function redactRequest(request: SolveRequest): SolveRequest {
  const repo = request.repo?.url === undefined ? request.repo : { ...request.repo, url: redactUrlCredentials(request.repo.url, REDACTED) };
  const policy =
    request.policy && request.policy.kind !== 'replay'
      ? { ...request.policy, url: redactUrlCredentials(request.policy.url, REDACTED), ...(request.policy.api_key === undefined ? {} : { api_key: REDACTED }) }
      : request.policy;
  return { ...request, ...(repo ? { repo } : {}), ...(policy ? { policy } : {}) };
}
