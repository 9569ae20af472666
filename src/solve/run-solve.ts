/**
 * One best-of-N job end to end, read top to bottom as its stages:
 *   at the start, beside the rollouts: the regression check's base runs (regression.ts) and the
 *   test writers (reproduction.ts);
 *   rollouts (rollouts.ts) → per finished candidate, as soon as it is ready and all at once
 *   (candidate-stages.ts): scoring (scoring.ts), verification of the given tests
 *   (verification.ts), its regressions, its row of the pass matrix; then the stop rule (stop-rule.ts) → once every candidate is finished, the tests from the
 *   pool (pool-tests.ts) → selection with all that evidence, and the pairwise
 *   judge's verdicts first when it has one (selection.ts).
 * The stages share one SolveContext (solve-context.ts) and one sandbox budget (sandbox-budget.ts);
 * the checks' evidence is built from their events (evidence.ts), so an interrupted job keeps it.
 */
import { resolvePolicyOptions } from '../rollout/policy/policy-factory.js';
import { checkPolicyReachable } from '../rollout/policy/policy-reachability.js';
import type { CandidateRecord } from '../store/types.js';
import type { ChecksEvidence, JudgeReport, Selection, Trajectory } from '../types/index.js';
import type { JobEventBody } from './events.js';
import {
  candidateSummary,
  chosenView,
  outcomeOf,
  usageTotals,
  type ChosenView,
  type SolveCandidateSummary,
  type SolveOutcome,
} from './result-view.js';
import { jobWaves } from './policy-plan.js';
import { runRolloutWaves, throwIfAllFailed } from './rollouts.js';
import { runCandidateStages } from './candidate-stages.js';
import { scoreSlot } from './scoring.js';
import { selectCandidate } from './selection.js';
import { createSolveContext, type SolveContext, type Slot } from './solve-context.js';
import type { SolveDeps } from './solve-deps.js';
import type { SolveRequest } from './solve-request.js';
import { regressionEnabled, startRegression } from './regression.js';
import { startReproduction } from './reproduction.js';
import { poolTestsEnabled, startPoolTests } from './pool-tests.js';
import { applyStopRule } from './stop-rule.js';
import { givenTests, verificationLane, verifySlot } from './verification.js';
import type { SetupView } from './shared-setup.js';
import { prefixCompute, runSharedPrefix } from './agent-prefix.js';

export type { SolveDeps } from './solve-deps.js';
export type { SolveCandidateSummary } from './result-view.js';
export { taskFromRequest } from './solve-context.js';

export interface SolveResult {
  instance_id: string;
  /** `none-usable`: the job ran to its end but no candidate had a usable patch, so `chosen` is null. */
  outcome: SolveOutcome;
  chosen: ChosenView | null;
  selection: Selection;
  candidates: SolveCandidateSummary[];
  rollouts: { planned: number; finished: number; failed: number; cancelled: number; skipped: number };
  /**
   * With `setup`: `setup_ms` (one run), `setup_runs`, and what forking saved against each sandbox
   * running the setup itself (`fork_saved_sandbox_ms`, `fork_saved_wall_ms`, an estimate).
   */
  compute: {
    policy_calls: number;
    tokens: number;
    rollout_ms: number;
    saved_rollouts: number;
    saved_fraction: number;
    setup_ms?: number;
    setup_runs?: number;
    fork_saved_sandbox_ms?: number;
    fork_saved_wall_ms?: number;
    prefix_steps?: number;
    prefix_policy_calls?: number;
    prefix_tokens?: number;
    prefix_ms?: number;
    fork_saved_policy_calls?: number;
    fork_saved_tokens?: number;
    fork_saved_prefix_ms?: number;
  };
  /** The setup: how it reached the sandboxes (forked or run in each) and why, its cost and what forking saved; null without one. */
  setup: SetupView | null;
  stopped_early: string | null;
  /** The regression check, reproduction tests and pass matrix (null fields for checks that did not run). */
  checks: ChecksEvidence;
  /** With a judge (strategy judge or hybrid): tie rates before and after it, its cost, why it failed; null without one. */
  judge: JudgeReport | null;
  duration_ms: number;
}

export async function runSolve(
  deps: SolveDeps,
  jobId: string,
  request: SolveRequest,
  hooks: { signal: AbortSignal; emit: (event: JobEventBody) => void; resume?: CandidateRecord[] },
  reuse?: ReadonlyMap<number, Trajectory>,
): Promise<SolveResult> {
  const started = Date.now();
  const context = createSolveContext(deps, jobId, request, hooks, reuse);
  const verifyLane = verificationLane(context);
  const waves = jobWaves(context.plan).map((members) => members.length);
  // A job taken over from another replica started there: its log has the job-start already.
  if (!hooks.resume)
    hooks.emit({
      type: 'job-start',
      n: request.n,
      waves,
      ...(request.policies
        ? {
            policies: context.plan.map((planned) => ({
              index: planned.index,
              n: planned.n,
              waves: planned.waves,
              config: context.slots[planned.first]!.config,
            })),
          }
        : {}),
    });
  // The counters from the start, so a job that fails before any rollout shows n and zeros, not `{}`.
  await context.progress();
  // One look at each policy server before n sandboxes are made for it (src/rollout/policy/policy-reachability.ts).
  for (const planned of context.plan) {
    const field =
      planned.policy === undefined ? 'policy.url' : planned.policy === request.policy ? 'body.policy.url' : `${planned.field}.policy.url`;
    await checkPolicyReachable(resolvePolicyOptions(planned.policy, deps.policyDefaults ?? {}), { field, signal: hooks.signal });
  }
  // The shared setup first: the base runs, test writers and rollouts all start from it.
  try {
    await context.sandboxes.prepare(hooks.signal);
  } catch (error) {
    await context.sandboxes.release();
    throw error;
  }
  const regression = regressionEnabled(context) ? startRegression(context) : undefined;
  const reproduction = context.verifying && request.verify.reproduction ? startReproduction(context) : undefined;

  const evaluate = async (slot: Slot): Promise<void> => {
    // A candidate kept from a takeover keeps the score and verification it has (run once, counted once).
    await runCandidateStages(slot, [
      slot.score ? undefined : (candidate) => scoreSlot(context, candidate),
      givenTests(context) && !slot.verify ? (candidate) => verifySlot(context, candidate, verifyLane) : undefined,
      regression ? (candidate) => regression.check(candidate) : undefined,
      reproduction ? (candidate) => reproduction.check(candidate) : undefined,
    ]);
    await context.save(slot);
    await context.progress();
    applyStopRule(context, slot);
  };

  const poolTests = poolTestsEnabled(context) ? startPoolTests(context) : undefined;

  try {
    const at = request.fork?.at;
    if (at === 'first-edit' || typeof at === 'number') context.prefix = await runSharedPrefix(context, at);
    await runRolloutWaves(context, evaluate);
    // The candidates' own tests need every candidate: they run once the rollouts are done.
    await poolTests?.run(context.slots.filter((slot) => slot.status === 'finished'));
  } finally {
    // Checks still running (every rollout failed, the job was cancelled) stop with the job, and
    // their sandboxes are closed before it returns.
    context.endChecks();
    await Promise.allSettled(context.background);
    // Every sandbox of the job is closed by now: the snapshots go with the job, cancelled or not.
    await context.prefix?.shared?.release().catch(() => undefined);
    await context.sandboxes.release();
    // Every write of the job has landed before it ends: a partial result reads them back.
    await context.writes.flush().catch(() => undefined);
  }
  hooks.signal.throwIfAborted();
  reproduction?.finish();
  throwIfAllFailed(context);
  const { selection, chosen, judge } = await selectCandidate(context);
  return solveResult(context, selection, chosen, judge, Date.now() - started);
}

function solveResult(
  context: SolveContext,
  selection: Selection,
  chosen: Slot | undefined,
  judge: JudgeReport | null,
  durationMs: number,
): SolveResult {
  const { slots, request } = context;
  const count = (status: Slot['status']) => slots.filter((slot) => slot.status === status).length;
  const saved = count('skipped') + (context.stoppedEarly ? count('cancelled') : 0);
  const trajectories = slots.flatMap((slot) => (slot.trajectory ? [slot.trajectory] : []));
  const view = chosenView(chosen);
  const setup = context.sandboxes.view(sandboxRounds(context));
  return {
    instance_id: context.task.instance_id,
    outcome: outcomeOf(view),
    chosen: view,
    selection,
    candidates: slots.map((slot) => candidateSummary(slot, context.jobId, context.evidence.forCandidate(slot.index))),
    rollouts: {
      planned: request.n,
      finished: count('finished'),
      failed: count('failed'),
      cancelled: count('cancelled'),
      skipped: count('skipped'),
    },
    compute: {
      ...usageTotals(trajectories),
      ...prefixCompute(context.prefix, trajectories),
      rollout_ms: context.rolloutMs,
      saved_rollouts: saved,
      saved_fraction: saved / request.n,
      ...(setup
        ? {
            setup_ms: setup.setup_ms,
            setup_runs: setup.runs,
            fork_saved_sandbox_ms: setup.saved_sandbox_ms,
            fork_saved_wall_ms: setup.saved_wall_ms,
          }
        : {}),
    },
    setup,
    stopped_early: context.stoppedEarly,
    checks: context.evidence.view(),
    judge,
    duration_ms: durationMs,
  };
}

/**
 * Sandboxes opened one after another on the job's longest chain: each wave's rollouts in rounds of
 * its concurrency (within max_sandboxes), then a verification. Without forking, each is a setup.
 */
function sandboxRounds(context: SolveContext): number {
  const { request } = context;
  const rounds = jobWaves(context.plan).reduce((sum, members) => {
    const width = Math.min(request.concurrency ?? members.length, request.max_sandboxes ?? members.length, members.length);
    return sum + Math.ceil(members.length / Math.max(1, width));
  }, 0);
  return rounds + (context.verifying ? 1 : 0);
}
