/**
 * The pairwise judge's settings, as a request (`/solve`, `/rerank`) or the config (`judge.*`)
 * gives them, and which strategy a judge given without one serves.
 */
import { z } from 'zod';
import { wnwError } from '../errors.js';
import { HeaderSecret } from '../http/header-value.js';
import type { Strategy } from '../types/index.js';

export const JudgeOptions = z.strictObject({
  url: z
    .url({ protocol: /^https?$/, error: 'http or https only: the base URL of an OpenAI-compatible server, e.g. http://localhost:30000/v1' })
    .describe('Base URL of the OpenAI-compatible chat server that judges pairs of patches, with its API prefix (http://host:30000/v1).'),
  model: z.string().min(1).describe('Model name to ask that server for; it must return `logprobs` with `top_logprobs`.'),
  api_key: HeaderSecret.optional().describe('Bearer token for the judge server; never logged or stored with a job.'),
  k: z
    .number()
    .int()
    .min(1)
    .max(16)
    .default(2)
    .describe('Opponents per candidate: each meets the k after it in the current order, wrapping around (at most N·k pairs).'),
  timeout_s: z.number().positive().max(3600).default(60).describe('Deadline of one judge call, its retries included.'),
});
export type JudgeOptions = z.infer<typeof JudgeOptions>;

/**
 * The config's `judge` section: the server's default judge when `url` and `model` are both set;
 * `api_key` alone is the key `winnower rerank --judge-url` uses.
 */
export const JudgeConfig = JudgeOptions.extend({
  url: JudgeOptions.shape.url.optional(),
  model: JudgeOptions.shape.model.optional(),
}).refine((judge) => (judge.url === undefined) === (judge.model === undefined), {
  message: 'give judge.url and judge.model together',
  path: ['model'],
});
export type JudgeConfig = z.infer<typeof JudgeConfig>;

/** The server's default judge from the config, or undefined when it names none. */
export function serverJudge(config: JudgeConfig | undefined): JudgeOptions | undefined {
  if (config?.url === undefined || config.model === undefined) return undefined;
  return { ...config, url: config.url, model: config.model };
}
export type JudgeOptionsInput = z.input<typeof JudgeOptions>;

/** The strategies that read a judge's verdicts. */
export const JUDGE_STRATEGIES: readonly Strategy[] = ['judge', 'hybrid'];

/**
 * The strategy of a request and the judge it uses: a request's own judge with no strategy selects
 * with `judge` (`hybrid` when tests ran); a request's judge with a strategy that reads none, and
 * `judge` with no judge at all, are refused naming the field (`fields.strategy`, `fields.judge`).
 * The server's default judge serves `judge` and `hybrid` only, and is silently unused otherwise.
 */
export function resolveJudge(
  requested: { strategy: Strategy | undefined; judge: JudgeOptions | undefined },
  serverDefault: JudgeOptions | undefined,
  fields: { strategy: string; judge: string; defaults?: string },
  fallbackStrategy: () => Strategy,
  verifying: boolean,
): { strategy: Strategy; judge: JudgeOptions | undefined } {
  const strategy = requested.strategy ?? (requested.judge ? (verifying ? 'hybrid' : 'judge') : fallbackStrategy());
  if (requested.judge && !JUDGE_STRATEGIES.includes(strategy)) {
    throw wnwError(
      'WNW_ERR_INPUT_INVALID',
      `${fields.judge}: strategy ${strategy} uses no judge; use strategy judge or hybrid, or leave the judge out`,
      {
        details: { field: fields.judge },
      },
    );
  }
  const judge = JUDGE_STRATEGIES.includes(strategy) ? (requested.judge ?? serverDefault) : undefined;
  if (strategy === 'judge' && !judge) {
    throw wnwError(
      'WNW_ERR_INPUT_INVALID',
      `${fields.strategy}: strategy judge needs a judge (${fields.judge}${fields.defaults ? `, or ${fields.defaults}` : ''})`,
      {
        details: { field: fields.strategy },
      },
    );
  }
  return { strategy, judge };
}
