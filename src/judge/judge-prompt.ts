/**
 * What the judge is asked and how its answer becomes a preference. The prompt shows the issue and
 * two patches, A and B, and asks for one digit: 1 = B is certainly better, 5 = equally good,
 * 9 = A is certainly better. The preference for A is the expectation of that digit over the
 * probabilities of the nine score tokens in `top_logprobs`, renormalised over those present, mapped
 * to [0, 1]; a digit missing from the top log-probabilities counts as very unlikely
 * (docs/design/06-value-model-servers.md#10). One token (`max_tokens: 1`) is all it costs.
 */
import { wnwError } from '../errors.js';

/** Longest issue and patch shown (characters); longer ones keep their head and tail. */
export const MAX_ISSUE_CHARS = 16_000;
export const MAX_PATCH_CHARS = 24_000;

const SYSTEM =
  'You review code changes. Two candidate patches try to resolve the same issue in the same repository. ' +
  'Judge which one more likely resolves the issue correctly without breaking other behaviour.';

/** Head and tail of `text` with a marker between, when it is longer than `max`. */
export function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  const half = Math.floor((max - 40) / 2);
  return `${text.slice(0, half)}\n[... ${text.length - 2 * half} characters cut ...]\n${text.slice(-half)}`;
}

/** The chat messages for one ordered pair: `a` is shown as Patch A, `b` as Patch B. */
export function judgeMessages(issue: string, a: string, b: string): Array<{ role: 'system' | 'user'; content: string }> {
  const user = [
    '## Issue',
    clip(issue, MAX_ISSUE_CHARS),
    '',
    '## Patch A',
    '```diff',
    clip(a, MAX_PATCH_CHARS),
    '```',
    '',
    '## Patch B',
    '```diff',
    clip(b, MAX_PATCH_CHARS),
    '```',
    '',
    'Rate the two patches on a scale from 1 to 9: 1 means patch B is certainly better, 5 means they are equally good, ' +
      '9 means patch A is certainly better. Answer with the single digit only.',
  ].join('\n');
  return [
    { role: 'system', content: SYSTEM },
    { role: 'user', content: user },
  ];
}

/**
 * P(A better) in [0, 1] from the first output token's candidates: (E[digit] − 1) / 8 over the
 * digits 1-9 present (a token with a leading space counts as the digit), renormalised. None
 * present is WNW_ERR_JUDGE_RESPONSE: the model answered something else.
 */
export function preferenceFromLogprobs(candidates: ReadonlyArray<[token: string, logprob: number]>): number {
  const mass = new Map<number, number>();
  const seen = new Set<string>();
  for (const [token, logprob] of candidates) {
    const digit = /^ ?([1-9])$/.exec(token)?.[1];
    if (digit === undefined || seen.has(token) || !Number.isFinite(logprob)) continue;
    seen.add(token);
    mass.set(Number(digit), (mass.get(Number(digit)) ?? 0) + Math.exp(logprob));
  }
  const total = [...mass.values()].reduce((sum, p) => sum + p, 0);
  if (total <= 0) {
    throw wnwError('WNW_ERR_JUDGE_RESPONSE', 'judge answered no score digit (1-9) among its top log-probabilities', {
      details: { tokens: candidates.slice(0, 5).map(([token]) => token) },
    });
  }
  const expectation = [...mass].reduce((sum, [digit, p]) => sum + digit * p, 0) / total;
  return (expectation - 1) / 8;
}
