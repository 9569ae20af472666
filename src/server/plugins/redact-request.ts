/**
 * What the job store keeps of a /solve request: everything but its secrets. The policy's and the judge's API keys
 * and the credentials inside any URL (`https://user:token@host/...`) go to the job only.
 */
import type { SolveRequest } from '../../solve/solve-request.js';
import { redactUrlCredentials } from '../../util/redact-url.js';

export const REDACTED = '[redacted]';

function redactPolicy<T extends SolveRequest['policy']>(policy: T): T {
  return policy && policy.kind !== 'replay'
    ? { ...policy, url: redactUrlCredentials(policy.url, REDACTED), ...(policy.api_key === undefined ? {} : { api_key: REDACTED }) }
    : policy;
}

export function redactRequest(request: SolveRequest): SolveRequest {
  const repo = request.repo?.url === undefined ? request.repo : { ...request.repo, url: redactUrlCredentials(request.repo.url, REDACTED) };
  const policy = redactPolicy(request.policy);
  // A mixed job's policies each keep their own secrets out of the store too.
  const policies = request.policies?.map((entry) => (entry.policy ? { ...entry, policy: redactPolicy(entry.policy) } : entry));
  const judge = request.judge && {
    ...request.judge,
    url: redactUrlCredentials(request.judge.url, REDACTED),
    ...(request.judge.api_key === undefined ? {} : { api_key: REDACTED }),
  };
  return {
    ...request,
    ...(repo ? { repo } : {}),
    ...(policy ? { policy } : {}),
    ...(policies ? { policies } : {}),
    ...(judge ? { judge } : {}),
  };
}

/**
 * The first field (`body.policy.api_key`) the redaction changed: a secret the stored request does
 * not carry. With a shared queue another replica runs the job from the stored request, so such a
 * request is refused at submit rather than run without its secret.
 */
export function firstSecretField(request: unknown, redacted: unknown, path = 'body'): string | undefined {
  if (request === redacted) return undefined;
  if (typeof request !== 'object' || request === null || typeof redacted !== 'object' || redacted === null)
    return JSON.stringify(request) === JSON.stringify(redacted) ? undefined : path;
  for (const key of Object.keys(request)) {
    const found = firstSecretField((request as Record<string, unknown>)[key], (redacted as Record<string, unknown>)[key], `${path}.${key}`);
    if (found) return found;
  }
  return undefined;
}
