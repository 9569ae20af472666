/**
 * `learned`: one linear score per candidate over the standardised group signals (`signals.ts`),
 * with weights that `winnower train` fitted on labelled pools and stored in the model folder
 * (`selector.json`). Order: usable patch first, then the score, then smaller patch, then id. The
 * reasons list each candidate's largest contributions, so a choice explains itself.
 */
import type { Selection, Task } from '../../types/index.js';
import { quantize, type Prepared, type PreparedInstance } from '../prepare.js';
import { CHECKS_KEY_LENGTH, hasChecks, withChecks } from '../checks.js';
import { withClean } from '../tamper-key.js';
import { assemble, formatValue, type Ordering } from '../rank.js';
import type { LearnedSelector } from '../../types/selector.js';
import { computeSignals, type SignalName, type Signals } from '../signals.js';
import { TRAJECTORY_SIGNAL_NAMES, trajectoryWeightsFor, type TrajectorySignalName } from '../trajectory-weights.js';
import { rankByValue } from './value.js';

export { LearnedSelector, SELECTOR_FILE, SELECTOR_FORMAT } from '../../types/selector.js';

/**
 * Each signal's contribution (weight × standardised value) and their sum. With fitted trajectory
 * weights in use (selector.json `trajectory`), those give the trajectory signals' contributions
 * (weight × raw value) in place of their entries.
 */
export function contributions(
  selector: LearnedSelector,
  signals: Signals,
): { total: number; parts: Array<{ name: SignalName; value: number }> } {
  const fitted = trajectoryWeightsFor('learned', selector.trajectory);
  let total = 0;
  const parts = selector.signals.map((signal) => {
    const own =
      fitted && (TRAJECTORY_SIGNAL_NAMES as readonly SignalName[]).includes(signal.name)
        ? fitted[signal.name as TrajectorySignalName]
        : undefined;
    const value = own !== undefined ? own * signals[signal.name] : (signal.weight * (signals[signal.name] - signal.mean)) / signal.std;
    total += value;
    return { name: signal.name, value };
  });
  return { total, parts };
}

export interface LearnedContext {
  selector: LearnedSelector;
  task?: Pick<Task, 'problem_statement'>;
}

/** Ranks by the learned score; without a selector this is the value strategy, and says so. */
export function rankLearned(instance: PreparedInstance, context: LearnedContext | undefined): Selection {
  if (!context) return rankByValue(instance, 'learned', 'no learned selector in the model folder');
  const signals = computeSignals(instance, context.task);
  const scored = new Map<Prepared, ReturnType<typeof contributions>>();
  instance.candidates.forEach((p, index) => scored.set(p, contributions(context.selector, signals[index]!)));
  const own: Ordering = {
    strategy: 'learned',
    key: (p) => [Number(p.usable), quantize(scored.get(p)!.total), -p.changedLines],
    primary: 2,
    tieSubject: 'learned score',
    tieBreaks: ['smaller patch'],
    reasons(p) {
      const { total, parts } = scored.get(p)!;
      const top = [...parts]
        .filter((part) => Math.abs(part.value) >= 0.005)
        .sort((a, b) => Math.abs(b.value) - Math.abs(a.value))
        .slice(0, 4);
      const listed = top.map((part) => `${part.name} ${part.value >= 0 ? '+' : ''}${formatValue(part.value)}`).join(', ');
      return [`learned score ${formatValue(total)}${listed ? ` (${listed})` : ''}`];
    },
    why(chosen, ranked) {
      const usable = ranked.filter((p) => p.usable).length;
      const top = [...scored.get(chosen)!.parts].sort((a, b) => b.value - a.value)[0];
      const lead = top && top.value > 0 ? `, most from ${top.name}` : '';
      return `chose ${chosen.id}: highest learned score (${formatValue(scored.get(chosen)!.total)}${lead}) of ${usable} usable candidate${usable === 1 ? '' : 's'}`;
    },
  };
  // Execution checks (when they ran) come before the learned score, which then breaks ties.
  // The tamper flag right after them: the checks are learned's only outcome entries.
  return assemble(instance, 'learned', withClean(withChecks(own, instance, 1), instance, hasChecks(instance) ? 1 + CHECKS_KEY_LENGTH : 1));
}
