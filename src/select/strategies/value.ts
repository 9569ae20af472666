/**
 * `value`: the highest value-model score wins. Order: usable patch first; then scored before
 * unscored; value descending; then tie-breaks: larger consensus cluster, smaller patch (added +
 * removed lines), trajectory id. When no usable candidate has a score (scorer outage), the
 * consensus order is used instead and the reason says so.
 */
import type { Selection, Strategy } from '../../types/index.js';
import { consensusOrdering } from './consensus.js';
import { prepare, type PreparedInstance } from '../prepare.js';
import { assemble, formatValue, type Ordering } from '../rank.js';
import type { Candidate, SelectOptions } from '../types.js';
import { withClean } from '../tamper-key.js';

export const valueOrdering: Ordering = {
  strategy: 'value',
  key: (p) => [Number(p.usable), Number(p.value !== null), p.value ?? -1, p.clusterSize ?? 0, -p.changedLines],
  primary: 3,
  tieSubject: 'value',
  tieBreaks: ['larger cluster', 'smaller patch'],
  why(chosen, _ranked, instance) {
    const scored = instance.candidates.filter((p) => p.usable && p.value !== null).length;
    let clause = `chose ${chosen.id}, the highest value (${formatValue(chosen.value ?? 0)}) of ${scored} scored candidate${scored === 1 ? '' : 's'} with a usable patch`;
    const better = instance.candidates
      .filter((p) => !p.usable && p.value !== null && p.value > (chosen.value ?? 0))
      .sort((a, b) => b.value! - a.value!)[0];
    if (better) clause += `; ${better.id} scored higher (${formatValue(better.value!)}) but its patch is ${better.shape.kind}`;
    return clause;
  },
};

/**
 * The ordering value selection uses on `instance` (consensus when nothing usable is scored) and
 * the fallback clause when it is not value's own. `requested` is 'hybrid' when hybrid selection
 * found no test results and fell back here, or 'learned' / 'judge' (with `missing` saying why)
 * when there was no learned selector or no judge verdicts.
 */
export function valuePlan(
  instance: PreparedInstance,
  requested: Strategy = 'value',
  missing?: string,
): { ordering: Ordering; fallback?: string } {
  const usable = instance.candidates.some((p) => p.usable);
  if (usable && !instance.usableScored) {
    const why =
      requested === 'hybrid'
        ? 'no candidate had test results or a score'
        : instance.anyScored
          ? 'no candidate with a usable patch had a score'
          : 'no candidate had a score';
    // The judge's own reason first: a failed judge and a scorer outage together still say both.
    const prefix = requested === 'judge' && missing ? `${missing}, and ` : '';
    return { ordering: consensusOrdering, fallback: `${prefix}${why}, so ${requested} selection fell back to consensus` };
  }
  const fallback =
    requested === 'hybrid'
      ? 'no candidate had test results, so hybrid selection fell back to value'
      : missing
        ? `${missing}, so ${requested} selection fell back to value`
        : undefined;
  // Value ranks by no outcome, so a tamper flag counts right after "usable".
  return { ordering: withClean(valueOrdering, instance, 1), ...(fallback ? { fallback } : {}) };
}

/** Value selection on prepared candidates, degrading to consensus when nothing usable is scored (valuePlan). */
export function rankByValue(instance: PreparedInstance, requested: Strategy = 'value', missing?: string): Selection {
  const plan = valuePlan(instance, requested, missing);
  return assemble(instance, requested, plan.ordering, plan.fallback);
}

/** Picks the candidate with the highest value; see the module comment for the exact order. */
export function selectByValue(candidates: Candidate[], options: SelectOptions = {}): Selection {
  return rankByValue(prepare(candidates, options.instanceId));
}
