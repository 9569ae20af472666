/**
 * The per-candidate stages of a finished candidate (scoring, verification, the regression check,
 * its pass-matrix row) run at once: scoring is in process and each check opens its own sandbox
 * within the job's budget, and none reads what another produces (the stop rule reads them all
 * afterwards). Run one after another, a candidate's regression check waited for its verification
 * slot, which stretched the job's tail after the last rollout (bench/results/solve-makespan.md).
 */
import type { Slot } from './solve-context.js';

export type CandidateStage = (slot: Slot) => Promise<unknown>;

/** Runs every stage given on `slot` at once; waits for all of them (no sandbox left open), then throws the first failure. */
export async function runCandidateStages(slot: Slot, stages: ReadonlyArray<CandidateStage | undefined>): Promise<void> {
  const settled = await Promise.allSettled(stages.map((stage) => stage?.(slot)));
  const failed = settled.find((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected');
  if (failed) throw failed.reason;
}
