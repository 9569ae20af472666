import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createVllmScorer, type VllmSettings } from '../../../../src/rerank/scorers/vllm.js';
import type { Scorer } from '../../../../src/rerank/scorers/types.js';
import { fakeLogit } from '../../../fakes/fake-http-server.js';
import { FakeVllm, startFakeVllm } from '../../../fakes/fake-vllm.js';
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

describe('vLLM scorer against a fake vLLM /classify', () => {
  let server: FakeVllm;
  let scorer: Scorer;
  const make = (settings: Partial<VllmSettings> = {}) =>
    createVllmScorer({ model: MODEL, urls: [server.url], timeoutMs: 2_000, retries: 2, backoff: { initialMs: 1, maxMs: 5 }, ...settings });

  beforeEach(async () => {
    server = await startFakeVllm({ model: MODEL });
    scorer = make();
  });
  afterEach(async () => {
    await scorer.close();
    await server.close();
  });

  it('sends texts with use_activation false in one request and applies the sigmoid itself', async () => {
    const inputs = textInputs(3);
    const outputs = await scorer.score(inputs);
    expect(server.bodies('/classify')).toEqual([{ model: MODEL, input: inputs.map((input) => input.text), use_activation: false }]);
    inputs.forEach((input, index) => {
      expect(outputs[index]!.raw).toBeCloseTo(fakeLogit(input.text), 9);
      expect(outputs[index]!.value).toBeCloseTo(sigmoid(fakeLogit(input.text)), 9);
    });
  });

  it('sends token ids when every input has them, and orders results by index', async () => {
    const inputs = idInputs(4);
    const outputs = await scorer.score(inputs);
    expect(server.bodies('/classify')[0].input).toEqual(inputs.map((input) => input.inputIds));
    expect(outputs.map((output) => output.raw)).toEqual(inputs.map((input) => fakeLogit(input.inputIds!)));
  });

  it('reads the two-way judge form ([NO, YES] logits) as log-odds of YES', async () => {
    server.twoWay = true;
    const inputs = textInputs(2, 'judge');
    const outputs = await scorer.score(inputs);
    inputs.forEach((input, index) => {
      expect(outputs[index]!.raw).toBeCloseTo(fakeLogit(input.text), 9);
      expect(outputs[index]!.value).toBeCloseTo(sigmoid(fakeLogit(input.text)), 9);
    });
  });

  it('retries a 500 and a 503, then succeeds', async () => {
    server.fail(500).fail(503);
    const outputs = await scorer.score(textInputs(1));
    expect(outputs).toHaveLength(1);
    expect(server.requests).toHaveLength(3);
  });

  it('does not retry a 400 and reports status, url and body', async () => {
    server.maxModelLen = 4;
    const error = await rejection(scorer.score(textInputs(1)));
    expect(error.code).toBe('WNW_ERR_SCORE_UPSTREAM');
    expect(error.retryable).toBe(false);
    expect(error.details).toMatchObject({ status: 400, url: `${server.url}/classify` });
    expect(String(error.details.body)).toContain('maximum context length');
    expect(server.requests).toHaveLength(1);
  });

  it('gives up after the retries with a retryable upstream error', async () => {
    server.fail(503, 5);
    const error = await rejection(scorer.score(textInputs(1)));
    expect(error).toMatchObject({ code: 'WNW_ERR_SCORE_UPSTREAM', retryable: true, details: { status: 503 } });
    expect(server.requests).toHaveLength(3);
  });

  it('times out on a server that never answers', async () => {
    await scorer.close();
    scorer = make({ timeoutMs: 200 });
    server.hang(5);
    const started = Date.now();
    const error = await rejection(scorer.score(textInputs(1)));
    expect(error.code).toBe('WNW_ERR_SCORE_TIMEOUT');
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('names the field of a response that does not match the documented shape', async () => {
    server.malformed(1, JSON.stringify({ data: [{ index: 0, label: 'LABEL_0', num_classes: 1 }], usage: { prompt_tokens: 3 } }));
    const error = await rejection(scorer.score(textInputs(1)));
    expect(error.code).toBe('WNW_ERR_SCORE_RESPONSE');
    expect(error.message).toContain('data[0].probs');
    expect(server.requests).toHaveLength(1);
  });

  it('rejects a body that is not JSON without retrying', async () => {
    server.malformed(1, '<html>502 Bad Gateway</html>');
    const error = await rejection(scorer.score(textInputs(1)));
    expect(error.code).toBe('WNW_ERR_SCORE_RESPONSE');
    expect(error.message).toContain('not JSON');
  });

  it('rejects a response with the wrong number of results', async () => {
    server.malformed(1, JSON.stringify({ data: [{ index: 0, probs: [0.5] }] }));
    const error = await rejection(scorer.score(textInputs(2)));
    expect(error.code).toBe('WNW_ERR_SCORE_RESPONSE');
    expect(error.message).toContain('expected 2 results, got 1');
  });
});
