/**
 * Picks a scorer backend by name and loads it lazily (`onnx | sglang | vllm | openai`), then wraps
 * it with the cache and the batcher. `ScorerConfig` is the one validated description of a scorer;
 * loadValueModel (value-model.ts) builds the scorer here and loads what comes with its model.
 */
import { z } from 'zod';
import { wnwError } from '../errors.js';
import { HeaderSecret } from '../http/header-value.js';
import { DEFAULT_CONNECTIONS_PER_URL } from '../http/connections.js';
import { loadTemplate } from '../serialize/template-registry.js';
import { isChatTemplate } from '../serialize/template-schema.js';
import { loadTokenizer, type Tokenizer } from '../serialize/tokenizer.js';
import { LABEL_PRESETS, readProblemType, resolveHead, type HeadSettings } from './http/head.js';
import type { ServerScorerSettings } from './http/http-scorer.js';
import type { Scorer } from './types.js';
import { withBatching } from './with-batching.js';
import { withCache } from './with-cache.js';
import { withObserver, type ScorerObserver } from './with-observer.js';

const Labels = z.object({ yes: z.string().min(1), no: z.string().min(1) });

/** `scorer.batching` when on: how concurrent score calls are merged into one backend call (with-batching.ts). */
export const ScorerBatching = z.object({
  maxBatchSize: z.number().int().positive().default(16).describe('Most inputs in one backend call.'),
  maxBatchTokens: z.number().int().positive().default(262_144).describe('Most tokens in one backend call, all inputs together.'),
  windowMs: z
    .number()
    .nonnegative()
    .default(5)
    .describe('Longest wait of a call for others to join it; a call waits only while the backend is busy (max_in_flight batches at it).'),
  maxInFlight: z
    .number()
    .int()
    .positive()
    .optional()
    .describe(
      'Batches at the backend at once below which a call is sent without waiting (default: what the backend runs at once without queueing: the onnx workers; for servers, the HTTP connections of every URL, 64 each).',
    ),
});

// The descriptions are what docs/configuration.md shows (scripts/gen-config-docs.ts), so they name
// keys as the config file spells them (snake_case).
export const ScorerConfig = z
  .object({
    backend: z
      .enum(['onnx', 'sglang', 'vllm', 'openai'])
      .describe('Which backend scores: in-process ONNX, or an SGLang, vLLM or OpenAI-compatible server.'),
    model: z
      .string()
      .min(1)
      .describe("onnx: the model folder (default: the embedded models/winnower-value); servers: the model's name on the server."),
    urls: z
      .array(z.url({ protocol: /^https?$/ }))
      .default([])
      .describe('Base URLs of the server replicas, one per replica; every backend but onnx needs one.'),
    kind: z
      .enum(['scalar', 'judge'])
      .optional()
      .describe('What the model outputs; default scalar for sglang and vllm, judge for openai; onnx reads it from the graph.'),
    tokenizer: z
      .string()
      .min(1)
      .optional()
      .describe(
        "Servers: a tokenizer.json or its folder, so token budgets are counted here and token ids are sent (onnx uses its model folder's).",
      ),
    apiKey: HeaderSecret.min(1).optional().describe('Bearer token for the scoring server.'),
    timeoutMs: z.number().int().positive().default(60_000).describe('Deadline of one scoring request, its retries included.'),
    retries: z.number().int().nonnegative().max(10).default(2).describe('Extra attempts after a transient server failure.'),
    maxInputTokens: z
      .number()
      .int()
      .positive()
      .optional()
      .describe(
        "Largest input in tokens, which candidates are fitted to (`rerank --budget` sets it); default 32768 for servers, the model's own limit for onnx. A vLLM server whose max_model_len is smaller is refused.",
      ),
    batching: z
      .union([z.literal(false), ScorerBatching])
      .default({ maxBatchSize: 16, maxBatchTokens: 262_144, windowMs: 5 })
      .describe('Merging of concurrent score calls into one backend call; false turns it off.'),
    cacheEntries: z.number().int().nonnegative().default(10_000).describe('Scores remembered by content hash; 0 turns the cache off.'),
    labels: z
      .union([Labels, z.string().min(1), z.array(z.string().min(1)).min(1)])
      .optional()
      .describe(
        "A judge's label tokens `{yes, no}` (default YES and NO); or, for a head with several outputs (sglang, vllm), its label names in output order, or the name of a known table (`openhands-critic`).",
      ),
    labelIndex: z
      .number()
      .int()
      .nonnegative()
      .optional()
      .describe("Which output of a multi-label head counts as success (default 0, which is the OpenHands critic's `success`)."),
    activation: z
      .enum(['sigmoid', 'softmax', 'auto'])
      .optional()
      .describe(
        "How a multi-label head's logits become a probability: `sigmoid` for independent labels, `softmax` for one class, `auto` (default) for the `problem_type` in the config.json beside the tokenizer, else what the label table was trained with.",
      ),
    chatTemplate: z
      .string()
      .min(1)
      .optional()
      .describe(
        "The model's chat template, for serialization templates of layout `chat` (openhands-critic-v1): a tokenizer_config.json, a chat_template.jinja, or a folder with one. Default: the one in the tokenizer's folder (or the onnx model folder). Read from disk, never downloaded.",
      ),
    template: z
      .string()
      .min(1)
      .optional()
      .describe(
        'The serialization template the model was trained with, used when neither the request nor --template names one; a template made for one head (openhands-critic-v1) also sets `labels` and `label_index` when they are not given.',
      ),
    endpoint: z
      .enum(['classify', 'score'])
      .optional()
      .describe(
        "A head's endpoint: `classify` (default) or `score` (vllm: `/score` with the inputs as text, one-label heads only, its scores clamped 1e-6 from 0 and 1, and those at the clamp asked again on /classify; sglang: `/v1/score` without label ids, multi-item when the server has the delimiter).",
      ),
    serverTruncation: z
      .enum(['left', 'right'])
      .optional()
      .describe(
        'vllm: let the server shorten inputs that are too long (`truncate_prompt_tokens`), keeping the end (`left`) or the start (`right`); off when not given.',
      ),
    multiItem: z
      .union([z.boolean(), z.literal('auto')])
      .optional()
      .describe(
        'sglang judge: score several candidates in one multi-item `/v1/score` call (`auto`: when the server has a multi-item delimiter).',
      ),
    labelTokenIds: z
      .object({ yes: z.number().int().nonnegative(), no: z.number().int().nonnegative() })
      .optional()
      .describe("A judge's label token ids `{yes, no}`, for an SGLang judge without a tokenizer."),
    selector: z
      .string()
      .min(1)
      .optional()
      .describe(
        "A learned selector (selector.json, or its folder) for `strategy: learned`; onnx uses its model folder's own when this is not given.",
      ),
    workers: z.number().int().positive().optional().describe('onnx: worker threads that run the model.'),
    intraOpThreads: z.number().int().positive().optional().describe("onnx: ONNX Runtime's intra-op threads in each worker."),
  })
  .superRefine((config, context) => {
    if (config.backend !== 'onnx' && config.urls.length === 0) {
      context.addIssue({ code: 'custom', path: ['urls'], message: `the ${config.backend} backend needs at least one base URL` });
    }
  });
export type ScorerConfig = z.infer<typeof ScorerConfig>;
export type ScorerConfigInput = z.input<typeof ScorerConfig>;

type Loader = (config: ScorerConfig, tokenizer: Tokenizer | undefined) => Promise<Scorer>;

/** Judge labels `{yes, no}`, when that is what `labels` holds. */
function judgeLabels(config: ScorerConfig): { yes: string; no: string } | undefined {
  return typeof config.labels === 'object' && !Array.isArray(config.labels) ? (config.labels as { yes: string; no: string }) : undefined;
}

/** The multi-label head `labels` names (a list or a table name), with its success index and activation. */
function headOf(config: ScorerConfig): HeadSettings | undefined {
  const labels = config.labels;
  if (typeof labels !== 'string' && !Array.isArray(labels)) {
    if (config.labelIndex !== undefined || (config.activation !== undefined && config.activation !== 'auto')) {
      throw wnwError(
        'WNW_ERR_CFG_INVALID',
        `scorer.labels: labelIndex and activation need the head's label names (a list, or ${Object.keys(LABEL_PRESETS).join(', ')})`,
        {
          details: { field: 'scorer.labels' },
        },
      );
    }
    return undefined;
  }
  const problemType = readProblemType(config.tokenizer ?? (config.backend === 'onnx' ? config.model : undefined));
  return resolveHead({
    labels: labels as string | string[],
    ...(config.labelIndex === undefined ? {} : { labelIndex: config.labelIndex }),
    ...(config.activation === undefined ? {} : { activation: config.activation }),
    ...(problemType === undefined ? {} : { problemType }),
  });
}

function serverSettings(config: ScorerConfig, tokenizer: Tokenizer | undefined): ServerScorerSettings {
  return {
    model: config.model,
    urls: config.urls,
    timeoutMs: config.timeoutMs,
    retries: config.retries,
    ...(config.apiKey === undefined ? {} : { apiKey: config.apiKey }),
    ...(config.maxInputTokens === undefined ? {} : { maxInputTokens: config.maxInputTokens }),
    ...(tokenizer ? { tokenizer } : {}),
  };
}

const BACKENDS: Record<ScorerConfig['backend'], Loader> = {
  async onnx(config) {
    const { createOnnxScorer } = await import('./onnx/onnx.js');
    const head = headOf(config);
    return createOnnxScorer({
      modelDir: config.model,
      ...(config.workers === undefined ? {} : { workers: config.workers }),
      ...(config.intraOpThreads === undefined ? {} : { intraOpThreads: config.intraOpThreads }),
      ...(config.maxInputTokens === undefined ? {} : { maxInputTokens: config.maxInputTokens }),
      ...(judgeLabels(config) === undefined ? {} : { labels: judgeLabels(config)! }),
      ...(head ? { head } : {}),
    });
  },
  async sglang(config, tokenizer) {
    const { createSGLangScorer } = await import('./http/sglang.js');
    const head = headOf(config);
    return createSGLangScorer({
      ...serverSettings(config, tokenizer),
      kind: config.kind ?? 'scalar',
      ...(head ? { head } : {}),
      ...(judgeLabels(config) === undefined ? {} : { labels: judgeLabels(config)! }),
      ...(config.labelTokenIds === undefined ? {} : { labelTokenIds: config.labelTokenIds }),
      ...(config.multiItem === undefined ? {} : { multiItem: config.multiItem }),
      ...(config.endpoint === undefined ? {} : { endpoint: config.endpoint }),
    });
  },
  async vllm(config, tokenizer) {
    const { createVllmScorer } = await import('./http/vllm.js');
    const head = headOf(config);
    return createVllmScorer({
      ...serverSettings(config, tokenizer),
      kind: config.kind ?? 'scalar',
      ...(head ? { head } : {}),
      ...(config.endpoint === undefined ? {} : { endpoint: config.endpoint }),
      ...(config.serverTruncation === undefined ? {} : { serverTruncation: config.serverTruncation }),
    });
  },
  async openai(config, tokenizer) {
    if (config.kind === 'scalar') {
      throw wnwError('WNW_ERR_CFG_INVALID', 'the openai backend is a yes/no judge; kind scalar needs sglang or vllm', {
        details: { field: 'kind' },
      });
    }
    const { createOpenAICompatibleScorer } = await import('./http/http-scorer.js');
    return createOpenAICompatibleScorer({
      ...serverSettings(config, tokenizer),
      ...(judgeLabels(config) === undefined ? {} : { labels: judgeLabels(config)! }),
    });
  },
};

/**
 * The config with the head its template implies: a template made for one model's head
 * (openhands-critic-v1: the critic's 27 labels, success at 0) sets `labels` and `labelIndex`
 * when the config names none. Also checks that the template exists.
 */
function withTemplateHead(config: ScorerConfig): ScorerConfig {
  if (config.template === undefined) return config;
  const template = loadTemplate(config.template);
  if (!isChatTemplate(template) || template.head === undefined || config.labels !== undefined || config.backend === 'openai') return config;
  return { ...config, labels: template.head.labels, labelIndex: config.labelIndex ?? template.head.label_index };
}

/** Backend names `createScorer` accepts. */
export const SCORER_BACKENDS = Object.keys(BACKENDS) as Array<ScorerConfig['backend']>;

/** Validates `config` (WNW_ERR_SCORE_BACKEND, WNW_ERR_CFG_INVALID naming the field) and adds the head its template implies. */
export function parseScorerConfig(config: ScorerConfigInput): ScorerConfig {
  const name = (config as { backend?: unknown } | null)?.backend;
  if (typeof name !== 'string' || !Object.hasOwn(BACKENDS, name)) {
    throw wnwError('WNW_ERR_SCORE_BACKEND', `unknown scorer backend ${JSON.stringify(name)}; use one of ${SCORER_BACKENDS.join(', ')}`, {
      details: { backend: name, valid: SCORER_BACKENDS },
    });
  }
  const parsed = ScorerConfig.safeParse(config);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const field = ['scorer', ...issue.path.map(String)].join('.');
    throw wnwError('WNW_ERR_CFG_INVALID', `${field}: ${issue.message}`, { cause: parsed.error, details: { field } });
  }
  return withTemplateHead(parsed.data);
}

/** Loads the backend of a parsed config and wraps it with the cache and the batcher; `observer` hears each batch and each call (metrics). */
export async function buildScorer(config: ScorerConfig, options: { observer?: ScorerObserver } = {}): Promise<Scorer> {
  const tokenizer = config.tokenizer && config.backend !== 'onnx' ? await loadTokenizer(config.tokenizer) : undefined;
  let scorer = await BACKENDS[config.backend](config, tokenizer);
  const { onBatch, onCall } = options.observer ?? {};
  if (onBatch) scorer = withObserver(scorer, onBatch);
  if (config.batching) {
    // What the backend takes at once without a queue: an ONNX worker runs one batch at a time; a
    // server is sent as many requests as the pool has connections (past them undici queues), and
    // batches across requests itself. Below that, waiting for company would only delay a call
    // (docs/value-models.md#batching).
    const maxInFlight =
      config.batching.maxInFlight ?? (config.backend === 'onnx' ? (config.workers ?? 1) : config.urls.length * DEFAULT_CONNECTIONS_PER_URL);
    scorer = withBatching(scorer, { ...config.batching, maxInFlight });
  }
  if (config.cacheEntries > 0) scorer = withCache(scorer, { maxEntries: config.cacheEntries });
  if (onCall) scorer = withObserver(scorer, onCall);
  return scorer;
}

/**
 * The scorer alone: validates `config`, loads its backend, wraps it. What came with the model
 * (selector, templates, identity) is loaded with it by loadValueModel (value-model.ts).
 */
export async function createScorer(config: ScorerConfigInput, options: { observer?: ScorerObserver } = {}): Promise<Scorer> {
  return buildScorer(parseScorerConfig(config), options);
}
