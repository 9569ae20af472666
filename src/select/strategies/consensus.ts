/**
 * `consensus`: a weighted vote over normalized patches (`normalize-patch.ts`). Usable candidates
 * with equal normalized patches form a cluster; cluster weight = size × mean value of its members,
 * a missing value counted as the mean value of the instance's scored usable candidates, and every
 * value counted as 1 when none is scored (then weight = size, a plain majority vote). Clusters are
 * ordered by weight, then size, then their best member (value, smaller patch, id); the winner is
 * the best member of the first cluster: scored first, highest value, smaller patch, then id.
 * Unusable candidates (empty or unparseable patch) come last, ordered by value then id.
 */
import type { Selection } from '../../types/index.js';
import { prepare, type PreparedInstance } from '../prepare.js';
import { assemble, formatValue, ordinal, type Ordering } from '../rank.js';
import type { Candidate, SelectOptions } from '../types.js';

export const consensusOrdering: Ordering = {
  strategy: 'consensus',
  key: (p) => [
    Number(p.usable),
    p.clusterWeight,
    p.clusterSize ?? 0,
    -(p.cluster ?? 0),
    Number(p.value !== null),
    p.value ?? -1,
    -p.changedLines,
  ],
  primary: 6,
  tieSubject: 'cluster and value',
  tieBreaks: ['smaller patch'],
  reasons(p, instance) {
    if (p.cluster === null) return [];
    const total = instance.clusters.length;
    return [`cluster weight ${formatValue(p.clusterWeight)} (${ordinal(p.cluster)} of ${total} cluster${total === 1 ? '' : 's'})`];
  },
  why(chosen, _ranked, instance) {
    const usable = instance.candidates.filter((p) => p.usable).length;
    const size = chosen.clusterSize ?? 1;
    const valueText = chosen.value === null ? 'no score' : `value ${formatValue(chosen.value)}`;
    let clause: string;
    if (instance.clusters.every((cluster) => cluster.length === 1)) {
      clause = instance.usableScored
        ? `all ${usable} usable patches differ, so the vote reduces to value: chose ${chosen.id} (${valueText})`
        : `all ${usable} usable patches differ and none is scored: chose ${chosen.id}, the smallest patch`;
    } else if (!instance.usableScored) {
      clause = `chose ${chosen.id} from the largest group of equal patches (${size} of ${usable} usable; no scores, so a plain majority vote)`;
    } else {
      clause = `chose ${chosen.id} (${valueText}), the best member of the heaviest cluster: ${size} equal patch${size === 1 ? '' : 'es'} of ${usable} usable, weight ${formatValue(chosen.clusterWeight)} (size × mean value)`;
    }
    const next = instance.clusters[1]?.[0];
    if (next && next.clusterWeight === chosen.clusterWeight && next.clusterSize === chosen.clusterSize) {
      const decidedBy =
        next.value !== chosen.value
          ? 'value'
          : next.changedLines !== chosen.changedLines
            ? 'smaller patch'
            : 'trajectory id (lexicographic)';
      clause += `; tied with ${next.id}'s cluster on weight and size, won on ${decidedBy}`;
    }
    return clause;
  },
};

/** Consensus selection on prepared candidates. */
export function rankByConsensus(instance: PreparedInstance): Selection {
  return assemble(instance, 'consensus', consensusOrdering);
}

/** Picks the best member of the heaviest cluster of equal patches; see the module comment. */
export function selectByConsensus(candidates: Candidate[], options: SelectOptions = {}): Selection {
  return rankByConsensus(prepare(candidates, options.instanceId));
}
