/**
 * The judge's one HTTP seam: `POST <url>/chat/completions` on any OpenAI-compatible server
 * (SGLang, vLLM, llama.cpp, hosted APIs) with `max_tokens: 1`, `temperature: 0`, `logprobs: true`,
 * `top_logprobs: 20`, read as judge-prompt.ts says (docs/design/06-value-model-servers.md#10).
 * Through the shared client (src/http): one deadline per call, retries on transient failures,
 * answers capped in size and validated; the API key only ever goes in the Authorization header.
 */
import { z } from 'zod';
import { ChatLogprobs } from '../http/chat-logprobs.js';
import { HttpClient } from '../http/http-client.js';
import type { JudgeOptions } from './judge-options.js';
import { judgeMessages, preferenceFromLogprobs } from './judge-prompt.js';

/** One ordered comparison's answer. */
export interface Verdict {
  /** P(patch A is the better one), in [0, 1]. */
  preference: number;
  promptTokens: number;
  completionTokens: number;
}

export interface Judge {
  readonly model: string;
  /** Shows `a` as Patch A and `b` as Patch B for `issue`. */
  compare(request: { issue: string; a: string; b: string }, signal?: AbortSignal): Promise<Verdict>;
  close(): Promise<void>;
}

/** How many log-probabilities to ask for: the usual server maximum. */
export const TOP_LOGPROBS = 20;
/** A one-token answer with 20 alternatives is a few KiB; anything near this is not one. */
export const MAX_ANSWER_BYTES = 1024 * 1024;

const ChatCompletion = z.object({
  choices: z
    .array(
      z.object({
        logprobs: ChatLogprobs,
      }),
    )
    .min(1),
  usage: z.object({ prompt_tokens: z.number().int().nonnegative(), completion_tokens: z.number().int().nonnegative() }).nullish(),
});

export function createJudge(options: JudgeOptions, settings: { retries?: number } = {}): Judge {
  const base = new URL(options.url);
  const prefix = base.pathname.replace(/\/+$/, '');
  const client = new HttpClient({
    urls: [base.origin],
    ...(options.api_key ? { apiKey: options.api_key } : {}),
    timeoutMs: options.timeout_s * 1000,
    retries: settings.retries ?? 2,
    maxResponseBytes: MAX_ANSWER_BYTES,
    errorCodes: { upstream: 'WNW_ERR_JUDGE_UPSTREAM', response: 'WNW_ERR_JUDGE_RESPONSE', timeout: 'WNW_ERR_JUDGE_TIMEOUT' },
  });
  return {
    model: options.model,
    async compare({ issue, a, b }, signal) {
      const response = await client.postJson({
        path: `${prefix}/chat/completions`,
        body: {
          model: options.model,
          messages: judgeMessages(issue, a, b),
          max_tokens: 1,
          temperature: 0,
          logprobs: true,
          top_logprobs: TOP_LOGPROBS,
        },
        schema: ChatCompletion,
        ...(signal ? { signal } : {}),
      });
      const first = response.choices[0]!.logprobs.content[0]!;
      const candidates: Array<[string, number]> = first.top_logprobs.map((entry) => [entry.token, entry.logprob]);
      // The sampled token is the likeliest at temperature 0; a server that leaves it out of top_logprobs still counts it.
      if (!first.top_logprobs.some((entry) => entry.token === first.token)) candidates.push([first.token, first.logprob]);
      return {
        preference: preferenceFromLogprobs(candidates),
        promptTokens: response.usage?.prompt_tokens ?? 0,
        completionTokens: response.usage?.completion_tokens ?? 0,
      };
    },
    close: () => client.close(),
  };
}
