/**
 * A fake pairwise judge: an OpenAI-compatible `/v1/chat/completions` that answers one token with
 * `logprobs` exactly as vLLM and SGLang do (`choices[0].logprobs.content[0].top_logprobs`, each
 * `{token, logprob, bytes}`; docs/design/06-value-model-servers.md#10), on the shapes of
 * test/fixtures/openai. Its preference is deterministic: a patch containing `marker` is better;
 * `bias` digits are added in favour of whichever patch is shown first (Patch A), as a judge with
 * position bias does. The score digits' probability is spread around the target digit, and part
 * of it sits on the same digit with a leading space, so a client must add both up.
 */
import { chatLogprobsChoice, FakeHttpServer, invalidRequest, fixture, type Reply } from './fake-http-server.js';

export interface FakeJudgeOptions {
  /** Require `Authorization: Bearer <apiKey>`. */
  apiKey?: string;
  /** A patch containing this text is the better one (default `JUDGE-PREFERS-ME`). */
  marker?: string;
  /** Digits added towards Patch A whatever the patches (position bias); default 0. */
  bias?: number;
}

/** The text between `start` and the next fence. */
function section(content: string, start: string): string | undefined {
  const from = content.indexOf(start);
  if (from < 0) return undefined;
  const body = content.slice(from + start.length);
  const end = body.indexOf('\n```');
  return end < 0 ? undefined : body.slice(0, end);
}

export class FakeJudge extends FakeHttpServer {
  readonly apiKey: string | undefined;
  marker: string;
  bias: number;
  /** Answer without any digit among the top log-probabilities (a model that talks instead). */
  noDigits = false;
  /** Pad every answer with this many bytes of filler (an oversized answer). */
  padBytes = 0;
  /** The (A, B) patches of every comparison answered, in order. */
  readonly asked: Array<{ a: string; b: string }> = [];

  constructor(options: FakeJudgeOptions = {}) {
    super({ '/v1/chat/completions': (body, request) => this.#authorized(request.headers.authorization) ?? this.#chat(body) });
    this.apiKey = options.apiKey;
    this.marker = options.marker ?? 'JUDGE-PREFERS-ME';
    this.bias = options.bias ?? 0;
  }

  /** The digit the judge leans to for (A, B): 5 = equal, 9 = A better, 1 = B better. */
  target(a: string, b: string): number {
    const quality = (patch: string) => (patch.includes(this.marker) ? 1 : 0);
    return 5 + 3 * (quality(a) - quality(b)) + this.bias;
  }

  /** Top log-probabilities for a target digit, best first: digits around it, then some text tokens. */
  topLogprobs(target: number): Array<[string, number]> {
    const weights = Array.from({ length: 9 }, (_, index) => Math.exp(-((index + 1 - target) ** 2) / 2));
    const total = weights.reduce((sum, w) => sum + w, 0);
    const all: Array<[string, number]> = [];
    weights.forEach((w, index) => {
      const p = (0.9 * w) / total;
      all.push([String(index + 1), Math.log(p * 0.8)], [` ${index + 1}`, Math.log(p * 0.2)]);
    });
    all.push(['The', Math.log(0.06)], ['\n', Math.log(0.04)]);
    return all
      .filter(([token]) => !(this.noDigits && /\d/.test(token)))
      .sort((x, y) => y[1] - x[1])
      .slice(0, 20);
  }

  #authorized(header: string | undefined): Reply | undefined {
    if (this.apiKey === undefined || header === `Bearer ${this.apiKey}`) return undefined;
    return { status: 401, json: fixture('openai', 'error-401') };
  }

  #chat(body: any): Reply {
    const content = body?.messages?.at(-1)?.content;
    if (typeof content !== 'string') return invalidRequest('messages must end with text', 'messages');
    if (body.logprobs !== true) return invalidRequest('this fake answers logprobs: true only', 'logprobs');
    const count = body.top_logprobs ?? 0;
    if (!(Number.isInteger(count) && count >= 0 && count <= 20))
      return invalidRequest('top_logprobs must be between 0 and 20', 'top_logprobs');
    const a = section(content, '## Patch A\n```diff\n');
    const b = section(content, '## Patch B\n```diff\n');
    if (a === undefined || b === undefined) return invalidRequest('no Patch A / Patch B in the prompt');
    this.asked.push({ a, b });
    const top = this.topLogprobs(this.target(a, b)).slice(0, count);
    const [token, logprob] = top[0] ?? ['The', Math.log(0.06)];
    const { template, choice } = chatLogprobsChoice(token, logprob, top);
    const promptTokens = Math.ceil(JSON.stringify(body.messages).length / 4);
    return {
      status: 200,
      json: {
        ...template,
        model: body.model,
        choices: [choice],
        usage: { prompt_tokens: promptTokens, total_tokens: promptTokens + 1, completion_tokens: 1, prompt_tokens_details: null },
        ...(this.padBytes > 0 ? { system_fingerprint: 'x'.repeat(this.padBytes) } : {}),
      },
    };
  }
}

export async function startFakeJudge(options: FakeJudgeOptions = {}): Promise<FakeJudge> {
  return new FakeJudge(options).start();
}
