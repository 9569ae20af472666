/**
 * One best-of-N job end to end, read top to bottom as its stages:
 *   rollouts (rollouts.ts) → per finished candidate, as soon as it is ready: scoring (scoring.ts),
 *   verification (verification.ts), the stop rule (stop-rule.ts) → selection (selection.ts).
 * The stages share one SolveContext (solve-context.ts) and one sandbox budget (sandbox-budget.ts).
 */
import type { Selection } from '../types/index.js';
import type { JobEventBody } from './events.js';
import { candidateSummary, chosenView, usageTotals, type ChosenView, type SolveCandidateSummary } from './result-view.js';
import { runRolloutWaves, throwIfAllFailed } from './rollouts.js';
import { scoreSlot } from './scoring.js';
import { selectCandidate } from './selection.js';
import { createSolveContext, type SolveContext, type Slot } from './solve-context.js';
import type { SolveDeps } from './solve-deps.js';
import type { SolveRequest } from './solve-request.js';
import { applyStopRule } from './stop-rule.js';
import { verificationLane, verifySlot } from './verification.js';

export type { SolveDeps } from './solve-deps.js';
export type { SolveCandidateSummary } from './result-view.js';
export { taskFromRequest } from './solve-context.js';

export interface SolveResult {
  instance_id: string;
  chosen: ChosenView | null;
  selection: Selection;
  candidates: SolveCandidateSummary[];
  rollouts: { planned: number; finished: number; failed: number; cancelled: number; skipped: number };
  compute: { policy_calls: number; tokens: number; rollout_ms: number; saved_rollouts: number; saved_fraction: number };
  stopped_early: string | null;
  duration_ms: number;
}

export async function runSolve(
  deps: SolveDeps,
  jobId: string,
  request: SolveRequest,
  hooks: { signal: AbortSignal; emit: (event: JobEventBody) => void },
): Promise<SolveResult> {
  const started = Date.now();
  const context = createSolveContext(deps, jobId, request, hooks);
  const waves = request.waves ?? [request.n];
  const verifyLane = verificationLane(context);

  const evaluate = async (slot: Slot): Promise<void> => {
    await scoreSlot(context, slot);
    await verifySlot(context, slot, verifyLane);
    context.save(slot);
    context.progress();
    applyStopRule(context, slot);
  };

  hooks.emit({ type: 'job-start', n: request.n, waves });
  await runRolloutWaves(context, waves, evaluate);
  hooks.signal.throwIfAborted();
  throwIfAllFailed(context);
  const { selection, chosen } = selectCandidate(context);
  return solveResult(context, selection, chosen, Date.now() - started);
}

function solveResult(context: SolveContext, selection: Selection, chosen: Slot | undefined, durationMs: number): SolveResult {
  const { slots, request } = context;
  const count = (status: Slot['status']) => slots.filter((slot) => slot.status === status).length;
  const saved = count('skipped') + (context.stoppedEarly ? count('cancelled') : 0);
  const trajectories = slots.flatMap((slot) => (slot.trajectory ? [slot.trajectory] : []));
  return {
    instance_id: context.task.instance_id,
    chosen: chosenView(chosen),
    selection,
    candidates: slots.map((slot) => candidateSummary(slot, context.jobId)),
    rollouts: { planned: request.n, finished: count('finished'), failed: count('failed'), cancelled: count('cancelled'), skipped: count('skipped') },
    compute: {
      ...usageTotals(trajectories),
      rollout_ms: context.rolloutMs,
      saved_rollouts: saved,
      saved_fraction: saved / request.n,
    },
    stopped_early: context.stoppedEarly,
    duration_ms: durationMs,
  };
}
