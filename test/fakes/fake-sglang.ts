/**
 * A fake SGLang server: `/classify` (a scalar head served with --is-embedding), `/v1/score` and
 * `/generate` (a generative judge). Responses are the fixtures in test/fixtures/sglang with
 * deterministic scores from `fakeLogit` of the ids or text received; request checks follow SGLang's
 * own (query/items types must match).
 */
import { FakeHttpServer, fakeLogit, fixture, logSigmoid, type Reply } from './fake-http-server.js';

export interface FakeSGLangOptions {
  /** Token ids the fake treats as YES and NO (Qwen3's are used by default). */
  yesId?: number;
  noId?: number;
}

const isIds = (value: unknown): value is number[] => Array.isArray(value) && value.every((item) => Number.isInteger(item));
const isIdLists = (value: unknown): value is number[][] => Array.isArray(value) && value.length > 0 && value.every(isIds);
const isTexts = (value: unknown): value is string[] => Array.isArray(value) && value.length > 0 && value.every((item) => typeof item === 'string');

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

  constructor(options: FakeSGLangOptions = {}) {
    super({
      '/classify': (body) => this.#classify(body),
      '/v1/score': (body) => this.#score(body),
      '/generate': (body) => this.#generate(body),
    });
    this.yesId = options.yesId ?? 14004;
    this.noId = options.noId ?? 8996;
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
      const logit = fakeLogit(prompt);
      return {
        ...template,
        embedding: [this.l2Normalised ? (logit >= 0 ? 1 : -1) : logit],
        meta_info: { ...template.meta_info, id: `classify-${this.requests.length}-${index}`, prompt_tokens: prompt.length },
      };
    });
    return { status: 200, json: Array.isArray(body.input_ids?.[0]) || Array.isArray(body.text) ? results : results[0] };
  }

  #score(body: any): Reply {
    if (this.scoreNotFound) return { status: 404, json: fixture('sglang', 'not-found') };
    const labels: unknown = body?.label_token_ids;
    if (!isIds(labels) || labels.length === 0) return badRequest('label_token_ids must be a non-empty list of token ids');
    const { query, items } = body;
    let prompts: Array<number[] | string>;
    if (typeof query === 'string' && isTexts(items)) prompts = items.map((item) => (body.item_first ? item + query : query + item));
    else if (isIds(query) && isIdLists(items)) prompts = items.map((item) => (body.item_first ? [...item, ...query] : [...query, ...item]));
    else return badRequest('Invalid combination of query/items types for score_request.');
    const scores = prompts.map((prompt) => {
      const logprobs = labels.map((id) => this.logprobOf(id, fakeLogit(prompt)));
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
          output_token_ids_logprobs: body.return_logprob && isIds(wanted) ? [wanted.map((id) => [this.logprobOf(id, logit), id, null])] : undefined,
        },
      };
    });
    return { status: 200, json: Array.isArray(body.input_ids?.[0]) || Array.isArray(body.text) ? results : results[0] };
  }
}

export async function startFakeSGLang(options: FakeSGLangOptions = {}): Promise<FakeSGLang> {
  return new FakeSGLang(options).start();
}
