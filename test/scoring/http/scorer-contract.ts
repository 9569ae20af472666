/**
 * The Scorer conformance suite: what every backend must do whatever serves it. Each backend's
 * test calls `runScorerContract` with a factory and an explicit skip list, every skip with a reason.
 * (Lives beside the HTTP backends' tests; nothing in it is HTTP-specific.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WinnowerError } from '../../../src/errors.js';
import type { ScoreInput, Scorer } from '../../../src/scoring/types.js';

export type ContractCase = 'empty' | 'order' | 'deterministic' | 'activation' | 'abort' | 'close';

export interface ScorerContractOptions {
  name: string;
  /** A fresh scorer (and whatever it needs, torn down by `dispose`). */
  create(): Promise<{ scorer: Scorer; dispose?: () => Promise<void> }>;
  /** Inputs to score; default: three short texts. */
  inputs?: ScoreInput[];
  skip?: Partial<Record<ContractCase, string>>;
}

const DEFAULT_INPUTS: ScoreInput[] = [
  { key: 'k-a', text: 'issue A\npatch A' },
  { key: 'k-b', text: 'issue B\npatch B, a longer one' },
  { key: 'k-c', text: 'issue C\n' },
];

export function runScorerContract(options: ScorerContractOptions): void {
  const inputs = options.inputs ?? DEFAULT_INPUTS;
  const skip = options.skip ?? {};
  const test = (name: ContractCase, title: string, body: () => Promise<void>) =>
    skip[name] ? it.skip(`${title} (skipped: ${skip[name]})`, body) : it(title, body);

  describe(`Scorer contract: ${options.name}`, () => {
    let scorer: Scorer;
    let dispose: (() => Promise<void>) | undefined;
    beforeAll(async () => {
      ({ scorer, dispose } = await options.create());
    });
    afterAll(async () => {
      await scorer.close();
      await dispose?.();
    });

    it('describes itself', () => {
      expect(scorer.backend).toMatch(/^[a-z]+$/);
      expect(scorer.model.length).toBeGreaterThan(0);
      expect(scorer.maxInputTokens).toBeGreaterThan(0);
    });

    test('empty', 'answers an empty batch with an empty list', async () => {
      expect(await scorer.score([])).toEqual([]);
    });

    test('order', 'returns one score per input, in order, each a probability', async () => {
      const outputs = await scorer.score(inputs);
      expect(outputs).toHaveLength(inputs.length);
      for (const output of outputs) {
        expect(output.value).toBeGreaterThanOrEqual(0);
        expect(output.value).toBeLessThanOrEqual(1);
        expect(Number.isFinite(output.raw)).toBe(true);
      }
      const reversed = await scorer.score([...inputs].reverse());
      // Compared as scores: a caching scorer marks the second answers `cached`.
      const scores = (list: typeof outputs) => list.map(({ value, raw }) => ({ value, raw }));
      expect(scores(reversed)).toEqual(scores([...outputs].reverse()));
    });

    test('deterministic', 'scores one input alone as it scores it in a batch', async () => {
      const batch = await scorer.score(inputs);
      const alone = await scorer.score([inputs[1]!]);
      expect(alone[0]!.value).toBeCloseTo(batch[1]!.value, 9);
    });

    test('activation', 'reports value = sigmoid(raw)', async () => {
      for (const output of await scorer.score(inputs)) {
        expect(output.value).toBeCloseTo(1 / (1 + Math.exp(-output.raw)), 9);
      }
    });

    test('abort', 'rejects an already aborted call with WNW_ERR_OP_ABORTED', async () => {
      const error = await scorer.score(inputs, { signal: AbortSignal.abort() }).catch((caught: unknown) => caught);
      expect(WinnowerError.isInstance(error) && error.code).toBe('WNW_ERR_OP_ABORTED');
    });

    test('close', 'closes idempotently, then refuses work with a coded error', async () => {
      const { scorer: other, dispose: disposeOther } = await options.create();
      await other.close();
      await other.close();
      const error = await other.score(inputs).catch((caught: unknown) => caught);
      expect(WinnowerError.isInstance(error)).toBe(true);
      await disposeOther?.();
    });
  });
}
