/**
 * Harbor's reward in an ordering (`hybrid`): within one test outcome, the candidate with the higher
 * reward comes first (two unresolved candidates of a task with partial credit are not equal), then
 * the strategy's own criteria. Inserted only when some candidate has a reward, so an ordering
 * without Harbor tasks is unchanged (docs/harbor.md#verification).
 */
import type { Prepared, PreparedInstance } from './prepare.js';
import { formatValue, type Ordering } from './rank.js';

/** The candidate's reward, -1 when it has none (a verifier that could not be graded, or did not run). */
export const rewardKey = (p: Prepared): number => p.candidate.verify?.reward?.value ?? -1;

export function hasRewards(instance: PreparedInstance): boolean {
  return instance.candidates.some((p) => p.usable && p.candidate.verify?.reward !== undefined);
}

/** `ordering` with the reward inserted at `at` as a primary criterion, and named in each candidate's reasons. */
export function withReward(ordering: Ordering, instance: PreparedInstance, at: number): Ordering {
  if (!hasRewards(instance)) return ordering;
  return {
    ...ordering,
    key: (p) => {
      const key = ordering.key(p);
      return [...key.slice(0, at), rewardKey(p), ...key.slice(at)];
    },
    primary: ordering.primary + 1,
    tieSubject: `reward and ${ordering.tieSubject}`,
    reasons: (p, inner) => [
      ...(p.candidate.verify?.reward ? [`reward ${formatValue(p.candidate.verify.reward.value)}`] : []),
      ...(ordering.reasons?.(p, inner) ?? []),
    ],
    why(chosen, ranked, inner) {
      const clause = ordering.why(chosen, ranked, inner);
      const reward = chosen.candidate.verify?.reward;
      return reward ? `${clause}; reward ${formatValue(reward.value)} (resolved at ≥ ${formatValue(reward.threshold)})` : clause;
    },
  };
}
