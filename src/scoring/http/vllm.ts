/**
 * vLLM's pooling runner (`vllm serve … --runner pooling`), as current servers document it:
 * `POST /classify` `{model, input, use_activation: false}` returns raw logits (winnower applies the
 * activation the head was trained for), or `POST /score` `{model, queries, documents}` for a
 * one-label head, with an instance's shared prefix as the query. Before the first request the
 * server is probed (`GET /v1/models`, then a tiny `/classify`) for what it serves and accepts,
 * rather than trusting a version string. Only configuration and response mapping live here;
 * `http-scorer.ts` does the calling. What a real vLLM showed (docs/design/06-value-model-servers.md#8):
 * `/score` takes text only (token ids: 400 "Input should be a valid string") and clamps its
 * probability at 1e-6 from 0 and 1 (logits beyond ±13.8155 tie), and `truncate_prompt_tokens`
 * equal to `max_model_len` never answers.
 */
import { z } from 'zod';
import { WinnowerError, wnwError } from '../../errors.js';
import { logit } from '../../util/logistic.js';
import { headFromLogits, headFromProbabilities, type HeadSettings } from './head.js';
import type { HttpClient } from '../../http/http-client.js';
import { createHttpScorer, defineEndpoint, scalarOutput, type ServerScorerSettings } from './http-scorer.js';
import { groupBySharedPrefix } from './shared-prefix.js';
import type { ScoreInput, ScoreOutput, Scorer } from '../types.js';

export interface VllmSettings extends ServerScorerSettings {
  /**
   * Informational: `scalar` (one logit, also a judge served with `method: from_2_way_softmax`) or
   * `judge` (two logits). Each result is read by how many values it holds, or by `head`.
   */
  kind?: 'scalar' | 'judge';
  /** Position of YES when a result holds two values and no `head` is given (default 1: `classifier_from_token: ["NO", "YES"]`). */
  yesIndex?: 0 | 1;
  /** A head of several labels (a multi-label critic): the label table, the success index and the activation. */
  head?: HeadSettings;
  /** `classify` (default) or `score`: `/score` with the shared prefix as `queries` (one-label heads only). */
  endpoint?: 'classify' | 'score';
  /**
   * Let the server cut inputs over `maxInputTokens` (`truncate_prompt_tokens`), keeping the end
   * (`left`) or the start (`right`). Off by default: winnower fits the budget itself, so what the
   * model sees is what was counted.
   */
  serverTruncation?: 'left' | 'right';
  /** Probe the server before the first request (default true). */
  probe?: boolean;
}

const ClassifyResponse = z.object({
  data: z.array(
    z.object({ index: z.number().int().nonnegative(), probs: z.array(z.number()).min(1), num_classes: z.number().int().nullish() }).loose(),
  ),
  usage: z.object({ prompt_tokens: z.number().int() }).loose().nullish(),
});
type ClassifyResponse = z.infer<typeof ClassifyResponse>;

const ScoreResponse = z.object({
  data: z.array(z.object({ index: z.number().int().nonnegative(), score: z.number() }).loose()),
});

const ModelsResponse = z.object({
  data: z.array(z.object({ id: z.string(), max_model_len: z.number().int().positive().nullish() }).loose()),
});

/** What the probe found out about the server. */
export interface VllmFeatures {
  /** False on a server that rejects `use_activation` (older than the rename): its values come activated. */
  useActivation: boolean;
  /** The served model's `max_model_len`, when `/v1/models` says. */
  maxModelLen?: number;
}

const ids = (inputs: ScoreInput[]) => inputs.every((input) => input.inputIds);

/**
 * Tokens kept free below the server's `max_model_len` when winnower asks it to truncate: a
 * `truncate_prompt_tokens` equal to the limit never answers, and the room holds a chat template's
 * end-of-turn (`<|im_end|>\n`: 2 Qwen tokens) and special tokens a server adds.
 */
export const SERVER_LIMIT_MARGIN = 8;

/** `/score` clamps its probability to [1e-6, 1 − 1e-6] (a logit of ±13.8155). */
export const SCORE_CLAMP = 1e-6;
/** A `/score` value this close to the clamp says nothing about how strong the candidate is. */
const isClamped = (value: number) => value <= SCORE_CLAMP * 1.001 || value >= 1 - SCORE_CLAMP * 1.001;

/**
 * The results by input: each names its input by `index`, in any order. Indexes that are not
 * exactly 0..n-1 (one twice, one past the inputs) would give an input another's score, so such an
 * answer is refused like a short one (WNW_ERR_SCORE_RESPONSE); http-scorer.ts checks the count.
 */
function byIndex<T extends { index: number }>(data: readonly T[], path: string): T[] {
  const ordered: T[] = [];
  for (const result of data) {
    if (result.index >= data.length) {
      throw wnwError(
        'WNW_ERR_SCORE_RESPONSE',
        `${path}: a result has index ${result.index}, but the answer holds ${data.length} (indexes 0 to ${data.length - 1})`,
        { details: { path, index: result.index, received: data.length } },
      );
    }
    if (ordered[result.index]) {
      throw wnwError('WNW_ERR_SCORE_RESPONSE', `${path}: the answer has index ${result.index} twice`, {
        details: { path, index: result.index, received: data.length },
      });
    }
    ordered[result.index] = result;
  }
  return ordered;
}

/** Inputs without their ids: `/score` takes text only. */
const asText = (inputs: readonly ScoreInput[]): ScoreInput[] => inputs.map(({ inputIds: _ids, ...input }) => input);

/** A 400 saying the request field `use_activation` is not known (a server from before it existed). */
function rejectsUseActivation(error: unknown): boolean {
  if (!WinnowerError.isInstance(error) || error.code !== 'WNW_ERR_SCORE_UPSTREAM' || error.details.status !== 400) return false;
  const body = String(error.details.body ?? '');
  return /use_activation/.test(body) && /extra|not permitted|unknown|unexpected|unrecognized/i.test(body);
}

export function createVllmScorer(settings: VllmSettings): Scorer & { readonly features: VllmFeatures } {
  const yes = settings.yesIndex ?? 1;
  const head = settings.head;
  const features: VllmFeatures = { useActivation: true };
  const maxInputTokens = settings.maxInputTokens ?? 32_768;

  /** One result's values → a score: raw logits normally, probabilities on a server without `use_activation`. */
  function read(values: number[], where: string): ScoreOutput {
    if (head) return features.useActivation ? headFromLogits(head, values, where) : headFromProbabilities(head, values, where);
    if (values.length === 1) {
      if (features.useActivation) return scalarOutput(values[0]!);
      return { value: values[0]!, raw: logit(values[0]!) };
    }
    if (values.length === 2) {
      if (features.useActivation) return scalarOutput(values[yes]! - values[1 - yes]!);
      return { value: values[yes]!, raw: logit(values[yes]!) };
    }
    throw wnwError(
      'WNW_ERR_SCORE_RESPONSE',
      `${where}: ${values.length} values per result; a multi-label head needs scorer.labels (and labelIndex)`,
      {
        details: { received: values.length },
      },
    );
  }

  /** The cut asked of the server: the budget, and always below its max_model_len by the margin. */
  function truncation(): number {
    return Math.max(1, Math.min(maxInputTokens, (features.maxModelLen ?? maxInputTokens) - SERVER_LIMIT_MARGIN));
  }

  function classifyBody(inputs: ScoreInput[]): Record<string, unknown> {
    return {
      model: settings.model,
      input: ids(inputs) ? inputs.map((input) => input.inputIds) : inputs.map((input) => input.text),
      ...(features.useActivation ? { use_activation: false } : {}),
      ...(settings.serverTruncation ? { truncate_prompt_tokens: truncation(), truncation_side: settings.serverTruncation } : {}),
    };
  }

  function mapClassify(response: ClassifyResponse): ScoreOutput[] {
    return byIndex(response.data, '/classify').map((result) => {
      if (typeof result.num_classes === 'number' && result.num_classes !== result.probs.length) {
        throw wnwError(
          'WNW_ERR_SCORE_RESPONSE',
          `/classify: data[${result.index}] has num_classes ${result.num_classes} but ${result.probs.length} probs`,
          {
            details: { index: result.index },
          },
        );
      }
      return read(result.probs, `/classify data[${result.index}]`);
    });
  }

  const classify = defineEndpoint({ path: '/classify', body: classifyBody, response: ClassifyResponse, map: mapClassify });

  const score = defineEndpoint({
    path: '/score',
    // An instance's candidates share the system prompt and issue: sent once, as the query. /score
    // takes text only, split after a newline (the server tokenizes query and document apart).
    group: (inputs) => {
      let start = 0;
      return groupBySharedPrefix(asText(inputs), { minSharedTokens: 32, maxItems: 64 }).map((group) =>
        inputs.slice(start, (start += group.inputs.length)),
      );
    },
    body: (inputs) => {
      const [group] = groupBySharedPrefix(asText(inputs), { minSharedTokens: 0, maxItems: inputs.length });
      return { model: settings.model, queries: group!.query, documents: group!.items };
    },
    response: ScoreResponse,
    // `/score` applies the one-label head's sigmoid: its score is the probability.
    map: (response) => byIndex(response.data, '/score').map(({ score: value }) => ({ value, raw: logit(value) })),
  });

  /**
   * `/score`'s clamp makes strong candidates tie: those at the clamp are asked again on
   * `/classify` (same server, same head) for the raw logit. Should that fail, the clamped scores stand.
   */
  async function unclamp(
    outputs: ScoreOutput[],
    inputs: ScoreInput[],
    ask: (endpoint: typeof classify, inputs: ScoreInput[]) => Promise<ScoreOutput[]>,
  ): Promise<ScoreOutput[]> {
    if (settings.endpoint !== 'score') return outputs;
    const clamped = outputs.flatMap((output, index) => (!output.error && isClamped(output.value) ? [index] : []));
    if (clamped.length === 0) return outputs;
    let raw: ScoreOutput[];
    try {
      raw = await ask(
        classify,
        clamped.map((index) => inputs[index]!),
      );
    } catch {
      return outputs;
    }
    const refined = [...outputs];
    clamped.forEach((index, position) => {
      const output = raw[position];
      if (output && !output.error) refined[index] = output;
    });
    return refined;
  }

  async function probe(client: HttpClient, signal: AbortSignal | undefined): Promise<void> {
    if (settings.probe === false) return;
    let served: z.infer<typeof ModelsResponse> | undefined;
    try {
      served = await client.getJson({ path: '/v1/models', schema: ModelsResponse, ...(signal ? { signal } : {}) });
    } catch (error) {
      // A proxy in front of vLLM may not route /v1/models; the first request will say what is wrong.
      if (!(WinnowerError.isInstance(error) && error.details.status === 404)) throw error;
    }
    if (served) {
      const model = served.data.find((entry) => entry.id === settings.model);
      if (!model) {
        throw wnwError(
          'WNW_ERR_CFG_INVALID',
          `scorer.model: "${settings.model}" is not served at ${settings.urls[0]}; it serves ${served.data.map((entry) => entry.id).join(', ') || 'nothing'} (vllm serve --served-model-name)`,
          {
            details: { field: 'scorer.model', served: served.data.map((entry) => entry.id) },
          },
        );
      }
      if (model.max_model_len) {
        features.maxModelLen = model.max_model_len;
        if (maxInputTokens > model.max_model_len) {
          throw wnwError(
            'WNW_ERR_CFG_INVALID',
            `scorer.maxInputTokens: ${maxInputTokens} is more than the server's max_model_len ${model.max_model_len}; set it (or --budget) to at most ${model.max_model_len}`,
            {
              details: { field: 'scorer.maxInputTokens', maxModelLen: model.max_model_len },
            },
          );
        }
      }
    }
    if ((settings.endpoint ?? 'classify') !== 'classify') return;
    // A tiny /classify: does the server take use_activation, and does the head have the labels we expect?
    const tiny: ScoreInput[] = [{ key: 'probe', text: 'probe' }];
    let response: ClassifyResponse;
    try {
      response = await client.postJson({
        path: '/classify',
        body: classifyBody(tiny),
        schema: ClassifyResponse,
        ...(signal ? { signal } : {}),
      });
    } catch (error) {
      if (!rejectsUseActivation(error)) throw error;
      features.useActivation = false;
      response = await client.postJson({
        path: '/classify',
        body: classifyBody(tiny),
        schema: ClassifyResponse,
        ...(signal ? { signal } : {}),
      });
    }
    mapClassify(response);
  }

  const scorer = createHttpScorer(
    { ...settings, maxInputTokens },
    { backend: 'vllm', probe, endpoint: () => (settings.endpoint === 'score' ? score : classify), refine: unclamp },
  );
  return Object.assign(scorer, { features });
}
