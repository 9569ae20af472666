/**
 * SGLang: a scalar or multi-label head served with `--is-embedding` (`POST /classify`, raw outputs,
 * no activation), or a generative judge (`POST /v1/score` `{query, items, label_token_ids}`, falling
 * back to `POST /generate` on servers without it). When the server was started with
 * `--multi-item-scoring-delimiter` (found by probing `GET /get_server_info`), an instance's
 * candidates go in one `/v1/score` request: the shared prefix once as `query`, each candidate's
 * remainder as an item, all scored in one forward pass. SGLang's router does not route native
 * `/classify` (and its `/v1/classify` applies a softmax): point a head at the servers themselves.
 * Only configuration and response mapping live here; `openai-compatible.ts` does the calling.
 */
import { z } from 'zod';
import { WinnowerError, wnwError } from '../../errors.js';
import {
  createHttpScorer,
  defineEndpoint,
  judgeOutput,
  MISSING_LOGPROB,
  resolveLabelIds,
  scalarOutput,
  type ServerScorerSettings,
} from './http-scorer.js';
import { headFromLogits, type HeadSettings } from './head.js';
import type { HttpClient } from '../../http/http-client.js';
import { groupBySharedPrefix } from './shared-prefix.js';
import type { ScoreInput, Scorer } from '../types.js';

export interface SGLangSettings extends ServerScorerSettings {
  /** `scalar` (default): a `*ForSequenceClassification` head; `judge`: a causal LM answering YES/NO. */
  kind?: 'scalar' | 'judge';
  /** Judge label strings (default YES / NO), resolved to ids with the tokenizer. */
  labels?: { yes: string; no: string };
  /** Judge label token ids; needed when no tokenizer is given. */
  labelTokenIds?: { yes: number; no: number };
  /** A head of several labels (a multi-label critic): label table, success index, activation. */
  head?: HeadSettings;
  /**
   * A head's endpoint: `classify` (default, native `/classify`) or `score`: `/v1/score` without
   * label ids, which serves `*ForSequenceClassification` models (sgl-project/sglang#22118) and packs
   * an instance's candidates into one multi-item request when the server has the delimiter.
   */
  endpoint?: 'classify' | 'score';
  /**
   * Multi-item `/v1/score` for a judge: `auto` (default) when `GET /get_server_info` shows a
   * `multi_item_scoring_delimiter`, `true` to send it regardless, `false` for one request per input.
   */
  multiItem?: boolean | 'auto';
  /** Most candidates packed into one multi-item request (default 64). */
  maxItems?: number;
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

/** `/v1/score` on a classification model: the head's pooled logits, one list per item. */
const HeadScoreResponse = z.object({ scores: z.array(z.array(z.number()).min(1)).min(1) });

/** `GET /get_server_info`: the server's arguments, flat (or under `server_args` on some versions). */
const ServerInfo = z
  .object({
    multi_item_scoring_delimiter: z.number().int().nullish(),
    server_args: z.object({ multi_item_scoring_delimiter: z.number().int().nullish() }).loose().nullish(),
  })
  .loose();

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
      if (settings.head) return response.map((entry, index) => headFromLogits(settings.head!, entry.embedding, `/classify [${index}]`));
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

  let multiItem = settings.multiItem === true;
  const maxItems = settings.maxItems ?? 64;
  /** One request per input, or one per run of candidates that share a prefix (multi-item). */
  const group = (inputs: ScoreInput[]) =>
    multiItem ? groupBySharedPrefix(inputs, { minSharedTokens: 32, maxItems }).map((run) => run.inputs) : inputs.map((input) => [input]);
  const queryAndItems = (inputs: ScoreInput[]) => {
    const [run] = groupBySharedPrefix(inputs, { minSharedTokens: 0, maxItems: inputs.length });
    return { model: settings.model, query: run!.query, items: run!.items };
  };

  async function probe(client: HttpClient, signal: AbortSignal | undefined): Promise<void> {
    if (settings.multiItem !== undefined && settings.multiItem !== 'auto') return;
    try {
      const info = await client.getJson({ path: '/get_server_info', schema: ServerInfo, ...(signal ? { signal } : {}) });
      const delimiter = info.multi_item_scoring_delimiter ?? info.server_args?.multi_item_scoring_delimiter;
      multiItem = typeof delimiter === 'number';
    } catch (error) {
      // A server (or proxy) without /get_server_info: score one input per request.
      if (!(WinnowerError.isInstance(error) && error.details.status === 404)) throw error;
      multiItem = false;
    }
  }

  if ((settings.kind ?? 'scalar') === 'scalar') {
    if (settings.endpoint !== 'score') return createHttpScorer(settings, { backend: 'sglang', endpoint: () => classify });
    const headScore = defineEndpoint({
      path: '/v1/score',
      group,
      body: (inputs) => ({ ...queryAndItems(inputs), apply_softmax: false }),
      response: HeadScoreResponse,
      map: (response, inputs) =>
        response.scores
          .slice(0, inputs.length)
          .map((logits, index) =>
            settings.head ? headFromLogits(settings.head, logits, `/v1/score scores[${index}]`) : scalarOutput(logits[0]!),
          ),
    });
    return createHttpScorer(settings, { backend: 'sglang', probe, endpoint: () => headScore });
  }

  const labelIds =
    settings.labelTokenIds ??
    (settings.tokenizer ? resolveLabelIds(settings.tokenizer, settings.labels ?? { yes: 'YES', no: 'NO' }) : undefined);
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
    group,
    body: (inputs) => ({ ...queryAndItems(inputs), label_token_ids: labelTokenIds, apply_softmax: true }),
    response: ScoreResponse,
    map: (response, inputs) =>
      response.scores
        .slice(0, inputs.length)
        .map(([yes, no]) => judgeOutput(Math.max(Math.log(yes!), MISSING_LOGPROB), Math.max(Math.log(no!), MISSING_LOGPROB))),
    fallback: generate,
  });

  return createHttpScorer(settings, { backend: 'sglang', probe, endpoint: () => score });
}
