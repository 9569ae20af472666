/**
 * `robust`: the zero-shot default, built only from evidence that holds on agents no model saw.
 * Order: usable patch first; then the test outcome when verification ran (hybrid's tiers); then
 * agreement with the other candidates (mean Jaccard overlap of changed lines plus of touched
 * files, `signals.ts`), plus a prior for a trajectory whose last test run passed; then smaller
 * patch, then id. No value model and no style signal (size, test edits, debug output) takes part:
 * those separate the systems a model was trained on, not good patches from bad ones, and on
 * sources held out of training they rank worse than a random pick (bench/results/train-sources.md).
 * With two candidates agreement is symmetric, so the choice falls to the smaller patch.
 * With own-history priors (selector.json `priors`, from `winnower train` on labelled runs of the
 * same configurations), the configuration's shrunk resolve rate comes before agreement: a record
 * of the same agent on other tasks is the evidence that transfers best (docs/training.md, "Own history").
 * With fitted trajectory weights (selector.json `trajectory`, from `winnower train` on labelled
 * pools with trajectories), those replace the fixed trajectory prior in the score.
 */
import type { Selection, Task } from '../../types/index.js';
import { CHECKS_KEY_LENGTH, hasChecks, withChecks } from '../checks.js';
import { withClean } from '../tamper-key.js';
import { VERIFY_TIER } from './hybrid.js';
import { quantize, type Prepared, type PreparedInstance } from '../prepare.js';
import { assemble, formatValue, type Ordering } from '../rank.js';
import { configPrior, type Priors } from '../priors.js';
import { computeSignals, type Signals } from '../signals.js';
import {
  ROBUST_TRAJECTORY_PRIOR,
  TRAJECTORY_SIGNAL_NAMES,
  trajectoryWeightsFor,
  type TrajectorySignalName,
  type TrajectoryWeights,
} from '../trajectory-weights.js';

/**
 * Weights on raw signals. Agreement of lines and of files weigh the same (chosen by
 * leave-one-source-out: bench/results/train-sources.md); the trajectory prior is not in any
 * patch-only training data and is stated, not fitted.
 */
export const ROBUST_WEIGHTS = {
  line_agreement: 1,
  file_agreement: 1,
  traj_last_test_passed: ROBUST_TRAJECTORY_PRIOR.traj_last_test_passed,
} as const;

/** Agreement alone: the part of the robust score no trajectory weight touches. */
export function robustAgreement(signals: Signals): number {
  return ROBUST_WEIGHTS.line_agreement * signals.line_agreement + ROBUST_WEIGHTS.file_agreement * signals.file_agreement;
}

/** The robust score of one candidate's signals (higher is better); `trajectory`: fitted weights in place of the fixed prior. */
export function robustScore(signals: Signals, trajectory: Record<TrajectorySignalName, number> = ROBUST_TRAJECTORY_PRIOR): number {
  return TRAJECTORY_SIGNAL_NAMES.reduce((score, name) => score + trajectory[name] * signals[name], robustAgreement(signals));
}

const tier = (p: Prepared): number => VERIFY_TIER[p.verify ?? 'none'];

/** Ranks by verification, then agreement, then smaller patch; see the module comment. */
export function rankRobust(
  instance: PreparedInstance,
  task?: Pick<Task, 'problem_statement'>,
  priors?: Priors,
  trajectory?: TrajectoryWeights,
): Selection {
  const signals = computeSignals(instance, task);
  const weights = trajectoryWeightsFor('robust', trajectory);
  const raw = signals.map((s) => robustScore(s, weights));
  const score = new Map<Prepared, number>(instance.candidates.map((p, i) => [p, quantize(raw[i]!)]));
  const trajectoryPart = new Map<Prepared, number>(instance.candidates.map((p, i) => [p, raw[i]! - robustAgreement(signals[i]!)]));
  const prior = new Map<Prepared, number>(
    instance.candidates.map((p) => [p, priors ? quantize(configPrior(priors, p.candidate.trajectory)) : 0]),
  );
  const own: Ordering = {
    strategy: 'robust',
    key: (p) => [Number(p.usable), tier(p), prior.get(p)!, score.get(p)!, -p.changedLines],
    primary: 4,
    tieSubject: priors ? 'test outcome, configuration record and agreement' : 'test outcome and agreement',
    tieBreaks: ['smaller patch'],
    reasons: (p) =>
      p.usable
        ? [
            ...(priors ? [`configuration resolved ${formatValue(prior.get(p)!)} of its past tasks (shrunk)`] : []),
            `agreement ${formatValue(score.get(p)!)}`,
            ...(weights
              ? [`of which trajectory ${formatValue(trajectoryPart.get(p)!)} (weights fitted on ${trajectory!.rows} labelled candidates)`]
              : []),
          ]
        : [],
    why(chosen, ranked) {
      const usable = ranked.filter((p) => p.usable);
      const tested = chosen.verify ? `tests: ${chosen.verify.replace('_', ' ')}, ` : '';
      if (priors && usable.some((p) => prior.get(p) !== prior.get(chosen))) {
        return `chose ${chosen.id}: ${tested}its configuration has the best record (${formatValue(prior.get(chosen)!)} resolved, shrunk) of ${usable.length} usable, agreement ${formatValue(score.get(chosen)!)}`;
      }
      const distinct = new Set(usable.map((p) => score.get(p))).size;
      if (usable.length > 1 && distinct === 1)
        return `chose ${chosen.id}: ${tested}all ${usable.length} usable candidates agree equally with the others, so the smaller patch won`;
      if (weights)
        return `chose ${chosen.id}: ${tested}highest agreement with the other candidates plus fitted trajectory weights (${formatValue(score.get(chosen)!)}, trajectory ${formatValue(trajectoryPart.get(chosen)!)}) of ${usable.length} usable`;
      return `chose ${chosen.id}: ${tested}highest agreement with the other candidates (${formatValue(score.get(chosen)!)}) of ${usable.length} usable`;
    },
  };
  // The checks go after "usable", the tamper flag after the checks and the test outcome.
  return assemble(instance, 'robust', withClean(withChecks(own, instance, 1), instance, hasChecks(instance) ? 2 + CHECKS_KEY_LENGTH : 2));
}
