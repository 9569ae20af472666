/**
 * The choose-default stage of `winnower train`: the selector the folder ships. Its default
 * strategy is `learned` only when the learned selector beat the best trivial selector on agents
 * training never saw (the source check), else `robust`; its fitted trajectory weights stay in use
 * unless that check shows them worse than the fixed priors.
 */
import type { LearnedSelector } from '../select/index.js';
import type { TrajectoryWeights } from '../select/trajectory-weights.js';
import { LEARNED, LEARNED_FIXED, ROBUST, ROBUST_FIXED } from './eval-pools.js';
import type { ScopeTable } from './evaluate.js';
import type { SplitVerdict } from './model-card.js';
import type { SourceCheck } from './source-check.js';

export function chooseDefault(
  fitted: LearnedSelector,
  sourceVerdict: SplitVerdict | undefined,
  check: Pick<SourceCheck, 'table' | 'withTrajectories'>,
  log: (line: string) => void,
): LearnedSelector {
  const trajectory = fitted.trajectory ? checkTrajectoryWeights(fitted.trajectory, check.table, check.withTrajectories) : undefined;
  if (trajectory) log(`trajectory weights: ${trajectory.use ? 'used' : 'not used'} (${trajectory.reason})`);
  const selector: LearnedSelector = {
    ...fitted,
    ...(trajectory ? { trajectory } : {}),
    default_strategy: sourceVerdict?.learned_beats_trivial ? 'learned' : 'robust',
    default_reason: !sourceVerdict
      ? 'no source-held-out evaluation ran, so the learned selector is unchecked on agents it never saw: robust is the default'
      : sourceVerdict.learned_beats_trivial
        ? `the learned selector beat the best trivial selector (${sourceVerdict.best_trivial}) on ${sourceVerdict.split}: learned is the default`
        : `the learned selector did not beat the best trivial selector (${sourceVerdict.best_trivial}) on ${sourceVerdict.split}: robust is the default`,
  };
  log(`default strategy: ${selector.default_strategy} (${selector.default_reason})`);
  return selector;
}

/**
 * The fitted trajectory weights, kept in use only when the source-held-out table shows robust and
 * learned with them at least as good (selected@1) as with their fixed priors; without a
 * source-held-out check on candidates with trajectories they stay in use, and the reason says they are unchecked.
 */
function checkTrajectoryWeights(weights: TrajectoryWeights, table: ScopeTable | undefined, checked: boolean): TrajectoryWeights {
  const fitted = `fitted on ${weights.rows} labelled candidates with trajectories in ${weights.pools} pools with both outcomes`;
  if (!table || !checked)
    return { ...weights, use: true, reason: `${fitted}; unchecked: no source-held-out evaluation held out a candidate with a trajectory` };
  const selected = (name: string) => table.rows.find((r) => r.selector === name)?.selected_at_1.value ?? null;
  const pct = (x: number | null) => (x === null ? 'n/a' : `${(100 * x).toFixed(1)}%`);
  const pairs = [
    [ROBUST, ROBUST_FIXED],
    [LEARNED, LEARNED_FIXED],
  ].map(([withWeights, fixed]) => ({ name: withWeights!, fitted: selected(withWeights!), fixed: selected(fixed!) }));
  const worse = pairs.filter((p) => p.fitted !== null && p.fixed !== null && p.fitted < p.fixed - 1e-9);
  const figures = pairs.map((p) => `${p.name} ${pct(p.fitted)} vs ${pct(p.fixed)} fixed`).join(', ');
  return worse.length
    ? { ...weights, use: false, reason: `${fitted}; not used: on ${table.scope} they did worse than the fixed priors (${figures})` }
    : { ...weights, use: true, reason: `${fitted}; used: on ${table.scope} at least as good as the fixed priors (${figures})` };
}
