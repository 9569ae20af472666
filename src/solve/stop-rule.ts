/**
 * Stage: the stop rule. After each evaluated candidate, whether it is good enough to stop the
 * job: then the rollouts still running are cancelled and waves not started are skipped.
 *
 * In a mixed job (several `policies`) the rule fires only once every policy has had a rollout
 * end (finished and evaluated, or failed): otherwise the fastest policy's first good candidate
 * would cancel the others before they produced anything, the job would be a one-policy job, and
 * the store would never get the labelled candidates per configuration that own-history priors
 * are learned from. A candidate that meets the rule earlier is remembered and the rule fires
 * (naming it) when the last policy is heard from.
 */
import type { CandidateChecks, Score, VerifyResult } from '../types/index.js';
import { otherTestsFailed } from '../verify/other-failures.js';
import { couldNotRun } from '../verify/outcome.js';
import type { SolveContext, Slot } from './solve-context.js';
import type { StopRule } from './solve-request.js';

/**
 * Whether a finished candidate satisfies the stop rule; returns the reason when it does.
 * `checks`: its regression and reproduction evidence, when those checks ran for it.
 */
export function stopRuleMet(
  rule: StopRule | null,
  score: Score | undefined,
  verify: VerifyResult | undefined,
  verifying: boolean,
  checks?: CandidateChecks,
): string | undefined {
  if (!rule) return undefined;
  if (!score || score.value < rule.min_value) return undefined;
  // A run that could not run (timeout, error: src/verify/outcome.ts) is evidence of neither: what
  // its partial log shows is no failure, and it never stands for a resolved run.
  const ran = verify && !couldNotRun(verify.status) ? verify : undefined;
  // Never on a patch that did not apply, nor on one whose other tests failed (src/verify/other-failures.ts).
  if (ran && (ran.status === 'apply_failed' || otherTestsFailed(ran))) return undefined;
  if (rule.require_resolved && verifying && verify && !ran?.resolved) return undefined;
  if (rule.require_resolved && verifying && !verify && !checks) return undefined;
  if (rule.require_checks && (!checks || checks.regressions === null || checks.regressions > 0 || checks.repro_passed < checks.repro_total))
    return undefined;
  const tested = rule.require_resolved && verifying && verify ? ' and passed its tests' : '';
  const checked =
    rule.require_checks && checks
      ? `, passes ${checks.repro_passed}/${checks.repro_total} valid reproduction tests and breaks no test (regression check)`
      : '';
  return `a candidate scored ${score.value.toFixed(3)} ≥ ${rule.min_value}${tested}${checked}`;
}

/** Whether every policy of the job has a rollout that ended (`settled`), counting `slot` as ended. */
function everyPolicyHeard(context: SolveContext, slot?: Slot): boolean {
  return context.plan.every((planned) =>
    context.slots.some((other) => other.policy === planned.index && (other.settled || other === slot)),
  );
}

function fire(context: SolveContext, index: number, reason: string): void {
  context.hooks.emit({ type: 'stop-rule', index, reason });
  context.stop(reason);
}

/** Fires the stop rule (once per job) when `slot` meets it; in a mixed job, once every policy was heard from. */
export function applyStopRule(context: SolveContext, slot: Slot): void {
  const reason = stopRuleMet(
    context.request.stop_rule,
    slot.score,
    slot.verify,
    context.verifying,
    context.evidence.forCandidate(slot.index),
  );
  if (!reason || context.stoppedEarly) return;
  if (everyPolicyHeard(context, slot)) return fire(context, slot.index, reason);
  context.pendingStop ??= { index: slot.index, reason: `${reason}; fired once every policy had a rollout end` };
}

/** After a rollout ended: a stop the rule already decided on fires once every policy was heard from. */
export function releasePendingStop(context: SolveContext): void {
  const pending = context.pendingStop;
  if (!pending || context.stoppedEarly || !everyPolicyHeard(context)) return;
  fire(context, pending.index, pending.reason);
}
