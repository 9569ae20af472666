/**
 * A Harbor verification's reward as evidence (docs/harbor.md#verification), for the
 * candidate-with-evidence record and /solve results: the reward read, or, when none could be,
 * a null value with the file that was wrong and the threshold.
 */
import type { RewardEvidence } from '../types/evidence.js';
import type { VerifyResult } from '../types/verify.js';

/** The parser name of every Harbor verification (src/verify/harbor-verifier.ts). */
export const HARBOR_PARSER = 'harbor-reward';

/** The reward evidence of `verify`; undefined when it is not a Harbor verification. `threshold`: for results stored before `reward_unread`. */
export function rewardEvidence(
  verify: Pick<VerifyResult, 'parser' | 'reward' | 'reward_unread'> | null | undefined,
  threshold?: number,
): RewardEvidence | undefined {
  if (!verify || verify.parser !== HARBOR_PARSER) return undefined;
  if (verify.reward) {
    const { value, file, threshold: held, rewards } = verify.reward;
    return { value, file, threshold: held, rewards };
  }
  const unread = verify.reward_unread;
  const at = unread?.threshold ?? threshold;
  if (at === undefined) return undefined;
  return { value: null, file: unread?.file ?? null, threshold: at, rewards: {} };
}
