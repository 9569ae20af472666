/**
 * One look at a job's policy server before its rollouts start: a TCP/TLS connection and a
 * `GET <url>/models`. Any HTTP answer (even 401 or 404) means the server is there; only a failure
 * to connect (refused, unknown host, no route, TLS failure, no connection within the deadline)
 * counts as unreachable. Without this, every rollout of a job made its sandbox and then failed
 * alike on ECONNREFUSED; with it the job fails once, at once, naming `policy.url`.
 * The look is part of the policy's first call as far as its `timeout_s` goes: it waits at most that
 * long, and a server that accepts the connection and stays silent all that time fails the job
 * with WNW_ERR_POLICY_TIMEOUT, since every completion would time out alike (docs/api.md).
 */
import { Agent, request } from 'undici';
import { wnwError } from '../../errors.js';
import { redactUrlCredentials } from '../../util/redact-url.js';
import type { PolicyOptions } from './policy-options.js';

/** Long enough for a TLS handshake across a continent, short enough that a job with a dead policy fails in seconds. */
export const REACHABILITY_TIMEOUT_MS = 10_000;

/** Error codes of a failure to connect, as undici and Node raise them; a connection reset after it was made is not one (the server is there). */
const CONNECT_FAILURES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EADDRNOTAVAIL',
  'UND_ERR_CONNECT_TIMEOUT',
  'CERT_HAS_EXPIRED',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'EPROTO',
]);

function connectFailure(error: unknown): string | undefined {
  const seen = new Set<unknown>();
  for (let current = error; current instanceof Error && !seen.has(current); current = (current as Error & { cause?: unknown }).cause) {
    seen.add(current);
    const code = (current as Error & { code?: string }).code;
    if (code !== undefined && CONNECT_FAILURES.has(code)) return current.message || code;
    if (current instanceof AggregateError) {
      const inner = current.errors.map(connectFailure).find((message) => message !== undefined);
      if (inner) return inner;
    }
  }
  return undefined;
}

/** The look's own deadline ended it (undici's headers or body timer, or the abort signal). */
function timedOut(error: unknown, deadline: AbortSignal): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return deadline.aborted || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT';
}

/**
 * Resolves when the policy server of `policy` answers at all (replayed policies have none);
 * throws WNW_ERR_POLICY_UPSTREAM naming `field` when it cannot be reached.
 */
export async function checkPolicyReachable(
  policy: PolicyOptions,
  options: { field: string; signal?: AbortSignal; timeoutMs?: number },
): Promise<void> {
  if (policy.kind === 'replay') return;
  const policyTimeoutMs = policy.timeout_s * 1000;
  const timeoutMs = Math.min(options.timeoutMs ?? REACHABILITY_TIMEOUT_MS, policyTimeoutMs);
  const dispatcher = new Agent({ connect: { timeout: timeoutMs }, headersTimeout: timeoutMs, bodyTimeout: timeoutMs });
  const deadline = AbortSignal.timeout(timeoutMs);
  const signal = options.signal ? AbortSignal.any([options.signal, deadline]) : deadline;
  try {
    const response = await request(`${policy.url.replace(/\/+$/, '')}/models`, { method: 'GET', dispatcher, signal });
    await response.body.dump();
  } catch (error) {
    options.signal?.throwIfAborted();
    const reason = connectFailure(error);
    const shown = redactUrlCredentials(policy.url, '***');
    if (reason === undefined) {
      // Connected, but silent for less than the policy's own deadline: the server is there (perhaps
      // busy) and the rollouts' deadlines apply. Silent for the whole deadline: a completion would be too.
      if (timeoutMs < policyTimeoutMs || !timedOut(error, deadline)) return;
      const field = options.field.replace(/url$/, 'timeout_s');
      throw wnwError(
        'WNW_ERR_POLICY_TIMEOUT',
        `${field}: the policy server at ${shown} accepted the connection but sent no answer within ${policy.timeout_s} s; no rollout was started`,
        { details: { field, url: shown, timeoutMs: policyTimeoutMs }, cause: error },
      );
    }
    throw wnwError(
      'WNW_ERR_POLICY_UPSTREAM',
      `${options.field}: the policy server at ${shown} cannot be reached (${reason}); no rollout was started`,
      {
        details: { field: options.field, url: shown },
        cause: error,
      },
    );
  } finally {
    await dispatcher.close().catch(() => undefined);
  }
}
