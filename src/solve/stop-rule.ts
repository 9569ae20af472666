/**
 * Stage: the stop rule. After each evaluated candidate, whether it is good enough to stop the
 * job: then the rollouts still running are cancelled and waves not started are skipped.
 */
import type { Score, VerifyResult } from '../types/index.js';
import type { SolveContext, Slot } from './solve-context.js';
import type { StopRule } from './solve-request.js';

/** Whether a finished candidate satisfies the stop rule; returns the reason when it does. */
export function stopRuleMet(rule: StopRule | null, score: Score | undefined, verify: VerifyResult | undefined, verifying: boolean): string | undefined {
  if (!rule) return undefined;
  if (!score || score.value < rule.min_value) return undefined;
  if (rule.require_resolved && verifying && !verify?.resolved) return undefined;
  const tested = rule.require_resolved && verifying ? ' and passed its tests' : '';
  return `a candidate scored ${score.value.toFixed(3)} ≥ ${rule.min_value}${tested}`;
}

/** Fires the stop rule (once per job) when `slot` meets it. */
export function applyStopRule(context: SolveContext, slot: Slot): void {
  const reason = stopRuleMet(context.request.stop_rule, slot.score, slot.verify, context.verifying);
  if (!reason || context.stoppedEarly) return;
  context.hooks.emit({ type: 'stop-rule', index: slot.index, reason });
  context.stop(reason);
}
