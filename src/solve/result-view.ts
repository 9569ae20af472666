/**
 * How a solve job's candidates appear in its result: one summary per rollout, the chosen one,
 * and what the rollouts used. Shared by the result of a job that ran to its end (run-solve.ts)
 * and of one that was interrupted (partial-result.ts), so the two cannot drift apart.
 */
import { configOf } from '../select/priors.js';
import type { CandidateStatus, ErrorRecord } from '../store/types.js';
import type { CandidateChecks, RewardEvidence, Score, Trajectory, VerifyResult } from '../types/index.js';
import { rewardEvidence } from '../verify/reward-evidence.js';

/** A rollout as a running job holds it (absent fields) or as the store returns it (null fields). */
export interface CandidateState {
  index: number;
  status: CandidateStatus;
  trajectory?: Trajectory | null;
  score?: Score | null;
  verify?: VerifyResult | null;
  error?: ErrorRecord | null;
  /** Its configuration as the running job planned it (also for a rollout that never got a trajectory). */
  config?: Record<string, unknown>;
}

export interface SolveCandidateSummary {
  index: number;
  trajectory_id: string;
  status: CandidateStatus;
  /** The policy that produced it (the trajectory's `source`); null when the rollout never started its agent. */
  source: string | null;
  /** Its configuration (`meta.config`: policy model, harness, agent config, temperature, run name); what own-history priors are kept per. */
  config: Record<string, unknown> | null;
  exit: string;
  steps: number;
  value: number | null;
  verify_status: string | null;
  /** Its regressions and reproduction-test passes (result.checks has the detail); null when no check ran for it. */
  checks: CandidateChecks | null;
  /** A Harbor task's verified candidates only: the reward (null when none could be read), its file and threshold. */
  harbor_reward?: RewardEvidence;
  error: string | null;
}

export interface ChosenView {
  index: number;
  trajectory_id: string;
  patch: string;
  value: number | null;
  verify_status: string | null;
  /** As in its summary: a Harbor task's reward, file and threshold. */
  harbor_reward?: RewardEvidence;
}

/** `{ harbor_reward }` for a Harbor verification, else nothing: other jobs' results keep their shape. */
function rewardField(verify: VerifyResult | null | undefined): { harbor_reward?: RewardEvidence } {
  const reward = rewardEvidence(verify);
  return reward ? { harbor_reward: reward } : {};
}

export function candidateSummary(candidate: CandidateState, jobId: string, checks?: CandidateChecks): SolveCandidateSummary {
  return {
    index: candidate.index,
    trajectory_id: candidate.trajectory?.id ?? `${jobId}/${candidate.index}`,
    status: candidate.status,
    source: candidate.trajectory?.source ?? null,
    config: (candidate.trajectory ? configOf(candidate.trajectory) : null) ?? candidate.config ?? null,
    // A rollout that never ran has no trajectory: it says why (skipped by the stop rule, or an error).
    exit: candidate.trajectory?.exit ?? (candidate.status === 'skipped' ? 'skipped' : 'error'),
    steps: Number(candidate.trajectory?.meta.steps ?? 0),
    value: candidate.score?.value ?? null,
    verify_status: candidate.verify?.status ?? null,
    checks: checks ?? null,
    ...rewardField(candidate.verify),
    error: candidate.error ? `${candidate.error.code}: ${candidate.error.message}` : null,
  };
}

/**
 * What a job that ran to its end came to: `chosen`, or `none-usable` when no candidate had a
 * usable patch (every one empty, unparseable, refused or not applying: src/select/usable-gate.ts).
 * Kept beside the job's `succeeded` status rather than as a status of its own, so that clients
 * waiting for the fixed set of terminal statuses see no change (docs/api.md).
 */
export type SolveOutcome = 'chosen' | 'none-usable';

export function outcomeOf(chosen: ChosenView | null): SolveOutcome {
  return chosen ? 'chosen' : 'none-usable';
}

/** The chosen candidate's view; null when nothing was chosen (or it has no trajectory). */
export function chosenView(candidate: CandidateState | undefined): ChosenView | null {
  const trajectory = candidate?.trajectory;
  if (!candidate || !trajectory) return null;
  return {
    index: candidate.index,
    trajectory_id: trajectory.id,
    patch: trajectory.patch,
    value: candidate.score?.value ?? null,
    verify_status: candidate.verify?.status ?? null,
    ...rewardField(candidate.verify),
  };
}

/** Policy calls and tokens (prompt + completion) of the rollouts' trajectories; a shared prefix (src/solve/agent-prefix.ts) counted once. */
export function usageTotals(trajectories: readonly Trajectory[]): { policy_calls: number; tokens: number } {
  const tokens = (usage: Trajectory['usage']) => (usage?.prompt_tokens ?? 0) + (usage?.completion_tokens ?? 0);
  const carrying = trajectories.map(sharedPrefixUsage).filter((usage) => usage !== undefined);
  const repeated = carrying.slice(1);
  return {
    policy_calls:
      trajectories.reduce((sum, t) => sum + (t.usage?.calls ?? 0), 0) - repeated.reduce((sum, usage) => sum + (usage.calls ?? 0), 0),
    tokens: trajectories.reduce((sum, t) => sum + tokens(t.usage), 0) - repeated.reduce((sum, usage) => sum + tokens(usage), 0),
  };
}

/** The usage of the shared prefix a trajectory carries (`meta.shared_prefix`), if it carries one. */
export function sharedPrefixUsage(trajectory: Trajectory): Trajectory['usage'] | undefined {
  const prefix = trajectory.meta.shared_prefix as { usage?: Trajectory['usage'] } | undefined;
  return prefix?.usage ?? undefined;
}
