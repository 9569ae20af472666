/**
 * A request given up on stops costing CPU: `scoreCandidates` with an aborted signal serializes no
 * further candidate and calls no scorer (issue 31: a cancelled /score was serialized in full).
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { scoreCandidates } from '../../src/scoring/score-candidates.js';
import { loadTokenizer, type Tokenizer } from '../../src/serialize/tokenizer.js';
import { Task, Trajectory } from '../../src/types/index.js';
import { packageRoot } from '../../src/util/package-root.js';
import { RecordingScorer } from './http/helpers.js';

const task = Task.parse({ instance_id: 'o__r-1', problem_statement: 'It breaks.' });
const candidates = Array.from({ length: 8 }, (_, index) =>
  Trajectory.parse({
    id: `c${index}`,
    instance_id: 'o__r-1',
    source: 's',
    messages: [
      { role: 'user', content: 'fix it' },
      { role: 'assistant', content: `candidate ${index} edits x` },
    ],
    patch: `--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b${index}\n`,
  }),
);

/** The real tokenizer, counting the texts it is given and firing `onFirst` at the first call. */
function countingTokenizer(inner: Tokenizer, onFirst: () => void): Tokenizer & { texts: string[] } {
  const texts: string[] = [];
  const seen = (batch: string[]) => {
    if (texts.length === 0) onFirst();
    texts.push(...batch);
  };
  return {
    name: inner.name,
    texts,
    encode: (batch) => (seen(batch), inner.encode(batch)),
    countTokens: (batch) => (seen(batch), inner.countTokens(batch)),
    decode: (ids) => inner.decode(ids),
    tokenToId: (token) => inner.tokenToId(token),
  };
}

describe('scoreCandidates with a signal that fires', () => {
  it('stops between candidates and never calls the scorer once the request is aborted', async () => {
    const inner = await loadTokenizer(join(packageRoot(), 'models/winnower-value'));
    const controller = new AbortController();
    const tokenizer = countingTokenizer(inner, () => controller.abort(new Error('client gone')));
    const scorer = Object.assign(new RecordingScorer(), { tokenizer });
    const scoring = scoreCandidates({ scorer }, task, candidates, { signal: controller.signal, serializeConcurrency: 1 });
    await expect(scoring).rejects.toMatchObject({ code: 'WNW_ERR_OP_ABORTED' });
    // Only the first candidate reached the tokenizer, and only its first encode.
    expect(tokenizer.texts.some((text) => text.includes('candidate 0'))).toBe(true);
    expect(tokenizer.texts.some((text) => /candidate [1-7]/.test(text))).toBe(false);
    expect(scorer.calls).toHaveLength(0);
  });

  it('scores every candidate when the signal does not fire', async () => {
    const inner = await loadTokenizer(join(packageRoot(), 'models/winnower-value'));
    const tokenizer = countingTokenizer(inner, () => {});
    const scorer = Object.assign(new RecordingScorer(), { tokenizer });
    const results = await scoreCandidates({ scorer }, task, candidates, { signal: new AbortController().signal, serializeConcurrency: 2 });
    expect(results.map((result) => typeof result.score?.value)).toEqual(candidates.map(() => 'number'));
    expect(scorer.calls).toHaveLength(1);
  });
});
