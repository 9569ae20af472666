/**
 * Server scorers: the HTTP side of every backend that is reached over the network, and the
 * OpenAI-compatible yes/no judge itself. `createHttpScorer` owns tokenizing, splitting a batch into
 * requests, calling (through `http-client.ts`), the 404 fallback to an older endpoint and checking
 * what comes back; `sglang.ts` and `vllm.ts` only describe their endpoints and map their responses.
 */
import { z } from 'zod';
import { throwIfAborted, wnwError, WinnowerError } from '../../errors.js';
import { untilAborted } from '../../util/until-aborted.js';
import type { Tokenizer } from '../../serialize/tokenizer.js';
import { ChatLogprobs } from '../../http/chat-logprobs.js';
import { createHttpClient, type HttpClient, type HttpClientOptions } from '../../http/http-client.js';
import type { ScoreCallOptions, ScoreInput, ScoreOutput, Scorer } from '../types.js';
import { sigmoid } from '../../util/logistic.js';

/** Settings shared by every server backend. */
export interface ServerScorerSettings {
  /** Model name sent to the server and reported in each Score. */
  model: string;
  /** Base URLs of replicas; requests go to the one with the fewest in flight. */
  urls: string[];
  apiKey?: string;
  /** Deadline of one request, retries included (default 60000 ms). */
  timeoutMs?: number;
  /** Extra attempts on transient failures (default 2). */
  retries?: number;
  /** Largest input the model accepts, in tokens (default 32768). */
  maxInputTokens?: number;
  /** When given, texts without ids are tokenized here and servers receive ids. */
  tokenizer?: Tokenizer;
  backoff?: HttpClientOptions['backoff'];
  connections?: number;
}

/** One way of asking a server for scores: where, with what body, and how to read the answer. */
// biome-ignore lint/suspicious/noExplicitAny: an endpoint of whatever response type; only its own map() reads what its schema parsed
export type AnyScoreEndpoint = ScoreEndpoint<any>;

export interface ScoreEndpoint<TResponse = unknown> {
  /** Path below the base URL, e.g. `/classify`. */
  path: string;
  /** Inputs carried by one request; omitted: the whole batch in one request. */
  inputsPerRequest?: number;
  /** Splits a batch into requests of consecutive inputs (instead of `inputsPerRequest`), e.g. by shared prefix. */
  group?(inputs: ScoreInput[]): ScoreInput[][];
  body(inputs: ScoreInput[]): unknown;
  /** zod schema of the documented response. */
  response: z.ZodType<TResponse>;
  /** One output per input, same order. */
  map(response: TResponse, inputs: ScoreInput[]): ScoreOutput[];
  /** Used instead, from then on, once this endpoint answers 404 (an older server). */
  fallback?: AnyScoreEndpoint;
}

export interface HttpScorerDefinition {
  backend: string;
  /**
   * Feature detection before the first request (what the server serves and accepts), by asking
   * it rather than trusting a version string. Runs once; a failed probe is tried again on the next call.
   */
  probe?(client: HttpClient, signal: AbortSignal | undefined): Promise<void>;
  /** The endpoint for one batch (inputs all carry ids, or not). */
  endpoint(inputs: ScoreInput[]): AnyScoreEndpoint;
  /**
   * A second look at a batch's outputs, able to ask another endpoint for some inputs (vLLM's
   * `/score` saturates: its clamped scores are asked again on `/classify` for the raw logit).
   */
  refine?(
    outputs: ScoreOutput[],
    inputs: ScoreInput[],
    ask: (endpoint: AnyScoreEndpoint, inputs: ScoreInput[]) => Promise<ScoreOutput[]>,
  ): Promise<ScoreOutput[]>;
}

/** Keeps the response type of an endpoint literal while checking its shape. */
export function defineEndpoint<TResponse>(endpoint: ScoreEndpoint<TResponse>): ScoreEndpoint<TResponse> {
  return endpoint;
}

/**
 * A 400 saying the prompt is longer than the model's context (vLLM: "maximum context length";
 * SGLang: "longer than the model's context length"): that input can never be scored as it is.
 */
export function isContextLengthError(error: unknown): boolean {
  if (!WinnowerError.isInstance(error) || error.code !== 'WNW_ERR_SCORE_UPSTREAM') return false;
  const { status, body } = error.details as { status?: unknown; body?: unknown };
  return (
    (status === 400 || status === 413) &&
    /maximum context length|context length|max_model_len|maximum model length|too long/i.test(String(body ?? error.message))
  );
}

/** The output of an input the server refused as too long: unscored, with the server's reason. */
export function tooLongOutput(error: WinnowerError, tokens: number | undefined): ScoreOutput {
  const reason = String((error.details as { body?: unknown }).body ?? error.message).slice(0, 300);
  return {
    value: Number.NaN,
    raw: Number.NaN,
    error: wnwError(
      'WNW_ERR_SCORE_TOO_LONG',
      `the value model server refused this candidate as longer than its context${tokens === undefined ? '' : ` (${tokens} tokens sent)`}: ${reason}`,
      {
        cause: error,
        details: { ...error.details, ...(tokens === undefined ? {} : { tokens }) },
      },
    ),
  };
}

/** The server's own words in an error body: `error.message`, `message` or `detail`, else the body. */
export function serverMessage(body: unknown): string {
  const text = String(body ?? '');
  try {
    const parsed = JSON.parse(text) as { error?: { message?: unknown } | string; message?: unknown; detail?: unknown };
    const message = typeof parsed.error === 'object' ? parsed.error?.message : (parsed.error ?? parsed.message ?? parsed.detail);
    if (message !== undefined) return typeof message === 'string' ? message : JSON.stringify(message);
  } catch {
    // not JSON: the text itself
  }
  return text;
}

/**
 * A request the server refused as invalid (400, 422), one of several a batch was split into: the
 * inputs it carried are unscored with the server's message, the other requests' are scored.
 */
function isRefusedRequest(error: unknown): error is WinnowerError {
  return (
    WinnowerError.isInstance(error) &&
    error.code === 'WNW_ERR_SCORE_UPSTREAM' &&
    (error.details.status === 400 || error.details.status === 422)
  );
}

function refusedOutputs(error: WinnowerError, path: string, count: number): ScoreOutput[] {
  const message = serverMessage(error.details.body).slice(0, 500);
  const refused = wnwError(
    'WNW_ERR_SCORE_UPSTREAM',
    `the value model server refused the ${path} request for this candidate (${String(error.details.status)}): ${message}`,
    {
      cause: error,
      details: { ...error.details },
    },
  );
  return Array.from({ length: count }, () => ({ value: Number.NaN, raw: Number.NaN, error: refused }));
}

/** Log-probability given to a label the server did not list among its top tokens. */
export const MISSING_LOGPROB = -30;

/** P(YES) = 1 / (1 + exp(lp_NO − lp_YES)); raw is the log-odds lp_YES − lp_NO. */
export function judgeOutput(logprobYes: number, logprobNo: number): ScoreOutput {
  const raw = logprobYes - logprobNo;
  return { value: sigmoid(raw), raw };
}

/** A scalar head's logit: value = sigmoid(raw). */
export function scalarOutput(logit: number): ScoreOutput {
  return { value: sigmoid(logit), raw: logit };
}

/** Id of each label; throws WNW_ERR_SCORE_TOKENIZER when one is not a single token. */
/**
 * The id of a label that is one token. A leading space is spelled `Ġ` in byte-level BPE vocabularies
 * (GPT-2, Qwen, Llama 3) and `▁` in SentencePiece ones, so `' YES'` is looked up in those forms too.
 */
export function singleTokenId(tokenizer: Tokenizer, label: string): number | undefined {
  const spellings = label.startsWith(' ') ? [label, `Ġ${label.slice(1)}`, `▁${label.slice(1)}`] : [label];
  for (const spelling of spellings) {
    const id = tokenizer.tokenToId(spelling);
    if (id !== undefined) return id;
  }
  return undefined;
}

export function resolveLabelIds(tokenizer: Tokenizer, labels: { yes: string; no: string }): { yes: number; no: number } {
  const yes = singleTokenId(tokenizer, labels.yes);
  const no = singleTokenId(tokenizer, labels.no);
  if (yes === undefined || no === undefined) {
    const bad = [yes === undefined ? labels.yes : undefined, no === undefined ? labels.no : undefined].filter(Boolean);
    throw wnwError(
      'WNW_ERR_SCORE_TOKENIZER',
      `judge labels ${bad.map((label) => JSON.stringify(label)).join(', ')} are not single tokens of ${tokenizer.name}`,
      {
        details: { labels, tokenizer: tokenizer.name },
      },
    );
  }
  return { yes, no };
}

/** A scorer over HTTP: the backend supplies endpoints; this owns calling and checking. */
export function createHttpScorer(settings: ServerScorerSettings, definition: HttpScorerDefinition): Scorer {
  const client = createHttpClient({
    urls: settings.urls,
    timeoutMs: settings.timeoutMs ?? 60_000,
    retries: settings.retries ?? 2,
    ...(settings.apiKey === undefined ? {} : { apiKey: settings.apiKey }),
    ...(settings.backoff === undefined ? {} : { backoff: settings.backoff }),
    ...(settings.connections === undefined ? {} : { connections: settings.connections }),
  });
  /** Paths that answered 404 (their fallback is used instead) and paths known to work. */
  const gone = new Set<string>();
  const confirmed = new Set<string>();
  let closed = false;
  let probed: Promise<void> | undefined;

  // The probe is shared by every call that arrives while it runs, so it runs under the scorer's
  // own signal (aborted by close()), not the first caller's: a caller that goes away stops waiting
  // for it, and neither fails the others waiting nor leaves its cancellation as the probe's result.
  const probeStop = new AbortController();
  function probe(signal: AbortSignal | undefined): Promise<void> {
    if (!definition.probe) return Promise.resolve();
    probed ??= definition.probe(client, probeStop.signal).catch((error: unknown) => {
      probed = undefined;
      throw error;
    });
    return untilAborted(probed, signal);
  }

  const resolve = (endpoint: AnyScoreEndpoint): AnyScoreEndpoint =>
    gone.has(endpoint.path) && endpoint.fallback ? resolve(endpoint.fallback) : endpoint;

  async function send(endpoint: AnyScoreEndpoint, group: ScoreInput[], signal: AbortSignal): Promise<ScoreOutput[]> {
    const response = await client.postJson({ path: endpoint.path, body: endpoint.body(group), schema: endpoint.response, signal });
    const outputs = endpoint.map(response, group);
    if (outputs.length !== group.length) {
      throw wnwError('WNW_ERR_SCORE_RESPONSE', `${endpoint.path}: expected ${group.length} results, got ${outputs.length}`, {
        details: { path: endpoint.path, expected: group.length, received: outputs.length },
      });
    }
    outputs.forEach((output, index) => {
      if (output.error) return;
      if (!Number.isFinite(output.raw) || !(output.value >= 0 && output.value <= 1)) {
        throw wnwError(
          'WNW_ERR_SCORE_RESPONSE',
          `${endpoint.path}: result ${index} is not a score (value ${output.value}, raw ${output.raw})`,
          {
            details: { path: endpoint.path, index },
          },
        );
      }
    });
    return outputs;
  }

  /**
   * One request; when the server refuses it as too long, a request of several inputs is split
   * into one request per input, so only the inputs that are too long themselves go unscored.
   */
  async function sendOrSplit(
    endpoint: AnyScoreEndpoint,
    group: ScoreInput[],
    signal: AbortSignal,
    oneOfSeveral = false,
  ): Promise<ScoreOutput[]> {
    try {
      return await send(endpoint, group, signal);
    } catch (error) {
      if (!isContextLengthError(error)) {
        // One request of several refused: its candidates fail with the server's reason, the rest go on.
        if (oneOfSeveral && isRefusedRequest(error)) return refusedOutputs(error, endpoint.path, group.length);
        throw error;
      }
      if (group.length === 1) return [tooLongOutput(error as WinnowerError, group[0]!.inputIds?.length)];
      return (await Promise.all(group.map((input) => sendOrSplit(endpoint, [input], signal, true)))).flat();
    }
  }

  /** Sends a batch as the endpoint wants it; on a 404 from an endpoint with a fallback, sends it all there. */
  async function run(endpoint: AnyScoreEndpoint, inputs: ScoreInput[], callSignal: AbortSignal | undefined): Promise<ScoreOutput[]> {
    const groups: ScoreInput[][] = [];
    if (endpoint.group) groups.push(...endpoint.group(inputs));
    else {
      const size = endpoint.inputsPerRequest ?? inputs.length;
      for (let start = 0; start < inputs.length; start += size) groups.push(inputs.slice(start, start + size));
    }
    // The first failure cancels the sibling requests of the same batch.
    const siblings = new AbortController();
    const signal = callSignal ? AbortSignal.any([callSignal, siblings.signal]) : siblings.signal;
    try {
      const several = groups.length > 1;
      if (endpoint.fallback && !confirmed.has(endpoint.path)) {
        // Probe with one request before sending the rest where a 404 would only repeat.
        const first = await sendOrSplit(endpoint, groups[0]!, signal, several);
        confirmed.add(endpoint.path);
        const rest = await Promise.all(groups.slice(1).map((group) => sendOrSplit(endpoint, group, signal, several)));
        return [first, ...rest].flat();
      }
      return (await Promise.all(groups.map((group) => sendOrSplit(endpoint, group, signal, several)))).flat();
    } catch (error) {
      siblings.abort();
      if (callSignal?.aborted) throw wnwError('WNW_ERR_OP_ABORTED', 'scoring cancelled', { cause: callSignal.reason });
      const notFound = WinnowerError.isInstance(error) && error.code === 'WNW_ERR_SCORE_UPSTREAM' && error.details.status === 404;
      if (endpoint.fallback && notFound && !confirmed.has(endpoint.path)) {
        gone.add(endpoint.path);
        return run(endpoint.fallback, inputs, callSignal);
      }
      throw error;
    }
  }

  return {
    backend: definition.backend,
    model: settings.model,
    ...(settings.tokenizer ? { tokenizer: settings.tokenizer } : {}),
    maxInputTokens: settings.maxInputTokens ?? 32_768,
    async score(inputs: ScoreInput[], options: ScoreCallOptions = {}): Promise<ScoreOutput[]> {
      if (closed) throw wnwError('WNW_ERR_OP_ABORTED', `${definition.backend} scorer is closed`);
      throwIfAborted(options.signal);
      if (inputs.length === 0) return [];
      await probe(options.signal);
      const prepared = await withIds(inputs, settings.tokenizer);
      const outputs = await run(resolve(definition.endpoint(prepared)), prepared, options.signal);
      return definition.refine
        ? definition.refine(outputs, prepared, (endpoint, subset) => run(endpoint, subset, options.signal))
        : outputs;
    },
    async close() {
      closed = true;
      probeStop.abort(wnwError('WNW_ERR_OP_ABORTED', `${definition.backend} scorer is closed`));
      await client.close();
    },
  };
}

async function withIds(inputs: ScoreInput[], tokenizer: Tokenizer | undefined): Promise<ScoreInput[]> {
  if (!tokenizer || inputs.every((input) => input.inputIds)) return inputs;
  const missing = inputs.filter((input) => !input.inputIds);
  const encoded = await tokenizer.encode(missing.map((input) => input.text));
  let next = 0;
  return inputs.map((input) => (input.inputIds ? input : { ...input, inputIds: encoded[next++]! }));
}

// ---------------------------------------------------------------------------------------------
// The OpenAI-compatible judge: one next token, YES/NO read from the top log-probabilities.

export interface OpenAICompatibleSettings extends ServerScorerSettings {
  /** Label tokens as the server prints them (default YES / NO); a leading space also matches. */
  labels?: { yes: string; no: string };
  /** `auto` (default): `/v1/completions` with token ids when every input has them, else chat. */
  endpoint?: 'auto' | 'chat' | 'completions';
  /** How many top log-probabilities to ask for (default 20, the usual server maximum). */
  topLogprobs?: number;
}

const ChatCompletion = z.object({
  choices: z
    .array(
      z.object({
        index: z.number().int(),
        logprobs: ChatLogprobs,
      }),
    )
    .min(1),
});
type ChatCompletion = z.infer<typeof ChatCompletion>;

const Completion = z.object({
  choices: z
    .array(
      z.object({
        index: z.number().int(),
        logprobs: z.object({ top_logprobs: z.array(z.record(z.string(), z.number()).nullable()).min(1) }),
      }),
    )
    .min(1),
});
type Completion = z.infer<typeof Completion>;

/** log(Σ exp) of the label's log-probabilities, with and without a leading space. */
export function labelLogprob(candidates: Iterable<[token: string, logprob: number]>, label: string): number {
  const matches: number[] = [];
  const seen = new Set<string>();
  for (const [token, logprob] of candidates) {
    if ((token === label || token === ` ${label}`) && !seen.has(token)) {
      seen.add(token);
      matches.push(logprob);
    }
  }
  if (matches.length === 0) return MISSING_LOGPROB;
  const max = Math.max(...matches);
  return max + Math.log(matches.reduce((sum, logprob) => sum + Math.exp(logprob - max), 0));
}

/**
 * Chat messages for a prompt the serializer wrote in ChatML (`<|im_start|>role ... <|im_end|>`), so
 * that the server applies its own chat template once rather than wrapping ours in a second one. The
 * open assistant turn at the end is where the answer goes, so it is dropped. Plain text is one user message.
 */
export function chatMessagesFrom(text: string): Array<{ role: string; content: string }> {
  const turns = [...text.matchAll(/<\|im_start\|>(system|user|assistant)\n([\s\S]*?)(?:<\|im_end\|>\n?|$)/g)].map((match) => ({
    role: match[1]!,
    content: match[2]!,
  }));
  if (turns.length === 0) return [{ role: 'user', content: text }];
  const last = turns.at(-1)!;
  if (last.role === 'assistant' && last.content.trim() === '') turns.pop();
  return turns;
}

export function createOpenAICompatibleScorer(settings: OpenAICompatibleSettings): Scorer {
  const labels = settings.labels ?? { yes: 'YES', no: 'NO' };
  if (settings.tokenizer) resolveLabelIds(settings.tokenizer, labels);
  const top = settings.topLogprobs ?? 20;
  const fromCandidates = (candidates: Array<[string, number]>): ScoreOutput =>
    judgeOutput(labelLogprob(candidates, labels.yes), labelLogprob(candidates, labels.no));

  const chat = defineEndpoint<ChatCompletion>({
    path: '/v1/chat/completions',
    inputsPerRequest: 1,
    body: ([input]) => ({
      model: settings.model,
      messages: chatMessagesFrom(input!.text),
      max_tokens: 1,
      temperature: 0,
      logprobs: true,
      top_logprobs: top,
    }),
    response: ChatCompletion,
    map: (response) => {
      const first = response.choices[0]!.logprobs.content[0]!;
      const candidates: Array<[string, number]> = first.top_logprobs.map((entry) => [entry.token, entry.logprob]);
      candidates.push([first.token, first.logprob]);
      return [fromCandidates(candidates)];
    },
  });

  const completions = defineEndpoint<Completion>({
    path: '/v1/completions',
    body: (inputs) => ({
      model: settings.model,
      prompt: inputs.every((input) => input.inputIds) ? inputs.map((input) => input.inputIds) : inputs.map((input) => input.text),
      max_tokens: 1,
      temperature: 0,
      logprobs: top,
    }),
    response: Completion,
    map: (response) =>
      [...response.choices]
        .sort((a, b) => a.index - b.index)
        .map((choice) => fromCandidates(Object.entries(choice.logprobs.top_logprobs[0] ?? {}))),
  });

  return createHttpScorer(settings, {
    backend: 'openai',
    endpoint(inputs) {
      const mode = settings.endpoint ?? 'auto';
      if (mode === 'chat') return chat;
      if (mode === 'completions') return completions;
      return inputs.every((input) => input.inputIds) ? completions : chat;
    },
  });
}
