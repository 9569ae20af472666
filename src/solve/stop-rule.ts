/**
 * Stage: the stop rule. After each evaluated candidate, whether it is good enough to stop the
 * job: then the rollouts still running are cancelled and waves not started are skipped.
 */
import type { CandidateChecks, Score, VerifyResult } from '../types/index.js';
import { otherTestsFailed } from '../verify/other-failures.js';
import type { SolveContext, Slot } from './solve-context.js';
import type { StopRule } from './solve-request.js';

/**
 * Whether a finished candidate satisfies the stop rule; returns the reason when it does.
 * `checks`: its regression and reproduction evidence, when those checks ran for it.
 */
export function stopRuleMet(rule: StopRule | null, score: Score | undefined, verify: VerifyResult | undefined, verifying: boolean, checks?: CandidateChecks): string | undefined {
  if (!rule) return undefined;
  if (!score || score.value < rule.min_value) return undefined;
  // Never on a patch that did not apply, nor on one whose other tests failed (src/verify/other-failures.ts).
  if (verify && (verify.status === 'apply_failed' || otherTestsFailed(verify))) return undefined;
  if (rule.require_resolved && verifying && verify && !verify.resolved) return undefined;
  if (rule.require_resolved && verifying && !verify && !checks) return undefined;
  if (rule.require_checks && (!checks || checks.regressions === null || checks.regressions > 0 || checks.repro_passed < checks.repro_total)) return undefined;
  const tested = rule.require_resolved && verifying && verify ? ' and passed its tests' : '';
  const checked = rule.require_checks && checks ? `, passes ${checks.repro_passed}/${checks.repro_total} valid reproduction tests and breaks no test (regression check)` : '';
  return `a candidate scored ${score.value.toFixed(3)} ≥ ${rule.min_value}${tested}${checked}`;
}

/** Fires the stop rule (once per job) when `slot` meets it. */
export function applyStopRule(context: SolveContext, slot: Slot): void {
  const reason = stopRuleMet(context.request.stop_rule, slot.score, slot.verify, context.verifying, context.evidence.forCandidate(slot.index));
  if (!reason || context.stoppedEarly) return;
  context.hooks.emit({ type: 'stop-rule', index: slot.index, reason });
  context.stop(reason);
}
