/**
 * Selection strategies for the candidates of one instance: `select(strategy, candidates)`.
 * The exact orders and tie-breaks are in docs/selection.md.
 */
import { wnwError } from '../errors.js';
import { Strategy, type Selection } from '../types/index.js';
import { rankByConsensus } from './strategies/consensus.js';
import { hybridPlan, rankHybrid } from './strategies/hybrid.js';
import { judgeOrdering, rankJudge } from './strategies/judge.js';
import { tiedGroups, withJudge } from './judged.js';
import { rankLearned, type LearnedSelector } from './strategies/learned.js';
import { prepare } from './prepare.js';
import { tamperContext } from './tamper.js';
import { rankRobust } from './strategies/robust.js';
import { gate, unusableOf } from './usable-gate.js';
import type { Candidate, SelectOptions } from './types.js';
import { rankByValue, valuePlan } from './strategies/value.js';

/**
 * The strategy used when a request names none: hybrid when tests run (their outcome is the
 * strongest evidence); else the model folder's default (`default_strategy` in selector.json:
 * `learned` only when `winnower train` found it beats every trivial selector on sources it never
 * saw, else `robust`; `learned` for a selector.json written before the field existed); value
 * when the folder has no selector.
 */
export function defaultStrategy(verifying: boolean, scorer?: { selector?: LearnedSelector }): Strategy {
  return verifying ? 'hybrid' : scorer?.selector ? (scorer.selector.default_strategy ?? 'learned') : 'value';
}

/**
 * Ranks `candidates` (all of one instance) with `strategy` and explains the choice. The strategy
 * runs inside the gate of usable-gate.ts: empty, unparseable, refused and non-applying patches
 * are never chosen and rank last, whatever the strategy.
 */
export function select(strategy: Strategy, candidates: Candidate[], options: SelectOptions = {}): Selection {
  const parsed = Strategy.safeParse(strategy);
  if (!parsed.success) {
    throw wnwError('WNW_ERR_INPUT_INVALID', `unknown selection strategy "${String(strategy)}"; use one of ${Strategy.options.join(', ')}`, {
      details: { field: 'strategy' },
    });
  }
  return gate(parsed.data, candidates, options.instanceId, (usable, instanceId) =>
    rankWith(parsed.data, usable, { ...options, instanceId }),
  );
}

/** The strategy's own ranking, without the gate. */
function rankWith(strategy: Strategy, candidates: Candidate[], options: SelectOptions): Selection {
  const instance = prepare(candidates, options.instanceId, tamperContext(options.task));
  switch (strategy) {
    case 'value':
      return rankByValue(instance);
    case 'consensus':
      return rankByConsensus(instance);
    case 'hybrid':
      return rankHybrid(instance, options.judge);
    case 'learned':
      return rankLearned(instance, options.selector ? { selector: options.selector, task: options.task } : undefined);
    case 'robust':
      return rankRobust(instance, options.task, options.selector?.priors, options.selector?.trajectory);
    case 'judge':
      return rankJudge(instance, options.judge, options.judgeUnavailable);
  }
}

/** What the pairwise judge compares for one selection, and the ties it leaves (judgeTies). */
export interface JudgeTies {
  /** The usable candidates' ids in the strategy's order without the judge. */
  order: string[];
  /** Ids tied on every primary key, two or more per group, in that order. */
  groups: string[][];
  usable: number;
  /** Usable candidates in a tie group. */
  tied: number;
}

/**
 * The ties of `strategy` among the usable candidates (the gate's, usable-gate.ts): for `hybrid`,
 * those on every key before the judge's; for `judge`, those of the value order it falls back to.
 * With `options.judge`, the ties left once the judge's win rate is a key too (hybrid: its first
 * tie-break; judge: its own order). Other strategies use no judge: no groups.
 */
export function judgeTies(strategy: Strategy, candidates: Candidate[], options: SelectOptions = {}): JudgeTies {
  const usable = candidates.filter((candidate) => {
    try {
      return unusableOf(candidate) === null;
    } catch {
      return false;
    }
  });
  const instance = prepare(usable, options.instanceId ?? candidates[0]?.trajectory.instance_id);
  const judge = options.judge;
  let ties: ReturnType<typeof tiedGroups> | undefined;
  if (strategy === 'hybrid') {
    const { ordering } = hybridPlan(instance);
    ties = judge ? tiedGroups(instance, withJudge(ordering, judge), ordering.primary + 1) : tiedGroups(instance, ordering);
  } else if (strategy === 'judge') {
    ties = tiedGroups(instance, judge ? judgeOrdering(judge) : valuePlan(instance, 'judge').ordering);
  }
  const groups = (ties?.groups ?? []).map((group) => group.map((p) => p.id));
  return {
    order: (ties?.order ?? []).map((p) => p.id),
    groups,
    usable: instance.candidates.length,
    tied: groups.reduce((total, group) => total + group.length, 0),
  };
}

export type { Candidate, JudgeScores, SelectOptions } from './types.js';
export { selectByValue } from './strategies/value.js';
export { selectByConsensus } from './strategies/consensus.js';
export { selectHybrid, VERIFY_TIER } from './strategies/hybrid.js';
export { patchShape, type PatchShape, type FileDiff, type HunkLine } from './patch-shape.js';
export { normalizePatch, type NormalizedPatch } from './normalize-patch.js';
export { unusableOf } from './usable-gate.js';
export { rankRobust, robustScore, robustAgreement, ROBUST_WEIGHTS } from './strategies/robust.js';
export {
  TrajectoryWeights,
  TRAJECTORY_SIGNAL_NAMES,
  ROBUST_TRAJECTORY_PRIOR,
  LEARNED_TRAJECTORY_PRIOR,
  type TrajectorySignalName,
} from './trajectory-weights.js';
export { LearnedSelector, contributions, SELECTOR_FILE, SELECTOR_FORMAT } from './strategies/learned.js';
export {
  SIGNALS,
  TRAJECTORY_SIGNALS,
  VERIFY_SIGNALS,
  CHECK_SIGNALS,
  computeSignals,
  isTestPath,
  type SignalName,
  type Signals,
} from './signals.js';
