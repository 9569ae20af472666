/**
 * A fake vLLM pooling server (`vllm serve --runner pooling`), after vLLM's current documented
 * protocol (docs/design/06-value-model-servers.md#4, #5, #6):
 * - `GET /v1/models`: the served model with its `max_model_len`;
 * - `POST /classify` `{model, input, use_activation, truncate_prompt_tokens, truncation_side, ...}`:
 *   validated like vLLM's pydantic model (extra fields are refused, `normalize` names
 *   `use_activation` as its replacement), inputs over `max_model_len` refused with vLLM's message;
 *   the activation follows `problem_type` (sigmoid for multi-label or one label, softmax otherwise)
 *   unless `use_activation: false`;
 * - `POST /score` `{model, queries, documents}` for one-label heads (`text_1`/`text_2` refused).
 * What a real vLLM did (docs/design/06-value-model-servers.md#8), reproduced here:
 * - `truncate_prompt_tokens` equal to `max_model_len` never answers (one less works);
 * - `/score` takes text only: token ids answer 400 "Input should be a valid string" (pydantic's
 *   message for each alternative of the field's type); query and document are tokenized apart;
 * - `/score` clamps its probability to [1e-6, 1 − 1e-6], so every logit beyond ±13.8155 ties;
 * - text is counted at `charsPerToken` characters a token (default 4), which a client's estimate
 *   without the model's tokenizer may miss by some percent either way.
 * `legacy` makes it a server from before `use_activation` (refused as an extra input, activation
 * always on). Scores come from `fakeLogit` of what was received (times `logitScale`); results come
 * back in reverse order so clients must read `index`. Prefill is counted (`prefill`), with a
 * prefix cache when asked.
 */
import { FakeHttpServer, fakeLogit, fixture, type Reply } from './fake-http-server.js';
import { PrefillCounter } from './prefill-counter.js';

export interface FakeVllmOptions {
  model?: string;
  /** A two-way judge head: [NO, YES] logits (`classifier_from_token: ["NO", "YES"]`). */
  twoWay?: boolean;
  /** Outputs of the classification head (default 1; 2 with `twoWay`). */
  numLabels?: number;
  /** The model config's `problem_type`; picks the default activation as vLLM does. */
  problemType?: 'single_label_classification' | 'multi_label_classification' | 'regression';
  maxModelLen?: number;
  /** A server from before `use_activation` existed. */
  legacy?: boolean;
  /** Automatic prefix caching, for prefill counts. */
  prefixCache?: boolean;
  /** Characters per token when counting a text input (default 4). */
  charsPerToken?: number;
  /** Multiplies every logit (default 1: logits in [-4, 4]); large values reach /score's clamp. */
  logitScale?: number;
}

/** `/score` clamps its probability to [1e-6, 1 − 1e-6]: a logit of ±ln(1e6) = ±13.8155 at most. */
export const SCORE_CLAMP = 1e-6;

/** Fields of vLLM's `/classify` request (vllm/entrypoints/pooling/base/protocol.py); anything else is refused. */
const CLASSIFY_FIELDS = new Set([
  'model',
  'user',
  'input',
  'messages',
  'add_generation_prompt',
  'continue_final_message',
  'chat_template',
  'chat_template_kwargs',
  'add_special_tokens',
  'truncate_prompt_tokens',
  'truncation_side',
  'padding',
  'request_id',
  'priority',
  'cache_salt',
  'mm_processor_kwargs',
  'use_activation',
]);
const SCORE_FIELDS = new Set([
  'model',
  'user',
  'queries',
  'documents',
  'truncate_prompt_tokens',
  'request_id',
  'priority',
  'mm_processor_kwargs',
  'use_activation',
]);

const isIds = (value: unknown): value is number[] =>
  Array.isArray(value) && value.length > 0 && value.every((item) => Number.isInteger(item));

/** vLLM's (FastAPI's) answer to a request that fails validation. */
function invalid(message: string, param: string | null = null): Reply {
  return { status: 400, json: { error: { message, type: 'BadRequestError', param, code: 400 } } };
}

/** pydantic's refusal of token ids in a `str | list[str]` field (vLLM's /score `queries` / `documents`). */
function notAString(field: string, input: unknown): Reply {
  const shown = JSON.stringify(input).slice(0, 60);
  const errors = [
    `{'type': 'string_type', 'loc': ('body', '${field}', 'str'), 'msg': 'Input should be a valid string', 'input': ${shown}}`,
    `{'type': 'string_type', 'loc': ('body', '${field}', 'list[str]', 0), 'msg': 'Input should be a valid string', 'input': ${shown}}`,
  ];
  return invalid(`[${errors.join(', ')}]`, field);
}

export class FakeVllm extends FakeHttpServer {
  readonly model: string;
  twoWay: boolean;
  numLabels: number;
  problemType: FakeVllmOptions['problemType'];
  maxModelLen: number;
  legacy: boolean;
  readonly prefill: PrefillCounter;
  /** A request carrying a prompt this matches is refused with a plain 400 (a batch-level failure). */
  refuse: ((prompt: number[] | string) => boolean) | undefined;
  charsPerToken: number;
  logitScale: number;

  constructor(options: FakeVllmOptions = {}) {
    super({
      'GET /v1/models': () => this.#models(),
      '/classify': (body) => this.#classify(body),
      '/score': (body) => this.#score(body),
    });
    this.model = options.model ?? 'winnower/verifier-qwen3-4b-cls';
    this.twoWay = options.twoWay ?? false;
    this.numLabels = options.numLabels ?? (this.twoWay ? 2 : 1);
    this.problemType = options.problemType;
    this.maxModelLen = options.maxModelLen ?? 32_768;
    this.legacy = options.legacy ?? false;
    this.prefill = new PrefillCounter(options.prefixCache ?? false);
    this.charsPerToken = options.charsPerToken ?? 4;
    this.logitScale = options.logitScale ?? 1;
  }

  /** Tokens the server counts for a prompt: its length in ids, or the text at `charsPerToken`. */
  tokensOf(prompt: number[] | string): number {
    return typeof prompt === 'string' ? Math.ceil(prompt.length / this.charsPerToken) : prompt.length;
  }

  /** The head's raw outputs for a prompt: output 0 (or YES of a two-way head) carries `fakeLogit`. */
  logits(prompt: number[] | string): number[] {
    const logit = fakeLogit(prompt) * this.logitScale;
    if (this.twoWay) return [-logit / 2, logit / 2];
    const key = typeof prompt === 'string' ? prompt : prompt.join(',');
    return [logit, ...Array.from({ length: this.numLabels - 1 }, (_, index) => fakeLogit(`${key}#${index + 1}`) * this.logitScale)];
  }

  /** vLLM's default activation: sigmoid for multi-label or one-label heads, softmax over the classes otherwise. */
  activate(logits: number[]): number[] {
    if (this.problemType === 'regression') return logits;
    if (this.problemType === 'multi_label_classification' || logits.length === 1) return logits.map((value) => 1 / (1 + Math.exp(-value)));
    if (this.twoWay) return logits.map((value) => 1 / (1 + Math.exp(-2 * value)));
    const max = Math.max(...logits);
    const total = logits.reduce((sum, value) => sum + Math.exp(value - max), 0);
    return logits.map((value) => Math.exp(value - max) / total);
  }

  #models(): Reply {
    return {
      status: 200,
      json: {
        object: 'list',
        data: [{ ...fixture('vllm', 'models').data[0], id: this.model, root: this.model, max_model_len: this.maxModelLen }],
      },
    };
  }

  #common(body: any, fields: Set<string>): Reply | undefined {
    if (typeof body !== 'object' || body === null || Array.isArray(body)) return invalid('request body must be a JSON object');
    if ('normalize' in body) return invalid('`normalize` is deprecated and removed; use `use_activation` instead', 'normalize');
    const allowed = this.legacy ? new Set([...fields].filter((field) => field !== 'use_activation')) : fields;
    const extra = Object.keys(body).find((key) => !allowed.has(key));
    if (extra)
      return invalid(
        `[{'type': 'extra_forbidden', 'loc': ('body', '${extra}'), 'msg': 'Extra inputs are not permitted', 'input': ${JSON.stringify(body[extra])}}]`,
        extra,
      );
    if (body.model !== undefined && body.model !== this.model) {
      return {
        status: 404,
        json: { error: { message: `The model \`${body.model}\` does not exist.`, type: 'NotFoundError', param: 'model', code: 404 } },
      };
    }
    if (body.use_activation !== undefined && body.use_activation !== null && typeof body.use_activation !== 'boolean')
      return invalid('use_activation must be a boolean or null', 'use_activation');
    if (body.priority !== undefined && body.priority !== 0) return invalid('Priority scheduling is not enabled.', 'priority');
    const truncate = body.truncate_prompt_tokens;
    if (truncate !== undefined && truncate !== null && !(Number.isInteger(truncate) && truncate >= -1))
      return invalid('truncate_prompt_tokens must be an integer >= -1', 'truncate_prompt_tokens');
    if (Number.isInteger(truncate) && truncate > this.maxModelLen) {
      return invalid(
        `truncate_prompt_tokens value (${truncate}) is greater than max_model_len (${this.maxModelLen}). Please, select a smaller truncation size.`,
        'truncate_prompt_tokens',
      );
    }
    // Seen on a real vLLM (8000 of 8000): the request is never answered; 7999 works.
    if (truncate === this.maxModelLen) return { status: 200, json: null, hang: true };
    if (
      body.truncation_side !== undefined &&
      body.truncation_side !== null &&
      body.truncation_side !== 'left' &&
      body.truncation_side !== 'right'
    ) {
      return invalid("truncation_side must be 'left' or 'right'", 'truncation_side');
    }
    return undefined;
  }

  /** A prompt after `truncate_prompt_tokens` (`left` keeps the last tokens), or the context-length refusal. */
  #fit(prompt: number[] | string, body: any): number[] | string | Reply {
    const limit: number | undefined =
      Number.isInteger(body.truncate_prompt_tokens) && body.truncate_prompt_tokens > 0 ? body.truncate_prompt_tokens : undefined;
    let fitted = prompt;
    if (limit !== undefined && this.tokensOf(prompt) > limit) {
      const keep = typeof prompt === 'string' ? limit * this.charsPerToken : limit;
      fitted = body.truncation_side === 'left' ? prompt.slice(prompt.length - keep) : prompt.slice(0, keep);
    }
    const tokens = this.tokensOf(fitted);
    if (tokens > this.maxModelLen) {
      const error = fixture('vllm', 'error-400');
      error.error.message = `This model's maximum context length is ${this.maxModelLen} tokens. However, you requested ${tokens} tokens in the input for classification. Please reduce the length of the input.`;
      return { status: 400, json: error };
    }
    return fitted;
  }

  #classify(body: any): Reply {
    const refused = this.#common(body, CLASSIFY_FIELDS);
    if (refused) return refused;
    const input: unknown = body.input;
    let prompts: Array<number[] | string>;
    if (typeof input === 'string' || isIds(input)) prompts = [input];
    else if (Array.isArray(input) && input.length > 0 && (input.every((item) => typeof item === 'string') || input.every(isIds)))
      prompts = input;
    else return invalid('input must be a string, a list of strings, token ids or a list of token id lists', 'input');
    if (this.refuse && prompts.some(this.refuse)) return invalid('input refused by the test', 'input');
    const fitted: Array<number[] | string> = [];
    for (const prompt of prompts) {
      const result = this.#fit(prompt, body);
      if (!Array.isArray(result) && typeof result !== 'string') return result;
      fitted.push(result);
    }
    const activate = this.legacy || body.use_activation !== false;
    const template = fixture('vllm', 'classify');
    const data = fitted.map((prompt, index) => {
      this.prefill.add(prompt);
      const logits = this.logits(prompt);
      const probs = activate ? this.activate(logits) : logits;
      const top = logits.indexOf(Math.max(...logits));
      return { index, label: this.twoWay ? (top === 1 ? 'YES' : 'NO') : `LABEL_${top}`, probs, num_classes: probs.length };
    });
    const tokens = fitted.reduce((sum, prompt) => sum + this.tokensOf(prompt), 0);
    return {
      status: 200,
      json: {
        ...template,
        model: this.model,
        data: data.reverse(),
        usage: { ...template.usage, prompt_tokens: tokens, total_tokens: tokens },
      },
    };
  }

  #score(body: any): Reply {
    const refused = this.#common(body, SCORE_FIELDS);
    if (refused) return refused;
    if (this.numLabels !== 1) return invalid('The Score API is only enabled for models with num_labels == 1.');
    const { queries, documents } = body;
    // `queries: str | list[str]`, `documents: str | list[str] | ...`: token ids fail validation.
    const strings = (value: unknown): string[] | undefined =>
      typeof value === 'string'
        ? [value]
        : Array.isArray(value) && value.length > 0 && value.every((item) => typeof item === 'string')
          ? value
          : undefined;
    const queryList = strings(queries);
    if (!queryList) return notAString('queries', queries);
    const documentList = strings(documents);
    if (!documentList) return notAString('documents', documents);
    if (queryList.length !== 1 && queryList.length !== documentList.length)
      return invalid('queries must be one item or as many as documents', 'queries');
    const data: Array<{ index: number; object: string; score: number }> = [];
    let tokens = 0;
    for (const [index, document] of documentList.entries()) {
      const query = queryList.length === 1 ? queryList[0]! : queryList[index]!;
      // Query and document are tokenized apart, then joined.
      const count = this.tokensOf(query) + this.tokensOf(document);
      if (count > this.maxModelLen) {
        const error = fixture('vllm', 'error-400');
        error.error.message = `This model's maximum context length is ${this.maxModelLen} tokens. However, you requested ${count} tokens in the input for score. Please reduce the length of the input.`;
        return { status: 400, json: error };
      }
      const prompt = query + document;
      if (this.refuse?.(prompt)) return invalid('input refused by the test', 'documents');
      this.prefill.add(prompt);
      tokens += count;
      const probability = this.activate(this.logits(prompt))[0]!;
      data.push({ index, object: 'score', score: Math.min(1 - SCORE_CLAMP, Math.max(SCORE_CLAMP, probability)) });
    }
    const template = fixture('vllm', 'score');
    return {
      status: 200,
      json: {
        ...template,
        model: this.model,
        data: data.reverse(),
        usage: { ...template.usage, prompt_tokens: tokens, total_tokens: tokens },
      },
    };
  }
}

export async function startFakeVllm(options: FakeVllmOptions = {}): Promise<FakeVllm> {
  return new FakeVllm(options).start();
}
