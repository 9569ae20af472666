/**
 * Retry families for training from the store: a job and the retries (`retry_of`) that took its
 * finished rollouts as they were (docs/solve.md#retrying-what-failed). Every member holds the same
 * request's pool, the later ones with the earlier ones' reused candidates in it, so a family counts
 * once: its newest ended job (the most complete pool), or its newest job while none has ended.
 * The other members are left out, so every rollout is one row (docs/training.md).
 */
import { type JobRecord, TERMINAL_JOB_STATUSES } from '../store/types.js';

function retryOf(job: JobRecord): string | undefined {
  const id = (job.request as { retry_of?: unknown } | null)?.retry_of;
  return job.kind === 'solve' && typeof id === 'string' ? id : undefined;
}

/** The ids of the jobs a training run leaves out: every member of a retry family but the one that counts. */
export function leftOutOfFamilies(jobs: readonly JobRecord[]): Set<string> {
  const byId = new Map(jobs.map((job) => [job.id, job]));
  // The family is named by its first job, followed through the store; a purged first job still names it.
  const rootOf = (job: JobRecord): string => {
    const seen = new Set<string>();
    let id = job.id;
    for (let earlier = retryOf(job); earlier !== undefined && !seen.has(earlier); ) {
      seen.add(id);
      id = earlier;
      const stored = byId.get(earlier);
      earlier = stored ? retryOf(stored) : undefined;
    }
    return id;
  };
  const families = new Map<string, JobRecord[]>();
  for (const job of jobs) {
    if (job.kind !== 'solve') continue;
    const root = rootOf(job);
    families.set(root, [...(families.get(root) ?? []), job]);
  }
  const newestFirst = (a: JobRecord, b: JobRecord) =>
    a.created_at !== b.created_at ? (a.created_at < b.created_at ? 1 : -1) : a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
  const leftOut = new Set<string>();
  for (const members of families.values()) {
    if (members.length < 2) continue;
    const ordered = [...members].sort(newestFirst);
    const counted = ordered.find((job) => TERMINAL_JOB_STATUSES.includes(job.status)) ?? ordered[0]!;
    for (const job of ordered) if (job !== counted) leftOut.add(job.id);
  }
  return leftOut;
}
