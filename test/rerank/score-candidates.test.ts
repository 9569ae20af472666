/** `scoreCandidates`: what each Score says about how it was obtained. */
import { describe, expect, it } from 'vitest';
import { scoreCandidates } from '../../src/rerank/score-candidates.js';
import { withCache } from '../../src/rerank/scorers/with-cache.js';
import { Task, Trajectory } from '../../src/types/index.js';
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
