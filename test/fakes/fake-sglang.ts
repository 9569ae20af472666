/**
 * A fake SGLang server: `/classify` (a head served with --is-embedding: raw outputs, one per label),
 * `/v1/score` `{query, items, label_token_ids}` and `/generate` (a generative judge), and
 * `GET /get_server_info`, which shows `multi_item_scoring_delimiter` when the fake plays a server
 * started with `--multi-item-scoring-delimiter`. Responses are the fixtures in test/fixtures/sglang
 * with deterministic scores from `fakeLogit` of the ids or text received; request checks follow
 * SGLang's own (query/items types must match; the pre-merge `text_1`/`text_2` names are refused).
 * Prefill is counted (`prefill`): a multi-item request computes its query once.
 */
import { FakeHttpServer, fakeLogit, fixture, logSigmoid, type Reply } from './fake-http-server.js';
import { PrefillCounter } from './prefill-counter.js';

export interface FakeSGLangOptions {
  /** Token ids the fake treats as YES and NO (Qwen3's are used by default). */
  yesId?: number;
  noId?: number;
  /** Outputs of the /classify head (default 1). */
  numLabels?: number;
  /** Token id of `--multi-item-scoring-delimiter`; absent: the server scores each item as its own sequence. */
  multiItemDelimiter?: number;
  /** Radix (prefix) cache, for prefill counts. */
  prefixCache?: boolean;
  /** A `*ForSequenceClassification` model: /v1/score without label ids answers the head's logits. */
  classifier?: boolean;
}

/** Fields of SGLang's ScoringRequest; anything else is refused. */
const SCORE_FIELDS = new Set(['model', 'query', 'items', 'label_token_ids', 'apply_softmax', 'item_first', 'rid', 'user']);

const isIds = (value: unknown): value is number[] => Array.isArray(value) && value.every((item) => Number.isInteger(item));
const isIdLists = (value: unknown): value is number[][] => Array.isArray(value) && value.length > 0 && value.every(isIds);
const isTexts = (value: unknown): value is string[] =>
  Array.isArray(value) && value.length > 0 && value.every((item) => typeof item === 'string');

function badRequest(message: string): Reply {
  return { status: 400, json: { ...fixture('sglang', 'error-400'), message } };
}

export class FakeSGLang extends FakeHttpServer {
  /** Answer 404 on /v1/score, as servers older than the scoring API do. */
  scoreNotFound = false;
  /** /classify answers ±1: the L2-normalisation of a Qwen3 classifier without id2label. */
  l2Normalised = false;
  readonly yesId: number;
  readonly noId: number;
  numLabels: number;
  multiItemDelimiter: number | undefined;
  classifier: boolean;
  readonly prefill: PrefillCounter;

  constructor(options: FakeSGLangOptions = {}) {
    super({
      'GET /get_server_info': () => this.#serverInfo(),
      '/classify': (body) => this.#classify(body),
      '/v1/score': (body) => this.#score(body),
      '/generate': (body) => this.#generate(body),
    });
    this.yesId = options.yesId ?? 14004;
    this.noId = options.noId ?? 8996;
    this.numLabels = options.numLabels ?? 1;
    this.multiItemDelimiter = options.multiItemDelimiter;
    this.classifier = options.classifier ?? false;
    this.prefill = new PrefillCounter(options.prefixCache ?? false);
  }

  #serverInfo(): Reply {
    return { status: 200, json: { ...fixture('sglang', 'server-info'), multi_item_scoring_delimiter: this.multiItemDelimiter ?? null } };
  }

  /** Raw outputs of the head for a prompt: output 0 carries `fakeLogit`. */
  logits(prompt: number[] | string): number[] {
    const key = typeof prompt === 'string' ? prompt : prompt.join(',');
    return [fakeLogit(prompt), ...Array.from({ length: this.numLabels - 1 }, (_, index) => fakeLogit(`${key}#${index + 1}`))];
  }

  /** Log-probability of a token id at the first output position for a prompt with logit `logit`. */
  logprobOf(id: number, logit: number): number {
    if (id === this.yesId) return logSigmoid(logit) + Math.log(0.9);
    if (id === this.noId) return logSigmoid(-logit) + Math.log(0.9);
    return Math.log(0.1 / 1000);
  }

  #prompts(body: any): Array<number[] | string> | Reply {
    if ((body?.input_ids === undefined) === (body?.text === undefined)) return badRequest('Either text or input_ids should be provided.');
    if (body.input_ids !== undefined) {
      if (isIdLists(body.input_ids)) return body.input_ids;
      if (isIds(body.input_ids)) return [body.input_ids];
      return badRequest('input_ids must be a list of token ids or a list of such lists');
    }
    if (typeof body.text === 'string') return [body.text];
    if (isTexts(body.text)) return body.text;
    return badRequest('text must be a string or a list of strings');
  }

  #classify(body: any): Reply {
    const prompts = this.#prompts(body);
    if (!Array.isArray(prompts)) return prompts;
    const template = fixture('sglang', 'classify')[0];
    const results = prompts.map((prompt, index) => {
      this.prefill.add(prompt);
      const logits = this.logits(prompt);
      return {
        ...template,
        embedding: this.l2Normalised ? logits.map((logit) => (logit >= 0 ? 1 : -1)) : logits,
        meta_info: { ...template.meta_info, id: `classify-${this.requests.length}-${index}`, prompt_tokens: prompt.length },
      };
    });
    return { status: 200, json: Array.isArray(body.input_ids?.[0]) || Array.isArray(body.text) ? results : results[0] };
  }

  #score(body: any): Reply {
    if (this.scoreNotFound) return { status: 404, json: fixture('sglang', 'not-found') };
    if ('text_1' in (body ?? {}) || 'text_2' in (body ?? {}))
      return badRequest('text_1/text_2 are not fields of a score request; use query and items.');
    const extra = Object.keys(body ?? {}).find((key) => !SCORE_FIELDS.has(key));
    if (extra) return badRequest(`Unknown field in score request: ${extra}`);
    const labels: unknown = body?.label_token_ids;
    // A classification model (sgl-project/sglang#22118) needs no label ids: it answers its head's pooled logits.
    const classification = labels === undefined && this.classifier;
    if (!classification && (!isIds(labels) || labels.length === 0))
      return badRequest('label_token_ids must be a non-empty list of token ids');
    const { query, items } = body;
    let prompts: Array<number[] | string>;
    if (typeof query === 'string' && isTexts(items)) prompts = items.map((item) => (body.item_first ? item + query : query + item));
    else if (isIds(query) && isIdLists(items)) prompts = items.map((item) => (body.item_first ? [...item, ...query] : [...query, ...item]));
    else return badRequest('Invalid combination of query/items types for score_request.');
    if (this.multiItemDelimiter !== undefined && items.length > 1) {
      // One sequence: query, then each item behind a delimiter token, all in one forward pass.
      this.prefill.add(isIds(query) ? query : (query as string));
      for (const item of items as Array<number[] | string>)
        this.prefill.addComputed((typeof item === 'string' ? Math.ceil(item.length / 4) : item.length) + 1);
    } else for (const prompt of prompts) this.prefill.add(prompt);
    if (classification)
      return {
        status: 200,
        json: { ...fixture('sglang', 'score'), scores: prompts.map((prompt) => this.logits(prompt)), model: body.model ?? 'default' },
      };
    const labelIds = labels as number[];
    const scores = prompts.map((prompt) => {
      const logprobs = labelIds.map((id) => this.logprobOf(id, fakeLogit(prompt)));
      if (!body.apply_softmax) return logprobs.map(Math.exp);
      const max = Math.max(...logprobs);
      const total = logprobs.reduce((sum, logprob) => sum + Math.exp(logprob - max), 0);
      return logprobs.map((logprob) => Math.exp(logprob - max) / total);
    });
    return { status: 200, json: { ...fixture('sglang', 'score'), scores, model: body.model ?? 'default' } };
  }

  #generate(body: any): Reply {
    const prompts = this.#prompts(body);
    if (!Array.isArray(prompts)) return prompts;
    const wanted: unknown = body.token_ids_logprob;
    const template = fixture('sglang', 'generate')[0];
    const results = prompts.map((prompt, index) => {
      const logit = fakeLogit(prompt);
      const top = logit >= 0 ? this.yesId : this.noId;
      return {
        ...template,
        text: top === this.yesId ? 'YES' : 'NO',
        output_ids: [top],
        meta_info: {
          ...template.meta_info,
          id: `generate-${this.requests.length}-${index}`,
          prompt_tokens: prompt.length,
          output_token_logprobs: body.return_logprob ? [[this.logprobOf(top, logit), top, null]] : undefined,
          output_token_ids_logprobs:
            body.return_logprob && isIds(wanted) ? [wanted.map((id) => [this.logprobOf(id, logit), id, null])] : undefined,
        },
      };
    });
    return { status: 200, json: Array.isArray(body.input_ids?.[0]) || Array.isArray(body.text) ? results : results[0] };
  }
}

export async function startFakeSGLang(options: FakeSGLangOptions = {}): Promise<FakeSGLang> {
  return new FakeSGLang(options).start();
}
