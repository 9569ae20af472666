import type { Score, VerifyResult } from '../types/index.js';
import type { StopRule } from './solve-request.js';

/** Whether a finished candidate satisfies the stop rule; returns the reason when it does. */
export function stopRuleMet(rule: StopRule | null, score: Score | undefined, verify: VerifyResult | undefined, verifying: boolean): string | undefined {
  if (!rule) return undefined;
  if (!score || score.value < rule.min_value) return undefined;
  if (rule.require_resolved && verifying && !verify?.resolved) return undefined;
  const tested = rule.require_resolved && verifying ? ' and passed its tests' : '';
  return `a candidate scored ${score.value.toFixed(3)} ≥ ${rule.min_value}${tested}`;
}
