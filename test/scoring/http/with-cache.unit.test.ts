import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { wnwError } from '../../../src/errors.js';
import { createVllmScorer } from '../../../src/scoring/http/vllm.js';
import { withCache } from '../../../src/scoring/with-cache.js';
import type { ScoreInput } from '../../../src/scoring/types.js';
import { fakeLogit } from '../../fakes/fake-http-server.js';
import { type FakeVllm, startFakeVllm } from '../../fakes/fake-vllm.js';
import { rejection, RecordingScorer, textInputs } from './helpers.js';
import { runScorerContract } from './scorer-contract.js';

const MODEL = 'winnower/verifier-qwen3-4b-cls';

runScorerContract({
  name: 'withCache(vllm)',
  async create() {
    const server = await startFakeVllm({ model: MODEL });
    return {
      scorer: withCache(createVllmScorer({ model: MODEL, urls: [server.url], probe: false }), { maxEntries: 100 }),
      dispose: () => server.close(),
    };
  },
});

describe('withCache over a vLLM scorer', () => {
  let server: FakeVllm;
  let scorer: ReturnType<typeof withCache>;

  beforeEach(async () => {
    server = await startFakeVllm({ model: MODEL });
    server.delayMs = 20;
    scorer = withCache(createVllmScorer({ model: MODEL, urls: [server.url], retries: 0, probe: false }), { maxEntries: 100 });
  });
  afterEach(async () => {
    await scorer.close();
    await server.close();
  });

  it('scores concurrent identical keys once', async () => {
    const [a, b] = textInputs(2);
    const results = await Promise.all([scorer.score([a!, b!]), scorer.score([b!, a!]), scorer.score([a!])]);
    expect(server.bodies('/classify').map((body) => body.input)).toEqual([[a!.text, b!.text]]);
    expect(results[1]!.map((output) => output.raw)).toEqual([fakeLogit(b!.text), fakeLogit(a!.text)]);
    expect(results[2]![0]).toEqual(results[0]![0]);
    expect(scorer.stats).toMatchObject({ misses: 2, shared: 3, hits: 0, entries: 2 });
  });

  it('sends a key repeated within one call once', async () => {
    const [a] = textInputs(1);
    const outputs = await scorer.score([a!, a!, a!]);
    expect(server.bodies('/classify').map((body) => body.input)).toEqual([[a!.text]]);
    expect(outputs).toHaveLength(3);
    expect(new Set(outputs.map((output) => output.raw)).size).toBe(1);
  });

  it('answers a later call from the cache, sending only what is new', async () => {
    const inputs = textInputs(3);
    await scorer.score(inputs.slice(0, 2));
    const outputs = await scorer.score(inputs);
    expect(server.bodies('/classify').map((body) => body.input)).toEqual([[inputs[0]!.text, inputs[1]!.text], [inputs[2]!.text]]);
    expect(outputs.map((output) => output.raw)).toEqual(inputs.map((input) => fakeLogit(input.text)));
    expect(scorer.stats.hits).toBe(2);
  });

  it('does not cache failures', async () => {
    server.fail(500);
    const [a] = textInputs(1);
    expect((await rejection(scorer.score([a!]))).code).toBe('WNW_ERR_SCORE_UPSTREAM');
    expect((await scorer.score([a!]))[0]!.raw).toBe(fakeLogit(a!.text));
    expect(server.requests).toHaveLength(2);
  });
});

describe('withCache: LRU and aborts', () => {
  const input = (key: string): ScoreInput => ({ key, text: `text of ${key}` });

  it('evicts the least recently used entry', async () => {
    const inner = new RecordingScorer();
    const cached = withCache(inner, { maxEntries: 2 });
    await cached.score([input('a'), input('b')]);
    await cached.score([input('a')]);
    await cached.score([input('c')]);
    await cached.score([input('a'), input('b')]);
    expect(inner.calls.map((call) => call.inputs.map((one) => one.key))).toEqual([['a', 'b'], ['c'], ['b']]);
    expect(cached.stats.entries).toBe(2);
  });

  it('marks what it answers from the cache, and only that', async () => {
    const cached = withCache(new RecordingScorer(), { maxEntries: 10 });
    const first = await cached.score([input('a'), input('a')]);
    expect(first.map((output) => output.cached)).toEqual([undefined, undefined]);
    const second = await cached.score([input('a'), input('b')]);
    expect(second.map((output) => output.cached)).toEqual([true, undefined]);
    expect(second[0]).toEqual({ ...first[0], cached: true });
    // The entry itself is not marked: a later miss-then-hit sequence starts clean.
    expect((await cached.score([input('b')]))[0]!.cached).toBe(true);
    expect(first[0]!.cached).toBeUndefined();
  });

  it('keeps nothing with maxEntries 0 but still shares what is in flight', async () => {
    const inner = new RecordingScorer();
    const cached = withCache(inner, { maxEntries: 0 });
    await Promise.all([cached.score([input('a')]), cached.score([input('a')])]);
    await cached.score([input('a')]);
    expect(inner.calls).toHaveLength(2);
    expect(cached.stats.entries).toBe(0);
  });

  it('lets one waiter leave without cancelling the request another still waits on', async () => {
    const inner = new RecordingScorer();
    inner.held = true;
    const cached = withCache(inner, { maxEntries: 10 });
    const leaving = new AbortController();
    const first = cached.score([input('a')], { signal: leaving.signal });
    const second = cached.score([input('a')]);
    leaving.abort();
    expect((await rejection(first)).code).toBe('WNW_ERR_OP_ABORTED');
    expect(inner.calls[0]!.signal!.aborted).toBe(false);
    inner.release();
    expect((await second)[0]!.raw).toBe(fakeLogit('text of a'));
    expect(inner.calls).toHaveLength(1);
  });

  it('cancels the request when its last waiter leaves, and scores afresh afterwards', async () => {
    const inner = new RecordingScorer();
    inner.held = true;
    const cached = withCache(inner, { maxEntries: 10 });
    const controller = new AbortController();
    const only = cached.score([input('a')], { signal: controller.signal });
    controller.abort();
    expect((await rejection(only)).code).toBe('WNW_ERR_OP_ABORTED');
    expect(inner.calls[0]!.signal!.aborted).toBe(true);
    inner.release();
    await cached.score([input('a')]);
    expect(inner.calls).toHaveLength(2);
  });

  it('passes an inner failure to every waiter', async () => {
    const inner = new RecordingScorer();
    const failure = wnwError('WNW_ERR_SCORE_UPSTREAM', 'down');
    inner.failNext = failure;
    const cached = withCache(inner, { maxEntries: 10 });
    const settled = await Promise.allSettled([cached.score([input('a')]), cached.score([input('a'), input('b')])]);
    expect(settled.map((outcome) => outcome.status)).toEqual(['rejected', 'rejected']);
    expect((settled[0] as PromiseRejectedResult).reason).toBe(failure);
  });
});
