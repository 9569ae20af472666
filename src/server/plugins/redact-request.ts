/**
 * What the job store keeps of a /solve or /rerank request: everything but its secrets. The policies' (the
 * agents' and the test writers') and the judge's API keys and the credentials inside any URL (`https://user:token@host/...`) go to the job only.
 */
import type { SolveRequest } from '../../solve/solve-request.js';
import { redactUrlCredentials } from '../../util/redact-url.js';

export const REDACTED = '[redacted]';

function redactPolicy<T extends SolveRequest['policy']>(policy: T): T {
  return policy && policy.kind !== 'replay'
    ? { ...policy, url: redactUrlCredentials(policy.url, REDACTED), ...(policy.api_key === undefined ? {} : { api_key: REDACTED }) }
    : policy;
}

function redactJudge<T extends { url: string; api_key?: string | undefined } | undefined>(judge: T): T {
  return (
    judge && {
      ...judge,
      url: redactUrlCredentials(judge.url, REDACTED),
      ...(judge.api_key === undefined ? {} : { api_key: REDACTED }),
    }
  );
}

export function redactRequest(request: SolveRequest): SolveRequest {
  const repo = request.repo?.url === undefined ? request.repo : { ...request.repo, url: redactUrlCredentials(request.repo.url, REDACTED) };
  const policy = redactPolicy(request.policy);
  // A mixed job's policies each keep their own secrets out of the store too.
  const policies = request.policies?.map((entry) => (entry.policy ? { ...entry, policy: redactPolicy(entry.policy) } : entry));
  const judge = redactJudge(request.judge);
  // The test writers' own policy (verify.reproduction.policy) carries a key like the agents'.
  const writers = request.verify?.reproduction?.policy
    ? { ...request.verify, reproduction: { ...request.verify.reproduction, policy: redactPolicy(request.verify.reproduction.policy) } }
    : undefined;
  return {
    ...request,
    ...(repo ? { repo } : {}),
    ...(policy ? { policy } : {}),
    ...(policies ? { policies } : {}),
    ...(judge ? { judge } : {}),
    ...(writers ? { verify: writers } : {}),
  };
}

/** The parts of a /rerank body that can carry a secret, and its candidates. */
interface RerankRequestParts {
  task: { repo?: { url?: string | undefined } | undefined };
  judge?: { url: string; api_key?: string | undefined } | undefined;
  checks?: { reproduction?: { policy?: SolveRequest['policy'] } | undefined } | undefined;
  candidates: ReadonlyArray<{ id: string }>;
}

/**
 * A /rerank request as its job keeps it (src/server/rerank-job.ts): without secrets, and its
 * candidates by id only, since each is stored whole as one of the job's candidates.
 */
export function redactRerankRequest<T extends RerankRequestParts>(request: T) {
  const { task, judge, checks } = request;
  const repo = task.repo?.url === undefined ? task.repo : { ...task.repo, url: redactUrlCredentials(task.repo.url, REDACTED) };
  const reproduction = checks?.reproduction?.policy
    ? { ...checks.reproduction, policy: redactPolicy(checks.reproduction.policy) }
    : undefined;
  return {
    ...request,
    task: { ...task, ...(repo ? { repo } : {}) },
    candidates: request.candidates.map((candidate) => ({ id: candidate.id })),
    ...(judge ? { judge: redactJudge(judge) } : {}),
    ...(checks && reproduction ? { checks: { ...checks, reproduction } } : {}),
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
