/**
 * SGLang: a scalar head served with `--is-embedding` (`POST /classify`), or a generative judge
 * (`POST /v1/score`, falling back to `POST /generate` on servers without it). Only configuration
 * and response mapping live here; `openai-compatible.ts` does the calling.
 */
import { z } from 'zod';
import { wnwError } from '../../errors.js';
import {
  createHttpScorer,
  defineEndpoint,
  judgeOutput,
  MISSING_LOGPROB,
  resolveLabelIds,
  scalarOutput,
  type ServerScorerSettings,
} from './openai-compatible.js';
import type { ScoreInput, Scorer } from './types.js';

export interface SGLangSettings extends ServerScorerSettings {
  /** `scalar` (default): a `*ForSequenceClassification` head; `judge`: a causal LM answering YES/NO. */
  kind?: 'scalar' | 'judge';
  /** Judge label strings (default YES / NO), resolved to ids with the tokenizer. */
  labels?: { yes: string; no: string };
  /** Judge label token ids; needed when no tokenizer is given. */
  labelTokenIds?: { yes: number; no: number };
  /** Receives warnings (default: `process.emitWarning`). */
  onWarning?: (message: string, details: Record<string, unknown>) => void;
}

/** One entry per input, as `/classify` (and `/encode`) answer. */
const ClassifyResponse = z.array(
  z.object({
    embedding: z.array(z.number()).min(1),
    meta_info: z.object({ prompt_tokens: z.number().int().optional() }).loose(),
  }),
);

/** `/v1/score`: one list of label probabilities per item, in `label_token_ids` order. */
const ScoreResponse = z.object({ scores: z.array(z.array(z.number()).length(2)).min(1) });

/** `/generate` with a batch: one result per input; `[logprob, token_id, text|null]` per label. */
const GenerateResponse = z.array(
  z.object({
    meta_info: z
      .object({
        output_token_ids_logprobs: z.array(z.array(z.tuple([z.number(), z.number().int()]).rest(z.unknown()))).min(1),
      })
      .loose(),
  }),
);

const allIds = (inputs: ScoreInput[]) => inputs.every((input) => input.inputIds);

export function createSGLangScorer(settings: SGLangSettings): Scorer {
  const warn = settings.onWarning ?? ((message: string) => process.emitWarning(message, { code: 'WNW_WARN_SCORE_NORMALISED' }));
  let warned = false;

  const classify = defineEndpoint({
    path: '/classify',
    body: (inputs) => (allIds(inputs) ? { input_ids: inputs.map((input) => input.inputIds) } : { text: inputs.map((input) => input.text) }),
    response: ClassifyResponse,
    map: (response) => {
      const logits = response.map((entry) => entry.embedding[0]!);
      if (!warned && logits.every((logit) => Math.abs(logit) === 1)) {
        warned = true;
        warn(
          `${settings.model}: every /classify score is exactly ±1; the server L2-normalised the head's output ` +
            '(a Qwen3 classifier without id2label in config.json); add id2label and restart the server',
          { model: settings.model, scores: logits.slice(0, 8) },
        );
      }
      return logits.map(scalarOutput);
    },
  });

  if ((settings.kind ?? 'scalar') === 'scalar') return createHttpScorer(settings, { backend: 'sglang', endpoint: () => classify });

  const labelIds = settings.labelTokenIds ?? (settings.tokenizer ? resolveLabelIds(settings.tokenizer, settings.labels ?? { yes: 'YES', no: 'NO' }) : undefined);
  if (!labelIds) {
    throw wnwError('WNW_ERR_CFG_INVALID', 'an SGLang judge needs a tokenizer or labelTokenIds to know the YES/NO token ids', {
      details: { field: 'tokenizer' },
    });
  }
  const labelTokenIds = [labelIds.yes, labelIds.no];

  const generate = defineEndpoint({
    path: '/generate',
    body: (inputs) => ({
      ...(allIds(inputs) ? { input_ids: inputs.map((input) => input.inputIds) } : { text: inputs.map((input) => input.text) }),
      sampling_params: { max_new_tokens: 1, temperature: 0 },
      return_logprob: true,
      // Only the first output position: never the prompt's log-probabilities.
      logprob_start_len: -1,
      token_ids_logprob: labelTokenIds,
    }),
    response: GenerateResponse,
    map: (response) =>
      response.map((result) => {
        const position = result.meta_info.output_token_ids_logprobs[0]!;
        const logprobOf = (id: number) => position.find((entry) => entry[1] === id)?.[0] ?? MISSING_LOGPROB;
        return judgeOutput(logprobOf(labelIds.yes), logprobOf(labelIds.no));
      }),
  });

  const score = defineEndpoint({
    path: '/v1/score',
    inputsPerRequest: 1,
    body: ([input]) => ({
      model: settings.model,
      query: input!.inputIds ?? input!.text,
      items: input!.inputIds ? [[]] : [''],
      label_token_ids: labelTokenIds,
      apply_softmax: true,
    }),
    response: ScoreResponse,
    map: (response) =>
      response.scores.slice(0, 1).map(([yes, no]) => judgeOutput(Math.max(Math.log(yes!), MISSING_LOGPROB), Math.max(Math.log(no!), MISSING_LOGPROB))),
    fallback: generate,
  });

  return createHttpScorer(settings, { backend: 'sglang', endpoint: () => score });
}
