/**
 * A job's headline in `GET /jobs`: task, N, policy and harness from its request; chosen candidate,
 * whether it was resolved and the outcome from its result. Read defensively: the request and the result are
 * stored JSON of whichever version wrote them, and a rerank job has neither policy nor harness.
 */
import type { SolveOutcome } from '../../solve/result-view.js';
import type { JobRecord } from '../../store/types.js';

/** A type, not an interface: it must fit the response schema's loose (indexable) object. */
export type JobOverview = {
  instance_id: string | null;
  n: number | null;
  policy: string | null;
  harness: string | null;
  strategy: string | null;
  chosen_index: number | null;
  /** The chosen candidate's tests passed (null: nothing chosen, or not verified). */
  resolved: boolean | null;
  /** `none-usable` when the job chose nothing usable (src/solve/result-view.ts); null without a selection. */
  outcome: SolveOutcome | null;
};

const record = (value: unknown): Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
const text = (value: unknown): string | null => (typeof value === 'string' && value !== '' ? value : null);
const int = (value: unknown): number | null => (typeof value === 'number' && Number.isInteger(value) ? value : null);

const policyName = (policy: Record<string, unknown>): string | null =>
  policy.kind === 'replay' ? 'replay' : (text(policy.model) ?? text(policy.kind));

/** A mixed job's policies and harnesses (`policies` entries over the job's defaults), joined; null for a one-policy job. */
function mixedOverview(request: Record<string, unknown>): { policy: string; harness: string } | null {
  if (!Array.isArray(request.policies) || request.policies.length === 0) return null;
  const entries = request.policies.map(record);
  const distinct = (values: Array<string | null>) => [...new Set(values.map((value) => value ?? 'default'))].join(', ');
  return {
    policy: distinct(entries.map((entry) => text(entry.name) ?? policyName(record(entry.policy)) ?? policyName(record(request.policy)))),
    harness: distinct(entries.map((entry) => text(record(entry.agent).harness) ?? text(record(request.agent).harness))),
  };
}

/** The result's outcome; a result stored before it had one says the same by a null `chosen` beside its selection. */
export function resultOutcome(result: Record<string, unknown>): SolveOutcome | null {
  if (result.outcome === 'chosen' || result.outcome === 'none-usable') return result.outcome;
  if (!('chosen' in result) || !('selection' in result)) return null;
  return result.chosen === null ? 'none-usable' : 'chosen';
}

export function jobOverview(job: Pick<JobRecord, 'request' | 'result' | 'progress'>): JobOverview {
  const request = record(job.request);
  const result = record(job.result);
  const policy = record(request.policy);
  const chosen = record(result.chosen);
  const selection = record(result.selection);
  const verifyStatus = text(chosen.verify_status);
  const mixed = mixedOverview(request);
  return {
    instance_id: text(request.instance_id) ?? text(result.instance_id),
    n: int(request.n) ?? int(job.progress.rollouts_total) ?? (Array.isArray(request.candidates) ? request.candidates.length : null),
    policy: mixed?.policy ?? policyName(policy),
    harness: mixed?.harness ?? text(record(request.agent).harness),
    strategy: text(selection.strategy) ?? text(request.strategy),
    chosen_index: int(chosen.index),
    resolved: verifyStatus === null ? null : verifyStatus === 'resolved',
    outcome: resultOutcome(result),
  };
}
