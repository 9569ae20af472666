/**
 * A /solve job as the job manager runs it: the value model serving when the job starts is pinned
 * for the whole job (a model swapped in meanwhile by POST /admin/model or SIGHUP serves only later
 * jobs), and the job says which model and selector scored it: in its `job-start` event (`scorer`, so
 * an interrupted job's partial result knows it too) and in its result (`scored_by`).
 */
import { pinValueModel, type ServedValueModel } from '../scoring/reloadable.js';
import { scoredBy } from '../scoring/scorer-identity.js';
import type { JobRunner } from '../solve/job-manager.js';
import { runSolve, type SolveDeps } from '../solve/run-solve.js';
import type { SolveRequest } from '../solve/solve-request.js';
import type { CandidateRecord } from '../store/types.js';
import type { Trajectory } from '../types/index.js';

/**
 * `reuse`: a retry's finished rollouts of the earlier job, by index (guards/retry-of.ts);
 * `resume`: a job taken over from another replica, its stored candidates (solve-context.ts).
 */
export function solveJob(
  deps: Omit<SolveDeps, 'valueModel'>,
  served: ServedValueModel | undefined,
  request: SolveRequest,
  runs: { reuse?: ReadonlyMap<number, Trajectory>; resume?: CandidateRecord[] } = {},
): JobRunner {
  return async (jobId, hooks) => {
    const pinned = pinValueModel(served);
    try {
      const identity = pinned.valueModel?.identity;
      // The event type is the pipeline's; the server adds the field (stored and streamed with it).
      const emit: typeof hooks.emit = (event) =>
        hooks.emit(event.type === 'job-start' ? ({ ...event, scorer: identity ?? null } as typeof event) : event);
      const result = await runSolve(
        pinned.valueModel ? { ...deps, valueModel: pinned.valueModel } : deps,
        jobId,
        request,
        { ...hooks, emit, ...(runs.resume ? { resume: runs.resume } : {}) },
        runs.reuse,
      );
      return { ...result, scored_by: scoredBy(identity, result.selection.strategy) };
    } finally {
      pinned.release();
    }
  };
}
