/** What `GET /jobs/:id` shows: the job, its candidates so far (trajectories on request) and the result; `GET /jobs` a summary of each. */
import type { z } from 'zod';
import { patchForJson } from '../../sandbox/patch-bytes.js';
import type { CandidateRecord, JobRecord, JobStore } from '../../store/types.js';
import type { JobSummary, JobView } from '../api-schemas.js';
import { jobOverview, resultOutcome } from './job-overview.js';

function candidateView(candidate: CandidateRecord, withTrajectory: boolean) {
  const trajectory = candidate.trajectory;
  return {
    index: candidate.index,
    status: candidate.status,
    trajectory_id: trajectory?.id ?? null,
    exit: trajectory?.exit ?? null,
    steps: (trajectory?.meta.steps as number | undefined) ?? null,
    /** Policy calls and tokens so far (a running rollout's trajectory is stored after every step). */
    usage: trajectory?.usage ?? null,
    ...(trajectory ? patchForJson(trajectory.patch) : { patch: null }),
    value: candidate.score?.value ?? null,
    score: candidate.score,
    verify: candidate.verify,
    error: candidate.error,
    /** A retry's candidate taken as it was from the earlier job: which job and index. */
    reused_from: candidate.reused_from ?? null,
    ...(withTrajectory ? { trajectory: trajectory && { ...trajectory, ...patchForJson(trajectory.patch) } } : {}),
  };
}

export async function jobView(store: JobStore, job: JobRecord, options: { trajectories?: boolean } = {}): Promise<z.input<typeof JobView>> {
  const candidates = await store.listCandidates(job.id);
  return {
    job_id: job.id,
    kind: job.kind,
    status: job.status,
    progress: job.progress,
    created_at: job.created_at,
    updated_at: job.updated_at,
    error: job.error,
    candidates: candidates.map((candidate) => candidateView(candidate, options.trajectories ?? false)),
    // As stored by the job that produced it (a SolveResult, or a partial one).
    result: resultView(job.result as z.input<typeof JobView>['result']),
  };
}

/**
 * A patch whose bytes are not UTF-8 goes out as base64 with `patch_encoding` (src/sandbox/patch-bytes.ts).
 * A result stored before results had `outcome` gets it, from its `chosen`.
 */
function resultView(stored: z.input<typeof JobView>['result']): z.input<typeof JobView>['result'] {
  if (!stored) return stored;
  const outcome = resultOutcome(stored);
  const result = outcome && stored.outcome === undefined ? { ...stored, outcome } : stored;
  const chosen = result.chosen;
  if (!chosen || typeof chosen.patch !== 'string') return result;
  return { ...result, chosen: { ...chosen, ...patchForJson(chosen.patch) } };
}

/** A job in a list: its state and counters and its headline (jobOverview), without candidates or result. */
export function jobSummary(job: JobRecord): z.input<typeof JobSummary> {
  return {
    job_id: job.id,
    kind: job.kind,
    status: job.status,
    progress: job.progress,
    created_at: job.created_at,
    updated_at: job.updated_at,
    error: job.error,
    overview: jobOverview(job),
  };
}
