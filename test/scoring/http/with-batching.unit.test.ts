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
    it(`coalesces ${count} concurrent calls into 1 + ⌈${count - 1}/4⌉ requests (the first finds the backend idle), each caller getting its own score`, async () => {
      wrap();
      const inputs = textInputs(count);
      const results = await oneEach(inputs);
      expect(server.requests).toHaveLength(1 + Math.ceil((count - 1) / 4));
      expect(server.bodies('/classify').every((body) => body.input.length <= 4)).toBe(true);
      results.forEach((result, index) => expect(result[0]!.raw).toBe(fakeLogit(inputs[index]!.text)));
    });
  }

  it('respects maxBatchTokens, and sends an input over it alone', async () => {
    wrap({ maxBatchSize: 100, maxBatchTokens: 250 });
    const inputs = [...idInputs(9, 100), ...idInputs(1, 400, 50)];
    const results = await oneEach(inputs);
    const sizes = server.bodies('/classify').map((body) => body.input.map((ids: number[]) => ids.length));
    // The first input finds the backend idle and goes alone; the others leave as their tokens fill a batch.
    expect(sizes).toEqual([[100], [100, 100], [100, 100], [100, 100], [100, 100], [400]]);
    results.forEach((result, index) => expect(result[0]!.raw).toBe(fakeLogit(inputs[index]!.inputIds!)));
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
    // The first call goes alone to the idle backend; the refused one shares the next batch with one other.
    const [first, ...rest] = textInputs(3);
    const inputs: ScoreInput[] = [first!, { key: 'refused', text: 'refused' }, ...rest];
    const settled = await Promise.allSettled(inputs.map((input) => scorer.score([input])));
    expect(settled.map((outcome) => outcome.status)).toEqual(['fulfilled', 'rejected', 'rejected', 'fulfilled']);
    expect((settled[1] as PromiseRejectedResult).reason).toMatchObject({ code: 'WNW_ERR_SCORE_UPSTREAM', details: { status: 400 } });
  });
});

describe('withBatching: aborts and lifecycle', () => {
  it('drops an aborted call from the queue without sending it', async () => {
    const inner = new RecordingScorer();
    inner.held = true;
    const batched = withBatching(inner, { maxBatchSize: 10, maxBatchTokens: 1_000_000, windowMs: 40 });
    // A batch in flight keeps the backend busy, so the next calls queue.
    const busy = batched.score(textInputs(1, 'busy'));
    const controller = new AbortController();
    const [gone, kept] = textInputs(2);
    const aborted = batched.score([gone!], { signal: controller.signal });
    const served = batched.score([kept!]);
    setTimeout(() => controller.abort(), 5);
    expect((await rejection(aborted)).code).toBe('WNW_ERR_OP_ABORTED');
    inner.release();
    await Promise.all([busy, served]);
    expect(inner.calls.map((call) => call.inputs.map((input) => input.key))).toEqual([['busy-0'], [kept!.key]]);
  });

  it('cancels a batch in flight only when every call it serves has been aborted', async () => {
    const inner = new RecordingScorer();
    inner.held = true;
    const batched = withBatching(inner, { maxBatchSize: 10, maxBatchTokens: 1_000_000, windowMs: 1 });
    // A batch in flight keeps the backend busy, so a and b queue and leave together.
    const busy = new AbortController();
    const pBusy = batched.score(textInputs(1, 'busy'), { signal: busy.signal });
    const first = new AbortController();
    const second = new AbortController();
    const [a, b] = textInputs(2);
    const pa = batched.score([a!], { signal: first.signal });
    const pb = batched.score([b!], { signal: second.signal });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(inner.calls).toHaveLength(2);
    first.abort();
    expect((await rejection(pa)).code).toBe('WNW_ERR_OP_ABORTED');
    expect(inner.calls[1]!.signal!.aborted).toBe(false);
    second.abort();
    expect((await rejection(pb)).code).toBe('WNW_ERR_OP_ABORTED');
    expect(inner.calls[1]!.signal!.aborted).toBe(true);
    busy.abort();
    expect((await rejection(pBusy)).code).toBe('WNW_ERR_OP_ABORTED');
  });

  it('sends a call that finds nothing queued and room at the backend alone, with its own signal, and lets it leave at once when aborted', async () => {
    // An inner scorer that does not stop on abort: the caller must not wait for it.
    let release!: () => void;
    const calls: Array<{ inputs: ScoreInput[]; signal: AbortSignal | undefined }> = [];
    const stubborn: Scorer = {
      backend: 'stubborn',
      model: 'm',
      maxInputTokens: 1_000_000,
      async score(inputs, options = {}) {
        calls.push({ inputs, signal: options.signal });
        await new Promise<void>((resolve) => (release = resolve));
        return inputs.map(() => ({ value: 0.5, raw: 0 }));
      },
      async close() {},
    };
    const batched = withBatching(stubborn, { maxBatchSize: 10, maxBatchTokens: 1_000_000, windowMs: 60_000, maxInFlight: 1 });
    const controller = new AbortController();
    const alone = batched.score(textInputs(2, 'alone'), { signal: controller.signal });
    expect(calls).toHaveLength(1);
    expect(calls[0]!.signal).toBe(controller.signal);
    // The backend is busy now: the next call queues behind the window, not sent.
    const queued = batched.score(textInputs(1, 'queued'));
    expect(calls).toHaveLength(1);
    controller.abort();
    expect((await rejection(alone)).code).toBe('WNW_ERR_OP_ABORTED');
    // Its request runs on until the inner scorer returns; then the queued call leaves without waiting out the window.
    release();
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(calls.map((call) => call.inputs.map((input) => input.key))).toEqual([['alone-0', 'alone-1'], ['queued-0']]);
    release();
    expect(await queued).toHaveLength(1);
    await batched.close();
  });

  it('passes the inner error to every call of the batch', async () => {
    const inner = new RecordingScorer();
    inner.held = true;
    const batched = withBatching(inner, { maxBatchSize: 10, maxBatchTokens: 1_000_000, windowMs: 1 });
    // A batch in flight keeps the backend busy, so the three calls queue and leave as one batch.
    const busy = batched.score(textInputs(1, 'busy'));
    const failure = wnwError('WNW_ERR_SCORE_TIMEOUT', 'slow');
    inner.failNext = failure;
    const settled = await Promise.allSettled(textInputs(3).map((input) => batched.score([input])));
    expect(settled.map((outcome) => (outcome as PromiseRejectedResult).reason)).toEqual([failure, failure, failure]);
    inner.release();
    await busy;
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
