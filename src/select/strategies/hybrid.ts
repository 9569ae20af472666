/**
 * `hybrid`: tests first, then the value model. Order: usable patch first; then the test outcome
 * (resolved > not run = could not run (timeout, error) > unresolved > apply_failed); within one
 * outcome, scored before unscored and value descending; then tie-breaks: larger consensus cluster,
 * smaller patch, trajectory id. "Not run" sits above "unresolved" because a failing test is
 * evidence against a patch and a missing run is none; a run that could not run is no evidence
 * either (src/verify/outcome.ts), so it ranks with "not run", never below a failure. When no usable candidate has a test result, this is the value
 * strategy (itself degrading to consensus without scores) and the reason says so. Execution
 * checks (no regression first, then the reproduction pass share; checks.ts) come right after the
 * test outcome when any candidate has them, also when no candidate has a test result; Harbor's
 * reward (reward.ts) comes right after the test outcome, before the checks, when any candidate has one.
 */
import type { Selection, VerifyStatus } from '../../types/index.js';
import { prepare, type Prepared, type PreparedInstance } from '../prepare.js';
import { CHECKS_KEY_LENGTH, hasChecks, withChecks } from '../checks.js';
import { hasRewards, withReward } from '../reward.js';
import { withClean } from '../tamper-key.js';
import { assemble, formatValue, type Ordering } from '../rank.js';
import { withJudge } from '../judged.js';
import type { Candidate, JudgeScores, SelectOptions } from '../types.js';
import { valuePlan } from './value.js';
import { couldNotRun } from '../../verify/outcome.js';

/** Test outcome tiers, higher first; null means verification did not run for the candidate. */
export const VERIFY_TIER: Record<VerifyStatus | 'none', number> = {
  resolved: 5,
  none: 4,
  timeout: 4,
  error: 4,
  unresolved: 3,
  apply_failed: 1,
};

const tier = (p: Prepared): number => VERIFY_TIER[p.verify ?? 'none'];
const outcome = (p: Prepared): string =>
  p.verify === null ? 'not run' : couldNotRun(p.verify) ? `could not run (${p.verify})` : p.verify.replace('_', ' ');

export const hybridOrdering: Ordering = {
  strategy: 'hybrid',
  key: (p) => [Number(p.usable), tier(p), Number(p.value !== null), p.value ?? -1, p.clusterSize ?? 0, -p.changedLines],
  primary: 4,
  tieSubject: 'test outcome and value',
  tieBreaks: ['larger cluster', 'smaller patch'],
  why(chosen, _ranked, instance) {
    const peers = instance.candidates.filter((p) => p.usable && tier(p) === tier(chosen)).length;
    const valueText =
      peers === 1
        ? `the only candidate with that outcome (${chosen.value === null ? 'no score' : `value ${formatValue(chosen.value)}`})`
        : chosen.value === null
          ? `none of the ${peers} with that outcome has a score`
          : `highest value (${formatValue(chosen.value)}) of the ${peers} with that outcome`;
    let clause =
      chosen.verify === 'resolved'
        ? `chose ${chosen.id}: tests resolved, ${valueText}`
        : `no candidate resolved the tests; chose ${chosen.id} (tests: ${outcome(chosen)}), ${valueText}`;
    const better = instance.candidates
      .filter((p) => p.usable && p.value !== null && tier(p) < tier(chosen) && p.value > (chosen.value ?? -1))
      .sort((a, b) => b.value! - a.value!)[0];
    if (better) clause += `; ${better.id} had a higher value (${formatValue(better.value!)}) but tests: ${outcome(better)}`;
    return clause;
  },
};

/** Without given tests but with execution checks: the checks first (withChecks), then value. */
const checksOnlyOrdering: Ordering = {
  ...hybridOrdering,
  tieSubject: 'value',
  why: (chosen) => `chose ${chosen.id}${chosen.value === null ? '' : ` (value ${formatValue(chosen.value)})`}`,
};

/** The ordering hybrid selection uses on `instance`, and the fallback clause when it degrades. */
export function hybridPlan(instance: PreparedInstance): { ordering: Ordering; fallback?: string } {
  const usable = instance.candidates.filter((p) => p.usable);
  const noTests = usable.length > 0 && usable.every((p) => p.verify === null);
  if (noTests && !hasChecks(instance)) return valuePlan(instance, 'hybrid');
  // A tamper flag counts right after the test outcome, Harbor's reward and the checks.
  const checked = withChecks(noTests ? checksOnlyOrdering : hybridOrdering, instance, 2);
  const outcomes = withReward(checked, instance, 2);
  return {
    ordering: withClean(outcomes, instance, 2 + (hasChecks(instance) ? CHECKS_KEY_LENGTH : 0) + (hasRewards(instance) ? 1 : 0)),
  };
}

/**
 * Hybrid selection on prepared candidates: regressions and reproduction tests (when they ran)
 * right after the given tests' outcome; degrading to value when there is no execution evidence.
 * With `judge`, the pairwise judge breaks ties on every primary key (judged.ts).
 */
export function rankHybrid(instance: PreparedInstance, judge?: JudgeScores): Selection {
  const { ordering, fallback } = hybridPlan(instance);
  return assemble(instance, 'hybrid', judge ? withJudge(ordering, judge) : ordering, fallback);
}

/** Picks by test outcome, then value; see the module comment for the exact order. */
export function selectHybrid(candidates: Candidate[], options: SelectOptions = {}): Selection {
  return rankHybrid(prepare(candidates, options.instanceId));
}
