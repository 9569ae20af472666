import { describe, expect, it } from 'vitest';
import { withBatching } from '../../../src/scoring/with-batching.js';
import { withCache } from '../../../src/scoring/with-cache.js';
import { withObserver } from '../../../src/scoring/with-observer.js';
import { RecordingScorer } from './helpers.js';

/** A scorer that carries every field of `Scorer`, the optional tokenizer too. */
class DescribedScorer extends RecordingScorer {
  readonly tokenizer = { encode: (text: string) => [...text].map((char) => char.charCodeAt(0)) } as never;
}

describe('scorer wrappers pass on the wrapped scorer’s fields', () => {
  const wrappers = {
    withBatching: (inner: RecordingScorer) => withBatching(inner, { maxBatchSize: 4, maxBatchTokens: 1_000, windowMs: 0 }),
    withCache: (inner: RecordingScorer) => withCache(inner, { maxEntries: 4 }),
    withObserver: (inner: RecordingScorer) => withObserver(inner, () => {}),
  };
  for (const [name, wrap] of Object.entries(wrappers)) {
    it(`${name} keeps backend, model, tokenizer and maxInputTokens`, async () => {
      const inner = new DescribedScorer();
      const wrapped = wrap(inner);
      expect({
        backend: wrapped.backend,
        model: wrapped.model,
        tokenizer: wrapped.tokenizer,
        maxInputTokens: wrapped.maxInputTokens,
      }).toEqual({
        backend: inner.backend,
        model: inner.model,
        tokenizer: inner.tokenizer,
        maxInputTokens: inner.maxInputTokens,
      });
      await wrapped.close();
    });
  }
});
