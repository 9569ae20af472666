/** `scoreCandidates`: what each Score says about how it was obtained. */
import { describe, expect, it } from 'vitest';
import { scoreCandidates } from '../../src/rerank/score-candidates.js';
import { createVllmScorer } from '../../src/rerank/scorers/vllm.js';
import { withCache } from '../../src/rerank/scorers/with-cache.js';
import { Task, Trajectory } from '../../src/types/index.js';
import { startFakeVllm } from '../fakes/fake-vllm.js';
import { RecordingScorer } from './scorers/http/helpers.js';

const task = Task.parse({ instance_id: 'o__r-1', problem_statement: 'It breaks.' });
const trajectory = (source: string) =>
  Trajectory.parse({ id: `${source}/o__r-1`, instance_id: 'o__r-1', source, patch: '--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n' });

describe('scoreCandidates', () => {
  it('marks a Score served from the content-hash cache as cached', async () => {
    const inner = new RecordingScorer();
    const scorer = withCache(inner, { maxEntries: 10 });
    const first = await scoreCandidates(scorer, task, [trajectory('a')]);
    expect(first[0]!.score).toMatchObject({ trajectory_id: 'a/o__r-1', cached: false });
    // Another candidate with the same patch serializes to the same input: answered from the cache.
    const second = await scoreCandidates(scorer, task, [trajectory('b')]);
    expect(second[0]!.score).toMatchObject({ trajectory_id: 'b/o__r-1', cached: true, value: first[0]!.score!.value });
    expect(inner.calls).toHaveLength(1);
  });
});

describe('scoreCandidates against a vLLM server with a shorter context than the budget', () => {
  it('leaves only the candidate the server refuses as too long unscored, says why, and does not cache the refusal', async () => {
    const server = await startFakeVllm({ model: 'cls', maxModelLen: 200 });
    const scorer = withCache(createVllmScorer({ model: 'cls', urls: [server.url], probe: false, retries: 0 }), { maxEntries: 10 });
    try {
      const long = Trajectory.parse({ ...trajectory('long'), patch: `--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+${'b'.repeat(2_000)}\n` });
      const results = await scoreCandidates(scorer, task, [trajectory('a'), long, trajectory('c')]);
      expect(results.map((result) => Boolean(result.score))).toEqual([true, false, true]);
      expect(results[1]!.error).toMatchObject({ code: 'WNW_ERR_SCORE_TOO_LONG' });
      expect(results[1]!.error!.message).toContain("maximum context length is 200 tokens");
      const again = await scoreCandidates(scorer, task, [long]);
      expect(again[0]!.error?.code).toBe('WNW_ERR_SCORE_TOO_LONG');
      // a and c serialize alike (one input): the batch [a, long], refused; each alone; then long again, not from the cache.
      expect(server.bodies('/classify').map((body) => body.input.length)).toEqual([2, 1, 1, 1]);
    } finally {
      await scorer.close();
      await server.close();
    }
  });
});
