/**
 * A fake vLLM pooling server: `POST /classify` answering test/fixtures/vllm shapes. Like vLLM it
 * applies the activation (sigmoid for one label, softmax for two) unless `use_activation: false`,
 * rejects an unknown model and inputs over `maxModelLen`. A two-way head (`twoWay`) returns the
 * [NO, YES] pair of `classifier_from_token: ["NO", "YES"]`.
 */
import { FakeHttpServer, fakeLogit, fixture, type Reply } from './fake-http-server.js';

export interface FakeVllmOptions {
  model?: string;
  twoWay?: boolean;
  maxModelLen?: number;
}

const isIds = (value: unknown): value is number[] => Array.isArray(value) && value.length > 0 && value.every((item) => Number.isInteger(item));

export class FakeVllm extends FakeHttpServer {
  readonly model: string;
  twoWay: boolean;
  maxModelLen: number;

  constructor(options: FakeVllmOptions = {}) {
    super({ '/classify': (body) => this.#classify(body) });
    this.model = options.model ?? 'winnower/verifier-qwen3-4b-cls';
    this.twoWay = options.twoWay ?? false;
    this.maxModelLen = options.maxModelLen ?? 32_768;
  }

  #classify(body: any): Reply {
    if (body?.model !== undefined && body.model !== this.model) {
      return { status: 404, json: { error: { message: `The model \`${body.model}\` does not exist.`, type: 'NotFoundError', param: null, code: 404 } } };
    }
    const input: unknown = body?.input;
    let prompts: Array<number[] | string>;
    if (typeof input === 'string' || isIds(input)) prompts = [input];
    else if (Array.isArray(input) && input.length > 0 && (input.every((item) => typeof item === 'string') || input.every(isIds))) prompts = input;
    else return { status: 400, json: { error: { message: 'input must be a string, a list of strings, token ids or a list of token id lists', type: 'BadRequestError', param: null, code: 400 } } };
    for (const prompt of prompts) {
      const tokens = typeof prompt === 'string' ? Math.ceil(prompt.length / 4) : prompt.length;
      if (tokens > this.maxModelLen) return { status: 400, json: fixture('vllm', 'error-400') };
    }
    const activate = body.use_activation !== false;
    const template = fixture('vllm', this.twoWay ? 'classify-2way' : 'classify');
    const data = prompts.map((prompt, index) => {
      const logit = fakeLogit(prompt);
      let probs: number[];
      if (this.twoWay) {
        const pair = [-logit / 2, logit / 2];
        probs = activate ? pair.map((value) => 1 / (1 + Math.exp(-2 * value))) : pair;
      } else {
        probs = [activate ? 1 / (1 + Math.exp(-logit)) : logit];
      }
      return { ...template.data[0], index, probs, label: this.twoWay ? (logit >= 0 ? 'YES' : 'NO') : 'LABEL_0' };
    });
    const tokens = prompts.reduce((sum, prompt) => sum + (typeof prompt === 'string' ? Math.ceil(prompt.length / 4) : prompt.length), 0);
    // Real servers answer in input order; the fake reverses it so that clients must read `index`.
    return {
      status: 200,
      json: { ...template, model: this.model, data: data.reverse(), usage: { ...template.usage, prompt_tokens: tokens, total_tokens: tokens } },
    };
  }
}

export async function startFakeVllm(options: FakeVllmOptions = {}): Promise<FakeVllm> {
  return new FakeVllm(options).start();
}
