/**
 * vLLM's pooling runner: `POST /classify` with `use_activation: false`, so a one-label head returns
 * its logit (winnower applies the sigmoid) and a two-label head (`classifier_from_token`) its two
 * logits. Only configuration and response mapping live here; `openai-compatible.ts` does the calling.
 */
import { z } from 'zod';
import { createHttpScorer, defineEndpoint, scalarOutput, type ServerScorerSettings } from './openai-compatible.js';
import type { Scorer } from './types.js';

export interface VllmSettings extends ServerScorerSettings {
  /**
   * Informational: `scalar` (one logit, also a judge served with `method: from_2_way_softmax`) or
   * `judge` (two logits). Each result is read by how many values it holds.
   */
  kind?: 'scalar' | 'judge';
  /** Position of YES when a result holds two values (default 1: `classifier_from_token: ["NO", "YES"]`). */
  yesIndex?: 0 | 1;
}

const ClassifyResponse = z.object({
  data: z.array(z.object({ index: z.number().int().nonnegative(), probs: z.array(z.number()).min(1).max(2) })),
  usage: z.object({ prompt_tokens: z.number().int() }).loose().optional(),
});

export function createVllmScorer(settings: VllmSettings): Scorer {
  const yes = settings.yesIndex ?? 1;
  const classify = defineEndpoint({
    path: '/classify',
    body: (inputs) => ({
      model: settings.model,
      input: inputs.every((input) => input.inputIds) ? inputs.map((input) => input.inputIds) : inputs.map((input) => input.text),
      use_activation: false,
    }),
    response: ClassifyResponse,
    map: (response) =>
      [...response.data]
        .sort((a, b) => a.index - b.index)
        .map(({ probs }) => (probs.length === 1 ? scalarOutput(probs[0]!) : scalarOutput(probs[yes]! - probs[1 - yes]!))),
  });
  return createHttpScorer(settings, { backend: 'vllm', endpoint: () => classify });
}
