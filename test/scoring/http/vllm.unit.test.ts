import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { OPENHANDS_CRITIC_LABELS, resolveHead } from '../../../src/scoring/http/head.js';
import { createVllmScorer, SCORE_CLAMP, SERVER_LIMIT_MARGIN, type VllmSettings } from '../../../src/scoring/http/vllm.js';
import type { ScoreInput, Scorer } from '../../../src/scoring/types.js';
import { fakeLogit } from '../../fakes/fake-http-server.js';
import { type FakeVllm, startFakeVllm, type FakeVllmOptions } from '../../fakes/fake-vllm.js';
import { idInputs, rejection, sigmoid, textInputs } from './helpers.js';
import { runScorerContract } from './scorer-contract.js';

const MODEL = 'winnower/verifier-qwen3-4b-cls';

runScorerContract({
  name: 'vllm',
  async create() {
    const server = await startFakeVllm({ model: MODEL });
    return { scorer: createVllmScorer({ model: MODEL, urls: [server.url] }), dispose: () => server.close() };
  },
});

runScorerContract({
  name: 'vllm, 27-label critic head',
  async create() {
    const server = await startFakeVllm({ model: 'critic', numLabels: 27, problemType: 'multi_label_classification' });
    const head = resolveHead({ labels: 'openhands-critic' });
    return { scorer: createVllmScorer({ model: 'critic', urls: [server.url], head }), dispose: () => server.close() };
  },
});

/** An instance's candidates as text (and ids, as the client tokenizer gives them): a shared system prompt and issue, then each trajectory. */
function sharedPrefixTexts(count: number, instance = 'django__django-15202', offset = 0): ScoreInput[] {
  const prefix = `<|im_start|>system\nYou judge patches for ${instance}.<|im_end|>\n<|im_start|>user\n${'The issue text, long enough to share. '.repeat(6)}<|im_end|>\n`;
  return Array.from({ length: count }, (_, index) => {
    const text = `${prefix}<|im_start|>assistant\ncandidate ${offset + index} edits file_${offset + index}.py<|im_end|>\n`;
    return { key: `${instance}-${offset + index}`, text, inputIds: Array.from(text, (char) => char.charCodeAt(0)) };
  });
}

describe('vLLM scorer against a fake of current vLLM', () => {
  let server: FakeVllm;
  let scorer: Scorer | undefined;
  const start = async (options: FakeVllmOptions = {}) => {
    await server?.close();
    server = await startFakeVllm({ model: MODEL, ...options });
  };
  /** Probing is tested on its own below; elsewhere it would only add requests to count. */
  const make = (settings: Partial<VllmSettings> = {}) => {
    scorer = createVllmScorer({
      model: MODEL,
      urls: [server.url],
      timeoutMs: 2_000,
      retries: 2,
      backoff: { initialMs: 1, maxMs: 5 },
      probe: false,
      ...settings,
    });
    return scorer;
  };

  beforeEach(async () => {
    server = await startFakeVllm({ model: MODEL });
  });
  afterEach(async () => {
    await scorer?.close();
    scorer = undefined;
    await server.close();
  });

  it('sends texts with use_activation false in one request and applies the sigmoid itself', async () => {
    const inputs = textInputs(3);
    const outputs = await make().score(inputs);
    expect(server.bodies('/classify')).toEqual([{ model: MODEL, input: inputs.map((input) => input.text), use_activation: false }]);
    inputs.forEach((input, index) => {
      expect(outputs[index]!.raw).toBeCloseTo(fakeLogit(input.text), 9);
      expect(outputs[index]!.value).toBeCloseTo(sigmoid(fakeLogit(input.text)), 9);
    });
  });

  it('sends token ids when every input has them, and orders results by index', async () => {
    const inputs = idInputs(4);
    const outputs = await make().score(inputs);
    expect(server.bodies('/classify')[0].input).toEqual(inputs.map((input) => input.inputIds));
    expect(outputs.map((output) => output.raw)).toEqual(inputs.map((input) => fakeLogit(input.inputIds!)));
  });

  it('reads the two-way judge form ([NO, YES] logits) as log-odds of YES', async () => {
    server.twoWay = true;
    server.numLabels = 2;
    const inputs = textInputs(2, 'judge');
    const outputs = await make().score(inputs);
    inputs.forEach((input, index) => {
      expect(outputs[index]!.raw).toBeCloseTo(fakeLogit(input.text), 9);
      expect(outputs[index]!.value).toBeCloseTo(sigmoid(fakeLogit(input.text)), 9);
    });
  });

  describe('probing the server before the first request', () => {
    it('asks /v1/models, then sends a tiny /classify, once', async () => {
      const vllm = make({ probe: true });
      await vllm.score(textInputs(2));
      await vllm.score(textInputs(1, 'again'));
      expect(server.requests.map((request) => `${request.method} ${request.path}`)).toEqual([
        'GET /v1/models',
        'POST /classify',
        'POST /classify',
        'POST /classify',
      ]);
      expect(server.bodies('/classify')[0]).toEqual({ model: MODEL, input: ['probe'], use_activation: false });
    });

    it('a caller cancelled during the probe does not fail the others waiting on it, nor the next call', async () => {
      server.delayMs = 300;
      const vllm = make({ probe: true });
      const cancelled = new AbortController();
      const first = vllm.score(textInputs(1, 'first'), { signal: cancelled.signal });
      const second = vllm.score(textInputs(2, 'second'));
      setTimeout(() => cancelled.abort(new Error('client went away')), 50);
      expect(await rejection(first)).toMatchObject({ code: 'WNW_ERR_OP_ABORTED' });
      expect((await second).every((output) => Number.isFinite(output.value))).toBe(true);
      // The probe ran once, to its end, for the caller still waiting.
      expect(server.requests.filter((request) => request.path === '/v1/models')).toHaveLength(1);
      server.delayMs = 0;
      expect((await vllm.score(textInputs(1, 'third'))).every((output) => Number.isFinite(output.value))).toBe(true);
    });

    it('names the served models when the configured one is not among them', async () => {
      const error = await rejection(make({ probe: true, model: 'critic' }).score(textInputs(1)));
      expect(error).toMatchObject({ code: 'WNW_ERR_CFG_INVALID', details: { field: 'scorer.model', served: [MODEL] } });
      expect(error.message).toContain('--served-model-name');
    });

    it("refuses a budget larger than the server's max_model_len before sending any candidate", async () => {
      await start({ maxModelLen: 8_192 });
      const error = await rejection(make({ probe: true, maxInputTokens: 32_768 }).score(textInputs(1)));
      expect(error).toMatchObject({ code: 'WNW_ERR_CFG_INVALID', details: { field: 'scorer.maxInputTokens', maxModelLen: 8_192 } });
      expect(server.bodies('/classify')).toEqual([]);
    });

    it('drops use_activation on a server that refuses it, and reads its activated values as probabilities', async () => {
      await start({ legacy: true });
      const vllm = createVllmScorer({ model: MODEL, urls: [server.url], retries: 0 });
      scorer = vllm;
      const inputs = textInputs(2);
      const outputs = await vllm.score(inputs);
      expect(vllm.features.useActivation).toBe(false);
      const bodies = server.bodies('/classify');
      expect(bodies[0].use_activation).toBe(false);
      expect(bodies.slice(1).every((body) => !('use_activation' in body))).toBe(true);
      inputs.forEach((input, index) => {
        expect(outputs[index]!.value).toBeCloseTo(sigmoid(fakeLogit(input.text)), 9);
        expect(outputs[index]!.raw).toBeCloseTo(fakeLogit(input.text), 4);
      });
    });
  });

  describe('multi-label heads (the OpenHands critic: 27 labels, success at index 0)', () => {
    const critic = resolveHead({ labels: 'openhands-critic' });

    it('takes the raw logits and applies the sigmoid to the success label only', async () => {
      server.numLabels = 27;
      server.problemType = 'multi_label_classification';
      const inputs = idInputs(3);
      const outputs = await make({ head: critic }).score(inputs);
      expect(server.bodies('/classify')[0].use_activation).toBe(false);
      inputs.forEach((input, index) => {
        const logits = server.logits(input.inputIds!);
        expect(logits).toHaveLength(OPENHANDS_CRITIC_LABELS.length);
        expect(outputs[index]!.raw).toBe(logits[0]);
        expect(outputs[index]!.value).toBeCloseTo(sigmoid(logits[0]!), 12);
      });
    });

    it('applies a softmax over the labels for a single-label head, at the configured index', async () => {
      server.numLabels = 4;
      const head = resolveHead({ labels: ['bad', 'good', 'great', 'other'], labelIndex: 2, problemType: 'single_label_classification' });
      const [input] = idInputs(1);
      const [output] = await make({ head }).score([input!]);
      const logits = server.logits(input!.inputIds!);
      const total = logits.reduce((sum, value) => sum + Math.exp(value), 0);
      expect(output!.raw).toBe(logits[2]);
      expect(output!.value).toBeCloseTo(Math.exp(logits[2]!) / total, 12);
    });

    it('refuses a response whose label count is not the table', async () => {
      server.numLabels = 26;
      const error = await rejection(make({ head: critic }).score(idInputs(1)));
      expect(error.code).toBe('WNW_ERR_SCORE_RESPONSE');
      expect(error.message).toContain('26 values for a head of 27 labels');
    });

    it('refuses a many-valued result without a label table rather than guessing', async () => {
      server.numLabels = 27;
      const error = await rejection(make().score(idInputs(1)));
      expect(error.code).toBe('WNW_ERR_SCORE_RESPONSE');
      expect(error.message).toContain('scorer.labels');
    });
  });

  describe('a candidate longer than the context', () => {
    it('leaves only that candidate unscored, with the reason, and scores the rest', async () => {
      server.maxModelLen = 20;
      const inputs = [...idInputs(1, 8), ...idInputs(1, 30, 1), ...idInputs(1, 8, 2)];
      const outputs = await make().score(inputs);
      expect(outputs[0]!.raw).toBe(fakeLogit(inputs[0]!.inputIds!));
      expect(outputs[2]!.raw).toBe(fakeLogit(inputs[2]!.inputIds!));
      expect(outputs[1]!.error).toMatchObject({ code: 'WNW_ERR_SCORE_TOO_LONG', details: { status: 400, tokens: 30 } });
      expect(outputs[1]!.error!.message).toContain('maximum context length is 20 tokens');
      expect(server.bodies('/classify').map((body) => body.input.length)).toEqual([3, 1, 1, 1]);
    });

    it('lets the server cut it when serverTruncation is set, keeping the end, a margin below the budget when the server limit is unknown', async () => {
      server.maxModelLen = 20;
      const [input] = idInputs(1, 30);
      const [output] = await make({ serverTruncation: 'left', maxInputTokens: 20 }).score([input!]);
      expect(server.bodies('/classify')[0]).toMatchObject({ truncate_prompt_tokens: 20 - SERVER_LIMIT_MARGIN, truncation_side: 'left' });
      expect(output!.raw).toBe(fakeLogit(input!.inputIds!.slice(-(20 - SERVER_LIMIT_MARGIN))));
    });

    it('never asks for a truncation equal to max_model_len, which a real vLLM never answers (issue 24 item 2)', async () => {
      server.maxModelLen = 8000;
      // The fake hangs as the real server did: 8000 of 8000 gets no answer, 7999 does.
      const hung = await fetch(`${server.url}/classify`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: MODEL, input: [[1, 2, 3]], truncate_prompt_tokens: 8000 }),
        signal: AbortSignal.timeout(300),
      }).catch((error: unknown) => error);
      expect(hung).toBeInstanceOf(Error);
      const answered = await fetch(`${server.url}/classify`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: MODEL, input: [[1, 2, 3]], truncate_prompt_tokens: 7999 }),
      });
      expect(answered.status).toBe(200);

      // The shipped critic config set maxInputTokens to the server's limit.
      const [input] = idInputs(1, 9000);
      const [output] = await make({ serverTruncation: 'left', maxInputTokens: 8000, probe: true, timeoutMs: 3_000, retries: 0 }).score([
        input!,
      ]);
      const sent = server.bodies('/classify').at(-1)!;
      expect(sent.truncate_prompt_tokens).toBe(8000 - SERVER_LIMIT_MARGIN);
      expect(output!.raw).toBe(fakeLogit(input!.inputIds!.slice(-(8000 - SERVER_LIMIT_MARGIN))));
    });
  });

  describe('/score with queries and documents', () => {
    it("sends an instance's shared prefix once as the query, as text even when the inputs carry ids, and scores each candidate as query + document", async () => {
      const inputs = sharedPrefixTexts(4);
      const outputs = await make({ endpoint: 'score' }).score(inputs);
      const bodies = server.bodies('/score');
      expect(bodies).toHaveLength(1);
      const [body] = bodies;
      // Split just after the last newline the candidates share.
      const shared = inputs[0]!.text.indexOf('candidate 0');
      expect(body.queries).toBe(inputs[0]!.text.slice(0, shared));
      expect(body.documents).toEqual(inputs.map((input) => input.text.slice(shared)));
      expect(body).not.toHaveProperty('text_1');
      inputs.forEach((input, index) => expect(outputs[index]!.value).toBeCloseTo(sigmoid(fakeLogit(input.text)), 9));
    });

    it('is refused by the fake, as by vLLM, when queries or documents are token ids (issue 24 item 3)', async () => {
      const response = await fetch(`${server.url}/score`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: MODEL, queries: [1, 2, 3], documents: [[4], [5]] }),
      });
      expect(response.status).toBe(400);
      expect(await response.text()).toContain('Input should be a valid string');
    });

    it("fails only the candidates of a request the server refuses, with the server's message, and scores the other requests", async () => {
      const first = sharedPrefixTexts(2, 'django__django-15202');
      const second = sharedPrefixTexts(2, 'sympy__sympy-20590', 2);
      server.refuse = (prompt) => typeof prompt === 'string' && prompt.includes('sympy__sympy-20590');
      const outputs = await make({ endpoint: 'score' }).score([...first, ...second]);
      expect(server.bodies('/score')).toHaveLength(2);
      first.forEach((input, index) => expect(outputs[index]!.value).toBeCloseTo(sigmoid(fakeLogit(input.text)), 9));
      for (const output of outputs.slice(2)) {
        expect(output.error).toMatchObject({ code: 'WNW_ERR_SCORE_UPSTREAM', details: { status: 400 } });
        expect(output.error!.message).toContain('refused the /score request for this candidate (400): input refused by the test');
      }
    });

    it("asks /classify for the raw logit of candidates at /score's clamp, so strong candidates do not tie (issue 24 item 6)", async () => {
      server.logitScale = 10; // logits up to ±40: beyond the clamp at ±13.8155
      const inputs = sharedPrefixTexts(12);
      const strong = inputs.filter((input) => server.logits(input.text)[0]! > 14).slice(0, 2);
      expect(strong).toHaveLength(2);
      // What the fake's /score alone gives: both at the clamp.
      const direct = await fetch(`${server.url}/score`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: MODEL, queries: '', documents: strong.map((input) => input.text) }),
      });
      const scores = ((await direct.json()) as { data: Array<{ score: number }> }).data.map((item) => item.score);
      expect(scores).toEqual([1 - SCORE_CLAMP, 1 - SCORE_CLAMP]);

      const outputs = await make({ endpoint: 'score' }).score(strong);
      expect(outputs.map((output) => output.raw)).toEqual(strong.map((input) => server.logits(input.inputIds!)[0]));
      expect(outputs[0]!.raw).not.toBe(outputs[1]!.raw);
      expect(server.bodies('/classify')).toHaveLength(1);
    });

    it('is refused by the server for a head of several labels', async () => {
      server.numLabels = 27;
      const error = await rejection(make({ endpoint: 'score' }).score(sharedPrefixTexts(2)));
      expect(error.details).toMatchObject({ status: 400 });
      expect(error.message).toContain('num_labels == 1');
    });
  });

  describe('the fake follows the current protocol', () => {
    const post = async (path: string, body: unknown) => {
      const response = await fetch(`${server.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      return { status: response.status, text: await response.text() };
    };

    it('refuses the removed fields normalize, softmax and activation, and the old /score names', async () => {
      const normalize = await post('/classify', { model: MODEL, input: 'x', normalize: false });
      expect(normalize.status).toBe(400);
      expect(normalize.text).toContain('use `use_activation` instead');
      for (const field of ['softmax', 'activation']) {
        const refused = await post('/classify', { model: MODEL, input: 'x', [field]: false });
        expect(refused.status).toBe(400);
        expect(refused.text).toContain('Extra inputs are not permitted');
      }
      const old = await post('/score', { model: MODEL, text_1: 'q', text_2: ['d'] });
      expect(old.status).toBe(400);
      expect(old.text).toContain('text_1');
    });
  });

  it('retries a 500 and a 503, then succeeds', async () => {
    server.fail(500).fail(503);
    const outputs = await make().score(textInputs(1));
    expect(outputs).toHaveLength(1);
    expect(server.requests).toHaveLength(3);
  });

  it('does not retry a 400 and reports status, url and body', async () => {
    server.fail(400, 1, { body: JSON.stringify({ error: { message: 'bad request', type: 'BadRequestError', param: null, code: 400 } }) });
    const error = await rejection(make().score(textInputs(1)));
    expect(error.code).toBe('WNW_ERR_SCORE_UPSTREAM');
    expect(error.retryable).toBe(false);
    expect(error.details).toMatchObject({ status: 400, url: `${server.url}/classify` });
    expect(String(error.details.body)).toContain('bad request');
    expect(server.requests).toHaveLength(1);
  });

  it('gives up after the retries with a retryable upstream error', async () => {
    server.fail(503, 5);
    const error = await rejection(make().score(textInputs(1)));
    expect(error).toMatchObject({ code: 'WNW_ERR_SCORE_UPSTREAM', retryable: true, details: { status: 503 } });
    expect(server.requests).toHaveLength(3);
  });

  it('times out on a server that never answers', async () => {
    server.hang(5);
    const error = await rejection(make({ timeoutMs: 200 }).score(textInputs(1)));
    expect(error.code).toBe('WNW_ERR_SCORE_TIMEOUT');
  });

  it('names the field of a response that does not match the documented shape', async () => {
    server.malformed(1, JSON.stringify({ data: [{ index: 0, label: 'LABEL_0', num_classes: 1 }], usage: { prompt_tokens: 3 } }));
    const error = await rejection(make().score(textInputs(1)));
    expect(error.code).toBe('WNW_ERR_SCORE_RESPONSE');
    expect(error.message).toContain('data[0].probs');
    expect(server.requests).toHaveLength(1);
  });

  it('rejects a result whose num_classes disagrees with its probs', async () => {
    server.malformed(1, JSON.stringify({ data: [{ index: 0, probs: [0.5], num_classes: 27 }] }));
    const error = await rejection(make().score(textInputs(1)));
    expect(error.code).toBe('WNW_ERR_SCORE_RESPONSE');
    expect(error.message).toContain('num_classes 27');
  });

  it('rejects a body that is not JSON without retrying', async () => {
    server.malformed(1, '<html>502 Bad Gateway</html>');
    const error = await rejection(make().score(textInputs(1)));
    expect(error.code).toBe('WNW_ERR_SCORE_RESPONSE');
    expect(error.message).toContain('not JSON');
  });

  it('rejects a response with the wrong number of results', async () => {
    server.malformed(1, JSON.stringify({ data: [{ index: 0, probs: [0.5] }] }));
    const error = await rejection(make().score(textInputs(2)));
    expect(error.code).toBe('WNW_ERR_SCORE_RESPONSE');
    expect(error.message).toContain('expected 2 results, got 1');
  });

  // Each result says which input it scores by `index` (results may come in any order): an answer
  // whose indexes are not exactly 0..n-1 would put some input's score on another, so it is refused
  // as a short one is, and no score of it is used.
  const classifyAnswer = (indexes: number[]) =>
    JSON.stringify({
      id: 'classify-1',
      object: 'list',
      model: MODEL,
      data: indexes.map((index, position) => ({ index, label: 'LABEL_0', probs: [position + 0.25], num_classes: 1 })),
      usage: { prompt_tokens: 6, total_tokens: 6 },
    });

  it.each([
    ['a duplicate index', [0, 0], 'index 0 twice'],
    ['an index past the inputs', [0, 2], 'index 2'],
    ['a duplicate among three', [2, 1, 2], 'index 2 twice'],
  ])('refuses a /classify answer with %s', async (_, indexes, named) => {
    server.malformed(1, classifyAnswer(indexes));
    const error = await rejection(make().score(textInputs(indexes.length)));
    expect(error.code).toBe('WNW_ERR_SCORE_RESPONSE');
    expect(error.message).toContain('/classify');
    expect(error.message).toContain(named);
    expect(server.requests).toHaveLength(1);
  });

  it('still reads a /classify answer whose results come in any order', async () => {
    server.malformed(1, classifyAnswer([1, 0]));
    const outputs = await make().score(textInputs(2));
    expect(outputs.map((output) => output.raw)).toEqual([1.25, 0.25]);
  });

  it('refuses a /score answer with a duplicate or out-of-range index', async () => {
    const scoreAnswer = (indexes: number[]) =>
      JSON.stringify({
        id: 'score-1',
        object: 'list',
        model: MODEL,
        data: indexes.map((index) => ({ index, object: 'score', score: 0.5 })),
        usage: { prompt_tokens: 6, total_tokens: 6 },
      });
    for (const [indexes, named] of [
      [[1, 1], 'index 1 twice'],
      [[0, 3], 'index 3'],
    ] as const) {
      server.malformed(1, scoreAnswer([...indexes]));
      const error = await rejection(make({ endpoint: 'score' }).score(sharedPrefixTexts(2)));
      expect(error.code).toBe('WNW_ERR_SCORE_RESPONSE');
      expect(error.message).toContain('/score');
      expect(error.message).toContain(named);
    }
  });
});
