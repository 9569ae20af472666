/**
 * A /rerank that verifies or runs checks, kept in the job store as a finished job of kind `rerank`
 * (docs/api.md#post-score-and-post-rerank): the request without its secrets (its candidates by id),
 * each candidate with its trajectory as given, its score and its test outcome, as a solve job's
 * candidates are stored, and the answer with the chosen candidate and the candidate summaries a
 * solve job's result has, so `GET /jobs`, `jobs export` and `train --from-store` read it alike.
 * Written once the request has ended: a rerank job is never queued or running in the store, so
 * neither the shared queue nor a restart's interrupted-job sweep ever takes one for a solve job.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import { toWinnowerError } from '../errors.js';
import { candidateSummary, chosenView, outcomeOf, type CandidateState } from '../solve/result-view.js';
import type { CandidateUpdate, JobStore, JobUpdate } from '../store/types.js';
import type { CandidateChecks, Score, Selection, Trajectory, VerifyResult } from '../types/index.js';

/** What the request came to, by trajectory id. */
export interface RerankOutcome {
  scores: ReadonlyMap<string, Score>;
  verify: ReadonlyMap<string, VerifyResult>;
  checks?: ReadonlyMap<string, CandidateChecks>;
  /** The answer the client gets. */
  answer: { selection: Selection } & Record<string, unknown>;
}

export interface RerankRecorder {
  /** Records the job as succeeded; its id, or undefined when the store refused (logged). */
  succeeded(outcome: RerankOutcome): Promise<string | undefined>;
  /** Records the job as failed, or cancelled when the client went away (`aborted`); a store failure is logged. */
  failed(error: unknown, aborted: boolean): Promise<void>;
}

export function rerankRecorder(
  store: JobStore,
  request: { instanceId: string; stored: unknown; trajectories: readonly Trajectory[] },
  log: Pick<FastifyBaseLogger, 'error'>,
): RerankRecorder {
  const { trajectories } = request;
  const write = async (candidates: CandidateState[], end: (id: string) => JobUpdate): Promise<string> => {
    const id = randomUUID();
    const progress = {
      candidates: trajectories.length,
      scored: candidates.filter((candidate) => candidate.score).length,
      verified: candidates.filter((candidate) => candidate.verify).length,
    };
    await store.createJob({ id, kind: 'rerank', request: request.stored, status: 'running', progress });
    try {
      await Promise.all(
        candidates.map((candidate) => {
          const update: CandidateUpdate = {
            status: candidate.status,
            trajectory: candidate.trajectory ?? null,
            score: candidate.score ?? null,
            verify: candidate.verify ?? null,
            error: null,
          };
          return store.putCandidate(id, candidate.index, update);
        }),
      );
      await store.updateJob(id, end(id));
    } catch (error) {
      // Not left `running`: no replica ever runs a rerank job, so nothing else would end it.
      const failure = toWinnowerError(error);
      await store
        .updateJob(id, { status: 'failed', error: { code: failure.code, message: `could not record the job: ${failure.message}` } })
        .catch(() => undefined);
      throw error;
    }
    return id;
  };
  const given = (outcome?: RerankOutcome): CandidateState[] =>
    trajectories.map((trajectory, index) => ({
      index,
      status: 'finished',
      trajectory,
      score: outcome?.scores.get(trajectory.id) ?? null,
      verify: outcome?.verify.get(trajectory.id) ?? null,
    }));
  return {
    async succeeded(outcome) {
      const candidates = given(outcome);
      try {
        return await write(candidates, (id) => {
          const chosen = chosenView(candidates.find((candidate) => candidate.trajectory?.id === outcome.answer.selection.chosen));
          return {
            status: 'succeeded',
            result: {
              instance_id: request.instanceId,
              outcome: outcomeOf(chosen),
              chosen,
              candidates: candidates.map((candidate) => candidateSummary(candidate, id, outcome.checks?.get(candidate.trajectory!.id))),
              ...outcome.answer,
            },
          };
        });
      } catch (error) {
        // The answer is computed and paid for: a store that cannot keep it must not cost the client
        // its 200. The job is missing from GET /jobs and the exports; the log says so.
        log.error({ err: error }, 'could not record the /rerank job; answered without job_id');
        return undefined;
      }
    },
    async failed(error, aborted) {
      const failure = toWinnowerError(error);
      try {
        await write(given(), () => ({
          status: aborted ? 'cancelled' : 'failed',
          error: { code: failure.code, message: failure.message },
        }));
      } catch (storeError) {
        // The client gets the request's own error either way; only the record is lost.
        log.error({ err: storeError }, 'could not record the failed /rerank job');
      }
    },
  };
}
