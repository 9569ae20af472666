/**
 * One validation pool as the evaluation table sees it: each candidate's label and shape, the
 * trained model's values, and what the learned and robust strategies choose (with their scores,
 * for the within-pool AUC), computed through the same selection code that serves requests.
 */
import { computeSignals, contributions, robustScore, type Candidate, type LearnedSelector } from '../select/index.js';
import { rankLearned } from '../select/strategies/learned.js';
import { prepare } from '../select/prepare.js';
import { rankRobust } from '../select/strategies/robust.js';
import type { Score } from '../types/index.js';
import type { LabelledCandidate } from './dataset.js';
import type { EvalPool } from './evaluate.js';

export const TRAINED = 'trained model';
export const UNTRAINED = 'untrained model';
export const LEARNED = 'learned selector';
export const ROBUST = 'robust';
/** robust and learned with their fixed trajectory priors, beside the same strategies with fitted trajectory weights (when the selector has them). */
export const ROBUST_FIXED = 'robust, fixed trajectory priors';
export const LEARNED_FIXED = 'learned selector, fixed trajectory priors';

/** The pool of `members` (one pool's candidates) given each one's score (undefined: not scored). */
export function evalPool(
  members: LabelledCandidate[],
  scores: Array<Score | undefined>,
  selector: LearnedSelector,
  extraValues: Record<string, Array<number | null>> = {},
): EvalPool {
  const task = members[0]!.task;
  const candidates: Candidate[] = members.map((c, i) => ({ trajectory: c.trajectory, ...(scores[i] ? { score: scores[i] } : {}) }));
  const prepared = prepare(candidates, members[0]!.trajectory.instance_id);
  const signals = computeSignals(prepared, task);
  const learned = rankLearned(prepared, { selector, task });
  const robust = rankRobust(prepared, task, selector.priors, selector.trajectory);
  const fixed: LearnedSelector = { ...selector, trajectory: undefined };
  const learnedFixed = selector.trajectory ? rankLearned(prepared, { selector: fixed, task }) : learned;
  const robustFixed = selector.trajectory ? rankRobust(prepared, task, selector.priors) : robust;
  const weights = selector.trajectory?.use ? selector.trajectory.robust : undefined;
  const tieBreak = (i: number) => 1e-6 * Math.log1p(prepared.candidates[i]!.changedLines);
  return {
    pool: members[0]!.pool,
    benchmark: members[0]!.benchmark,
    candidates: prepared.candidates.map((p, i) => ({
      id: p.id,
      resolved: members[i]!.resolved,
      usable: p.usable,
      changedLines: p.changedLines,
      clusterKey: p.normalized?.key ?? null,
    })),
    values: {
      [TRAINED]: scores.map((s) => s?.value ?? null),
      ...extraValues,
      [LEARNED]: signals.map((s) => contributions(selector, s).total),
      // The robust ranking's own order: agreement, then the smaller patch (a tie-break too small to reorder agreement).
      [ROBUST]: signals.map((s, i) => robustScore(s, weights) - tieBreak(i)),
      [LEARNED_FIXED]: signals.map((s) => contributions(fixed, s).total),
      [ROBUST_FIXED]: signals.map((s, i) => robustScore(s) - tieBreak(i)),
    },
    chosen: {
      [LEARNED]: learned.chosen,
      [ROBUST]: robust.chosen,
      [LEARNED_FIXED]: learnedFixed.chosen,
      [ROBUST_FIXED]: robustFixed.chosen,
    },
  };
}
