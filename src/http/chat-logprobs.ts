/**
 * The token log-probabilities an OpenAI-compatible chat completion answers with `logprobs: true`
 * (vLLM, SGLang, hosted APIs alike; docs/design/06-value-model-servers.md): one entry per generated
 * token, each with its `top_logprobs` alternatives. Read by the scorers' YES/NO heads and the judge.
 */
import { z } from 'zod';

export const ChatLogprobs = z.object({
  content: z
    .array(
      z.object({
        token: z.string(),
        logprob: z.number(),
        top_logprobs: z.array(z.object({ token: z.string(), logprob: z.number() })),
      }),
    )
    .min(1),
});
