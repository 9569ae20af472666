/**
 * The pairwise judge in an ordering (`hybrid`): its win rate is the first tie-break, so it only
 * reorders candidates tied on every primary key, and the reasons name it. Also the tie groups the
 * judge is asked about, and the tie counts reported before and after it.
 */
import { quantize, type Prepared, type PreparedInstance } from './prepare.js';
import { rank, type Ordering } from './rank.js';
import type { JudgeScores } from './types.js';

/**
 * Wins / games of `p`, or null when the judge did not compare it. Rounded to 1e-9, so that two
 * candidates the judge found equal (0.5 each way) stay tied whatever the float rounding.
 */
export function judgedRate(p: Prepared, judge: JudgeScores): number | null {
  const entry = judge.byId.get(p.id);
  return entry && entry.games > 0 ? quantize(entry.wins / entry.games) : null;
}

/** "judge m: 2.6 of 4 pairwise wins (both orders averaged)", or null when not compared. */
export function describeJudged(p: Prepared, judge: JudgeScores): string | null {
  const entry = judge.byId.get(p.id);
  if (!entry || entry.games === 0) return null;
  const wins = Math.round(entry.wins * 100) / 100;
  return `judge ${judge.model}: ${wins} of ${entry.games} pairwise win${entry.games === 1 ? '' : 's'} (both orders averaged)`;
}

/** `ordering` with the judge's win rate inserted as its first tie-break (right after the primary entries). */
export function withJudge(ordering: Ordering, judge: JudgeScores): Ordering {
  return {
    ...ordering,
    key: (p) => {
      const key = ordering.key(p);
      return [...key.slice(0, ordering.primary), judgedRate(p, judge) ?? -1, ...key.slice(ordering.primary)];
    },
    tieBreaks: [`the pairwise judge (${judge.model})`, ...ordering.tieBreaks],
    reasons: (p, instance) => {
      const judged = describeJudged(p, judge);
      return [...(ordering.reasons?.(p, instance) ?? []), ...(judged ? [judged] : [])];
    },
  };
}

/**
 * The usable candidates in `ordering`'s rank, and the groups (two or more, in rank order) that tie
 * on its first `primary` key entries.
 */
export function tiedGroups(
  instance: PreparedInstance,
  ordering: Ordering,
  primary = ordering.primary,
): { order: Prepared[]; groups: Prepared[][] } {
  const order = rank(instance, ordering).filter((p) => p.usable);
  const groups: Prepared[][] = [];
  let current: Prepared[] = [];
  let head = '';
  for (const p of order) {
    const prefix = ordering.key(p).slice(0, primary).join(',');
    if (current.length > 0 && prefix === head) current.push(p);
    else {
      if (current.length > 1) groups.push(current);
      current = [p];
      head = prefix;
    }
  }
  if (current.length > 1) groups.push(current);
  return { order, groups };
}
