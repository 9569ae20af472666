/**
 * The batcher's policy (src/scoring/with-batching.ts, docs/value-models.md#batching), on a
 * backend whose every batch is answered only when the test says so and on a fake clock: nothing
 * here depends on how fast the machine is.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { ScoreCallOptions, ScoreInput, ScoreOutput, Scorer } from '../../src/scoring/types.js';
import { withBatching, type BatchingOptions } from '../../src/scoring/with-batching.js';

/** A backend that holds every batch until `answer(i)`; records which keys each batch carried. */
class GatedScorer implements Scorer {
  readonly backend = 'gated';
  readonly model = 'gated-model';
  readonly maxInputTokens = 1_000_000;
  readonly batches: Array<{ keys: string[]; answer(): void }> = [];

  score(inputs: ScoreInput[], _options?: ScoreCallOptions): Promise<ScoreOutput[]> {
    return new Promise((resolve) => {
      this.batches.push({
        keys: inputs.map((input) => input.key),
        answer: () => resolve(inputs.map((_, index) => ({ value: 0.5, raw: index }))),
      });
    });
  }

  /** Answers batch `index` and lets the batcher react to it. */
  async answer(index: number): Promise<void> {
    this.batches[index]!.answer();
    await settle();
  }

  async close(): Promise<void> {}
}

/** Lets every pending promise callback run (no timer moves). */
async function settle(): Promise<void> {
  for (let round = 0; round < 10; round++) await Promise.resolve();
}

const inputs = (call: string, count: number): ScoreInput[] =>
  Array.from({ length: count }, (_, index) => ({ key: `${call}${index}`, text: `${call} ${index}` }));

describe('withBatching: when a batch leaves', () => {
  let backend: GatedScorer;
  const batcher = (options: Partial<BatchingOptions> = {}) =>
    withBatching(backend, { maxBatchSize: 4, maxBatchTokens: 1_000_000, windowMs: 1_000, ...options });

  beforeEach(() => {
    vi.useFakeTimers();
    backend = new GatedScorer();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('sends a call at once when the backend is idle, without waiting for the window', async () => {
    const scorer = batcher();
    const result = scorer.score(inputs('a', 2));
    expect(backend.batches.map((batch) => batch.keys)).toEqual([['a0', 'a1']]);
    await backend.answer(0);
    await expect(result).resolves.toHaveLength(2);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('under concurrent load, batches calls that arrive while the backend is busy', async () => {
    const scorer = batcher();
    const calls = [scorer.score(inputs('a', 1)), scorer.score(inputs('b', 1)), scorer.score(inputs('c', 1))];
    expect(backend.batches.map((batch) => batch.keys)).toEqual([['a0']]);
    await backend.answer(0);
    // The backend is free again: b and c leave together, at once, long before the window.
    expect(backend.batches.map((batch) => batch.keys)).toEqual([['a0'], ['b0', 'c0']]);
    await backend.answer(1);
    await expect(Promise.all(calls)).resolves.toHaveLength(3);
  });

  it('never holds a batch for the window once the backend is free', async () => {
    const scorer = batcher({ windowMs: 60_000 });
    void scorer.score(inputs('a', 1));
    void scorer.score(inputs('b', 1));
    expect(backend.batches).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(backend.batches).toHaveLength(1);
    await backend.answer(0);
    expect(backend.batches.map((batch) => batch.keys)).toEqual([['a0'], ['b0']]);
  });

  it('sends a full batch at once even while the backend is busy', () => {
    const scorer = batcher();
    void scorer.score(inputs('a', 1));
    for (const call of ['b', 'c', 'd', 'e']) void scorer.score(inputs(call, 1));
    expect(backend.batches.map((batch) => batch.keys)).toEqual([['a0'], ['b0', 'c0', 'd0', 'e0']]);
  });

  it('bounds the wait behind a slow batch by the window', async () => {
    const scorer = batcher({ windowMs: 50 });
    void scorer.score(inputs('a', 1));
    void scorer.score(inputs('b', 1));
    await vi.advanceTimersByTimeAsync(49);
    expect(backend.batches).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(backend.batches.map((batch) => batch.keys)).toEqual([['a0'], ['b0']]);
  });

  it('sends up to maxInFlight batches without waiting', () => {
    const scorer = batcher({ maxInFlight: 2 });
    for (const call of ['a', 'b', 'c']) void scorer.score(inputs(call, 1));
    expect(backend.batches.map((batch) => batch.keys)).toEqual([['a0'], ['b0']]);
  });

  it('while no more calls are in progress than maxInFlight, sends each the moment it is made, as without batching', async () => {
    const scorer = batcher({ maxInFlight: 3 });
    // A fixed pseudo-random order of new calls and answers that never holds more than three calls at once.
    let seed = 7;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const open: number[] = [];
    let made = 0;
    for (let step = 0; step < 200; step++) {
      if (open.length < 3 && (open.length === 0 || next() < 0.5)) {
        const before = backend.batches.length;
        void scorer.score(inputs(`c${made}-`, 1 + Math.floor(next() * 3)));
        made += 1;
        expect(backend.batches).toHaveLength(before + 1);
        open.push(before);
      } else {
        const [batch] = open.splice(Math.floor(next() * open.length), 1);
        await backend.answer(batch!);
      }
    }
    expect(backend.batches).toHaveLength(made);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('does not split a call over two batches when it fits whole in the next', async () => {
    const scorer = batcher();
    void scorer.score(inputs('a', 1));
    void scorer.score(inputs('b', 3));
    void scorer.score(inputs('c', 3));
    // Six queued: one batch of four would carry b and the start of c; b leaves alone, c waits whole.
    expect(backend.batches.map((batch) => batch.keys)).toEqual([['a0'], ['b0', 'b1', 'b2']]);
    await backend.answer(0);
    await backend.answer(1);
    expect(backend.batches.map((batch) => batch.keys)).toEqual([['a0'], ['b0', 'b1', 'b2'], ['c0', 'c1', 'c2']]);
  });

  it('still splits a call larger than one batch', () => {
    const scorer = batcher();
    void scorer.score(inputs('a', 1));
    void scorer.score(inputs('b', 6));
    expect(backend.batches.map((batch) => batch.keys)).toEqual([['a0'], ['b0', 'b1', 'b2', 'b3']]);
  });

  it('refuses maxInFlight below 1, naming the options', () => {
    expect(() => batcher({ maxInFlight: 0 })).toThrow(expect.objectContaining({ code: 'WNW_ERR_CFG_INVALID' }));
  });
});
