/**
 * `judge`: the pairwise judge's verdicts decide (src/judge: each pair asked in both orders, a
 * tournament of O(N·k) comparisons). Order: usable patch first; then judged before not judged;
 * win rate (wins / games) descending; then tie-breaks: scored before unscored, value, larger
 * consensus cluster, smaller patch, trajectory id. Without verdicts (no judge configured, the
 * judge failed, one usable candidate) this is the value strategy and the reason says why.
 */
import type { Selection } from '../../types/index.js';
import { describeJudged, judgedRate } from '../judged.js';
import type { PreparedInstance } from '../prepare.js';
import { assemble, type Ordering } from '../rank.js';
import type { JudgeScores } from '../types.js';
import { rankByValue } from './value.js';

export function judgeOrdering(judge: JudgeScores): Ordering {
  return {
    strategy: 'judge',
    key: (p) => {
      const rate = judgedRate(p, judge);
      return [
        Number(p.usable),
        Number(rate !== null),
        rate ?? -1,
        Number(p.value !== null),
        p.value ?? -1,
        p.clusterSize ?? 0,
        -p.changedLines,
      ];
    },
    primary: 3,
    tieSubject: 'pairwise wins',
    tieBreaks: ['having a score', 'higher value', 'larger cluster', 'smaller patch'],
    reasons: (p) => {
      const judged = describeJudged(p, judge);
      return [judged ?? `judge ${judge.model}: not compared`];
    },
    why(chosen, _ranked, instance) {
      const judged = instance.candidates.filter((p) => p.usable && judgedRate(p, judge) !== null).length;
      const entry = judge.byId.get(chosen.id);
      const wins = Math.round((entry?.wins ?? 0) * 100) / 100;
      return `chose ${chosen.id}, the most pairwise wins by judge ${judge.model} (${wins} of ${entry?.games ?? 0}, both orders averaged) of ${judged} judged candidates`;
    },
  };
}

/** Judge selection on prepared candidates; value (and its own fallbacks) when there are no verdicts. */
export function rankJudge(instance: PreparedInstance, judge: JudgeScores | undefined, unavailable?: string): Selection {
  const judgedAny = judge !== undefined && instance.candidates.some((p) => p.usable && judgedRate(p, judge) !== null);
  if (!judgedAny) return rankByValue(instance, 'judge', unavailable ?? 'no candidate was compared by a judge');
  return assemble(instance, 'judge', judgeOrdering(judge!));
}
