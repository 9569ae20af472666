/**
 * A fake OpenAI-compatible server (as vLLM, SGLang or llama.cpp serve it): `/v1/chat/completions`
 * and `/v1/completions` with `logprobs`, shaped as test/fixtures/openai. The label probability is
 * split between "YES" and " YES" (and "NO" / " NO"), so a client must add both variants up.
 */
import { chatLogprobsChoice, FakeHttpServer, invalidRequest, fakeLogit, fixture, logSigmoid, type Reply } from './fake-http-server.js';

export interface FakeOpenAIOptions {
  /** Require `Authorization: Bearer <apiKey>`. */
  apiKey?: string;
  /** Largest `top_logprobs` accepted (default 20). */
  maxLogprobs?: number;
}

const isIds = (value: unknown): value is number[] =>
  Array.isArray(value) && value.length > 0 && value.every((item) => Number.isInteger(item));

export class FakeOpenAI extends FakeHttpServer {
  readonly apiKey: string | undefined;
  readonly maxLogprobs: number;
  /** Leave this label out of the top log-probabilities (as when it is very unlikely). */
  omit: 'yes' | 'no' | undefined;

  constructor(options: FakeOpenAIOptions = {}) {
    super({
      '/v1/chat/completions': (body, request) => this.#authorized(request.headers.authorization) ?? this.#chat(body),
      '/v1/completions': (body, request) => this.#authorized(request.headers.authorization) ?? this.#completions(body),
    });
    this.apiKey = options.apiKey;
    this.maxLogprobs = options.maxLogprobs ?? 20;
  }

  /** Top log-probabilities of the first output token for a prompt with logit `logit`, best first. */
  topLogprobs(logit: number, count: number): Array<[string, number]> {
    const yes = logSigmoid(logit) + Math.log(0.9);
    const no = logSigmoid(-logit) + Math.log(0.9);
    const all: Array<[string, number]> = [
      ['YES', yes + Math.log(0.7)],
      [' YES', yes + Math.log(0.3)],
      ['NO', no + Math.log(0.7)],
      [' NO', no + Math.log(0.3)],
      ['Yes', Math.log(0.05)],
      ['The', Math.log(0.03)],
      ['\n', Math.log(0.02)],
    ];
    return all
      .filter(([token]) => !(this.omit === 'yes' && token.trim() === 'YES') && !(this.omit === 'no' && token.trim() === 'NO'))
      .sort((a, b) => b[1] - a[1])
      .slice(0, count);
  }

  #authorized(header: string | undefined): Reply | undefined {
    if (this.apiKey === undefined || header === `Bearer ${this.apiKey}`) return undefined;
    return { status: 401, json: fixture('openai', 'error-401') };
  }

  #chat(body: any): Reply {
    const content = body?.messages?.at(-1)?.content;
    if (typeof content !== 'string') return invalidRequest('messages must end with a message whose content is text', 'messages');
    if (body.logprobs !== true) return invalidRequest('this fake only answers requests with logprobs: true', 'logprobs');
    const count = body.top_logprobs ?? 0;
    if (!(count >= 0 && count <= this.maxLogprobs))
      return invalidRequest(`top_logprobs must be between 0 and ${this.maxLogprobs}`, 'top_logprobs');
    const top = this.topLogprobs(fakeLogit(content), count);
    const [token, logprob] = top[0] ?? ['YES', -0.1];
    const { template, choice } = chatLogprobsChoice(token, logprob, top);
    return { status: 200, json: { ...template, model: body.model, choices: [choice] } };
  }

  #completions(body: any): Reply {
    const prompt: unknown = body?.prompt;
    let prompts: Array<number[] | string>;
    if (typeof prompt === 'string' || isIds(prompt)) prompts = [prompt];
    else if (Array.isArray(prompt) && prompt.length > 0 && (prompt.every((item) => typeof item === 'string') || prompt.every(isIds)))
      prompts = prompt;
    else return invalidRequest('prompt must be a string, a list of strings, token ids or a list of token id lists', 'prompt');
    const count = body.logprobs ?? 0;
    if (!(Number.isInteger(count) && count >= 0 && count <= this.maxLogprobs))
      return invalidRequest(`logprobs must be between 0 and ${this.maxLogprobs}`, 'logprobs');
    if (body.echo) return invalidRequest('this fake does not return prompt log-probabilities', 'echo');
    const template = fixture('openai', 'completion');
    const choices = prompts.map((one, index) => {
      const top = this.topLogprobs(fakeLogit(one), count);
      const [token, logprob] = top[0] ?? ['YES', -0.1];
      return {
        ...template.choices[0],
        index,
        text: token,
        logprobs: { text_offset: [0], token_logprobs: [logprob], tokens: [token], top_logprobs: [Object.fromEntries(top)] },
      };
    });
    return { status: 200, json: { ...template, model: body.model, choices } };
  }
}

export async function startFakeOpenAI(options: FakeOpenAIOptions = {}): Promise<FakeOpenAI> {
  return new FakeOpenAI(options).start();
}
