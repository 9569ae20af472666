/**
 * `retry_of` at submit: the earlier job exists, has ended, is a /solve job with this same request
 * (as stored: secrets redacted), and its finished rollouts are what the retry takes as they are.
 * A retry of a retry compares the requests without `retry_of`.
 */
import { wnwError } from '../../errors.js';
import type { SolveRequest } from '../../solve/solve-request.js';
import type { JobStore } from '../../store/types.js';
import type { Trajectory } from '../../types/index.js';
import { redactRequest } from '../plugins/redact-request.js';

const FIELD = 'body.retry_of';

/** A JSON value with its object keys sorted, so that two requests compare by content. */
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([, entry]) => entry !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([key, entry]) => [key, canonical(entry)]),
  );
}

/** The top-level fields in which two requests differ, `retry_of` aside. */
function differingFields(stored: Record<string, unknown>, request: Record<string, unknown>): string[] {
  const keys = new Set([...Object.keys(stored), ...Object.keys(request)].filter((key) => key !== 'retry_of'));
  return [...keys].filter((key) => JSON.stringify(canonical(stored[key])) !== JSON.stringify(canonical(request[key]))).sort();
}

/** The earlier job's finished rollouts by index, or undefined without `retry_of`; a 4xx naming the field when it cannot be retried so. */
export async function retryCandidates(store: JobStore, body: SolveRequest): Promise<Map<number, Trajectory> | undefined> {
  const id = body.retry_of;
  if (id === undefined) return undefined;
  const job = await store.getJob(id);
  if (job?.kind !== 'solve')
    throw wnwError('WNW_ERR_INPUT_INVALID', `${FIELD}: no /solve job ${id}`, { details: { field: FIELD, job_id: id } });
  if (job.status === 'queued' || job.status === 'running')
    throw wnwError('WNW_ERR_JOB_STATE', `${FIELD}: job ${id} is ${job.status}; retry it once it has ended`, {
      details: { field: FIELD, job_id: id, status: job.status },
    });
  const differs = differingFields(job.request as Record<string, unknown>, redactRequest(body) as Record<string, unknown>);
  if (differs.length > 0)
    throw wnwError(
      'WNW_ERR_INPUT_INVALID',
      `${FIELD}: job ${id} ran another request (it differs in ${differs.join(', ')}); a retry sends the same one`,
      {
        details: { field: FIELD, job_id: id, differs },
      },
    );
  const reuse = new Map<number, Trajectory>();
  for (const candidate of await store.listCandidates(id))
    if (candidate.status === 'finished' && candidate.trajectory) reuse.set(candidate.index, candidate.trajectory);
  return reuse;
}
