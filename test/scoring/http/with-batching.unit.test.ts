import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { wnwError } from '../../../src/errors.js';
import { createVllmScorer } from '../../../src/scoring/http/vllm.js';
import { withBatching, type BatchingOptions } from '../../../src/scoring/with-batching.js';
import type { ScoreInput, Scorer } from '../../../src/scoring/types.js';
import { fakeLogit } from '../../fakes/fake-http-server.js';
import { type FakeVllm, startFakeVllm } from '../../fakes/fake-vllm.js';
import { idInputs, rejection, RecordingScorer, textInputs } from './helpers.js';
import { runScorerContract } from './scorer-contract.js';

const MODEL = 'winnower/verifier-qwen3-4b-cls';

runScorerContract({
  name: 'withBatching(vllm)',
  async create() {
    const server = await startFakeVllm({ model: MODEL });
    const scorer = withBatching(createVllmScorer({ model: MODEL, urls: [server.url], probe: false }), {
      maxBatchSize: 2,
      maxBatchTokens: 10_000,
      windowMs: 2,
    });
    return { scorer, dispose: () => server.close() };
  },
});

describe('withBatching over a vLLM scorer', () => {
  let server: FakeVllm;
  let scorer: Scorer;
  const wrap = (options: Partial<BatchingOptions> = {}) => {
    scorer = withBatching(createVllmScorer({ model: MODEL, urls: [server.url], retries: 0, probe: false }), {
      maxBatchSize: 4,
      maxBatchTokens: 1_000_000,
      windowMs: 20,
      ...options,
    });
    return scorer;
  };
  const oneEach = (inputs: ScoreInput[]) => Promise.all(inputs.map((input) => scorer.score([input])));

  beforeEach(async () => {
    server = await startFakeVllm({ model: MODEL });
  });
  afterEach(async () => {
    await scorer.close();
    await server.close();
  });

  for (const count of [1, 4, 10, 17]) {
    it(`coalesces ${count} concurrent calls into ⌈${count}/4⌉ requests, each caller getting its own score`, async () => {
      wrap();
      const inputs = textInputs(count);
      const results = await oneEach(inputs);
      expect(server.requests).toHaveLength(Math.ceil(count / 4));
      expect(server.bodies('/classify').every((body) => body.input.length <= 4)).toBe(true);
      results.forEach((result, index) => expect(result[0]!.raw).toBe(fakeLogit(inputs[index]!.text)));
    });
  }

  it('respects maxBatchTokens, and sends an input over it alone', async () => {
    wrap({ maxBatchSize: 100, maxBatchTokens: 250 });
    const inputs = [...idInputs(9, 100), ...idInputs(1, 400, 50)];
    const results = await oneEach(inputs);
    const sizes = server.bodies('/classify').map((body) => body.input.map((ids: number[]) => ids.length));
    expect(sizes).toEqual([[100, 100], [100, 100], [100, 100], [100, 100], [100], [400]]);
    results.forEach((result, index) => expect(result[0]!.raw).toBe(fakeLogit(inputs[index]!.inputIds!)));
  });

  it('sends a lone call once the window has passed', async () => {
    wrap({ windowMs: 40 });
    const started = Date.now();
    await scorer.score(textInputs(1));
    const elapsed = Date.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(35);
    expect(elapsed).toBeLessThan(1_000);
  });

  it('splits a large call over several batches and keeps its order', async () => {
    wrap();
    const inputs = textInputs(10);
    const outputs = await scorer.score(inputs);
    expect(server.requests).toHaveLength(3);
    expect(outputs.map((output) => output.raw)).toEqual(inputs.map((input) => fakeLogit(input.text)));
  });

  it('fails only the calls whose batch failed', async () => {
    wrap({ maxBatchSize: 2 });
    server.refuse = (prompt) => prompt === 'refused';
    const inputs: ScoreInput[] = [{ key: 'refused', text: 'refused' }, ...textInputs(3)];
    const settled = await Promise.allSettled(inputs.map((input) => scorer.score([input])));
    expect(settled.map((outcome) => outcome.status)).toEqual(['rejected', 'rejected', 'fulfilled', 'fulfilled']);
    expect((settled[0] as PromiseRejectedResult).reason).toMatchObject({ code: 'WNW_ERR_SCORE_UPSTREAM', details: { status: 400 } });
  });
});

describe('withBatching: aborts and lifecycle', () => {
  it('drops an aborted call from the queue without sending it', async () => {
    const inner = new RecordingScorer();
    const batched = withBatching(inner, { maxBatchSize: 10, maxBatchTokens: 1_000_000, windowMs: 40 });
    const controller = new AbortController();
    const [gone, kept] = textInputs(2);
    const aborted = batched.score([gone!], { signal: controller.signal });
    const served = batched.score([kept!]);
    setTimeout(() => controller.abort(), 5);
    expect((await rejection(aborted)).code).toBe('WNW_ERR_OP_ABORTED');
    await served;
    expect(inner.calls.map((call) => call.inputs.map((input) => input.key))).toEqual([[kept!.key]]);
  });

  it('cancels a batch in flight only when every call it serves has been aborted', async () => {
    const inner = new RecordingScorer();
    inner.held = true;
    const batched = withBatching(inner, { maxBatchSize: 10, maxBatchTokens: 1_000_000, windowMs: 1 });
    const first = new AbortController();
    const second = new AbortController();
    const [a, b] = textInputs(2);
    const pa = batched.score([a!], { signal: first.signal });
    const pb = batched.score([b!], { signal: second.signal });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(inner.calls).toHaveLength(1);
    first.abort();
    expect((await rejection(pa)).code).toBe('WNW_ERR_OP_ABORTED');
    expect(inner.calls[0]!.signal!.aborted).toBe(false);
    second.abort();
    expect((await rejection(pb)).code).toBe('WNW_ERR_OP_ABORTED');
    expect(inner.calls[0]!.signal!.aborted).toBe(true);
  });

  it('passes the inner error to every call of the batch', async () => {
    const inner = new RecordingScorer();
    const failure = wnwError('WNW_ERR_SCORE_TIMEOUT', 'slow');
    inner.failNext = failure;
    const batched = withBatching(inner, { maxBatchSize: 10, maxBatchTokens: 1_000_000, windowMs: 1 });
    const settled = await Promise.allSettled(textInputs(3).map((input) => batched.score([input])));
    expect(settled.map((outcome) => (outcome as PromiseRejectedResult).reason)).toEqual([failure, failure, failure]);
  });

  it('on close, sends what is queued, waits for it, then closes the inner scorer', async () => {
    const inner = new RecordingScorer();
    const batched = withBatching(inner, { maxBatchSize: 10, maxBatchTokens: 1_000_000, windowMs: 60_000 });
    const pending = batched.score(textInputs(2));
    await batched.close();
    expect(await pending).toHaveLength(2);
    expect(inner.closed).toBe(true);
    expect((await rejection(batched.score(textInputs(1)))).code).toBe('WNW_ERR_OP_ABORTED');
  });

  it('rejects nonsensical options', () => {
    expect(() => withBatching(new RecordingScorer(), { maxBatchSize: 0, maxBatchTokens: 1, windowMs: 0 })).toThrow(
      expect.objectContaining({ code: 'WNW_ERR_CFG_INVALID' }),
    );
  });
});
