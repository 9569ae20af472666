/** `scoreCandidates`: what each Score says about how it was obtained. */
import { describe, expect, it } from 'vitest';
import { ESTIMATE_MARGIN, scoreCandidates } from '../../src/scoring/score-candidates.js';
import { createVllmScorer } from '../../src/scoring/http/vllm.js';
import { withCache } from '../../src/scoring/with-cache.js';
import { Task, Trajectory } from '../../src/types/index.js';
import { startFakeVllm } from '../fakes/fake-vllm.js';
import { RecordingScorer } from './http/helpers.js';

const task = Task.parse({ instance_id: 'o__r-1', problem_statement: 'It breaks.' });
const trajectory = (source: string) =>
  Trajectory.parse({ id: `${source}/o__r-1`, instance_id: 'o__r-1', source, patch: '--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n' });

describe('scoreCandidates', () => {
  it('marks a Score served from the content-hash cache as cached', async () => {
    const inner = new RecordingScorer();
    const scorer = withCache(inner, { maxEntries: 10 });
    const first = await scoreCandidates({ scorer }, task, [trajectory('a')]);
    expect(first[0]!.score).toMatchObject({ trajectory_id: 'a/o__r-1', cached: false });
    // Another candidate with the same patch serializes to the same input: answered from the cache.
    const second = await scoreCandidates({ scorer }, task, [trajectory('b')]);
    expect(second[0]!.score).toMatchObject({ trajectory_id: 'b/o__r-1', cached: true, value: first[0]!.score!.value });
    expect(inner.calls).toHaveLength(1);
  });
});

describe('scoreCandidates against a vLLM server with a shorter context than the budget', () => {
  const long = (length: number) =>
    Trajectory.parse({ ...trajectory('long'), patch: `--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+${'b'.repeat(length)}\n` });

  it('cuts a candidate the server refuses as too long again, to the count the server reported, and scores it', async () => {
    const server = await startFakeVllm({ model: 'cls', maxModelLen: 200 });
    const scorer = withCache(createVllmScorer({ model: 'cls', urls: [server.url], probe: false, retries: 0 }), { maxEntries: 10 });
    try {
      const results = await scoreCandidates({ scorer }, task, [trajectory('a'), long(2_000), trajectory('c')]);
      expect(results.map((result) => result.error?.code)).toEqual([undefined, undefined, undefined]);
      expect(results[1]!.score).toMatchObject({ truncated: true });
      // [a, long] refused; each alone (long refused); long cut to fit.
      expect(server.bodies('/classify').map((body) => body.input.length)).toEqual([2, 1, 1, 1]);
      expect(server.tokensOf(server.bodies('/classify').at(-1)!.input[0])).toBeLessThanOrEqual(200);
    } finally {
      await scorer.close();
      await server.close();
    }
  });

  it('leaves a candidate unscored, with the reason, when even the tighter cut cannot fit, and does not cache the refusal', async () => {
    const server = await startFakeVllm({ model: 'cls', maxModelLen: 165 });
    const scorer = withCache(createVllmScorer({ model: 'cls', urls: [server.url], probe: false, retries: 0 }), { maxEntries: 10 });
    try {
      const results = await scoreCandidates({ scorer }, task, [trajectory('a'), long(2_000), trajectory('c')]);
      expect(results.map((result) => Boolean(result.score))).toEqual([true, false, true]);
      expect(results[1]!.error).toMatchObject({ code: 'WNW_ERR_SCORE_TOO_LONG' });
      expect(results[1]!.error!.message).toContain('maximum context length is 165 tokens');
      const again = await scoreCandidates({ scorer }, task, [long(2_000)]);
      expect(again[0]!.error?.code).toBe('WNW_ERR_SCORE_TOO_LONG');
      // a and c serialize alike (one input): the batch [a, long], refused; each alone; then long again, not from the cache.
      expect(server.bodies('/classify').map((body) => body.input.length)).toEqual([2, 1, 1, 1]);
    } finally {
      await scorer.close();
      await server.close();
    }
  });
});

describe('scoreCandidates without the model tokenizer (issue 24 item 5)', () => {
  const long = Trajectory.parse({ ...trajectory('long'), patch: `--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+${'word '.repeat(4_000)}\n` });

  it('fits candidates a margin under the budget, so a server counting 6% more than the estimate still takes them', async () => {
    // The estimate reads 3.5 characters a token; this server counts 3.3 (the real gap was −3.5% to +6.5%).
    const server = await startFakeVllm({ model: 'cls', maxModelLen: 2_000, charsPerToken: 3.3 });
    const scorer = createVllmScorer({ model: 'cls', urls: [server.url], probe: false, retries: 0, maxInputTokens: 2_000 });
    try {
      const [result] = await scoreCandidates({ scorer }, task, [long]);
      expect(result!.error).toBeUndefined();
      expect(result!.score!.input_tokens).toBeLessThanOrEqual(Math.floor(2_000 * (1 - ESTIMATE_MARGIN)));
      expect(server.bodies('/classify')).toHaveLength(1);
    } finally {
      await scorer.close();
      await server.close();
    }
  });

  it('retries a candidate refused despite the margin once, cut to the count the server reported', async () => {
    const server = await startFakeVllm({ model: 'cls', maxModelLen: 2_000, charsPerToken: 2.5 });
    const scorer = createVllmScorer({ model: 'cls', urls: [server.url], probe: false, retries: 0, maxInputTokens: 2_000 });
    try {
      const [result] = await scoreCandidates({ scorer }, task, [long]);
      expect(result!.error).toBeUndefined();
      const bodies = server.bodies('/classify');
      expect(bodies).toHaveLength(2);
      expect(server.tokensOf(bodies[0]!.input[0])).toBeGreaterThan(2_000);
      expect(server.tokensOf(bodies[1]!.input[0])).toBeLessThanOrEqual(2_000);
    } finally {
      await scorer.close();
      await server.close();
    }
  });
});
