/**
 * A piece far over any budget (the 300,000-line patch of issue 18) is counted on a sample of its
 * head and tail, never whole: a spy on the tokenizer sees no text longer than the bound, and the
 * result still fits exactly, the patch cut to head + tail. Texts that may fit are counted whole.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { tokenizerCounter } from '../../src/serialize/count-document.js';
import { EXACT_CHARS, serializeTrajectory } from '../../src/serialize/serialize-trajectory.js';
import { loadTokenizer, type Tokenizer } from '../../src/serialize/tokenizer.js';
import { Task, Trajectory } from '../../src/types/index.js';
import { largeAddedFilePatch } from '../support/large-patch.js';

const TINY = new URL('../../models/tiny-value/', import.meta.url).pathname;

/** The real tokenizer, recording the length of every text it is given. */
function spyOn(tokenizer: Tokenizer): { tokenizer: Tokenizer; lengths: number[] } {
  const lengths: number[] = [];
  const record = (texts: string[]) => void lengths.push(...texts.map((text) => text.length));
  return {
    lengths,
    tokenizer: {
      name: tokenizer.name,
      encode: (texts) => (record(texts), tokenizer.encode(texts)),
      countTokens: (texts) => (record(texts), tokenizer.countTokens(texts)),
      decode: (ids) => tokenizer.decode(ids),
      tokenToId: (token) => tokenizer.tokenToId(token),
    },
  };
}

describe('a patch of 300,000 lines under a 4K budget', () => {
  let tiny: Tokenizer;
  beforeAll(async () => {
    tiny = await loadTokenizer(TINY);
  });
  const patch = largeAddedFilePatch();
  const task = Task.parse({ instance_id: 'o__r-1', problem_statement: 'calc adds wrongly' });
  const trajectory = Trajectory.parse({ id: 'big', instance_id: task.instance_id, source: 'test', patch });

  it.each(['patch-v1', 'judge-v1'])('is tokenized only within its bound (%s), and the result fits exactly', async (template) => {
    const budget = 4096;
    const spy = spyOn(tiny);
    const serialized = await serializeTrajectory(task, trajectory, { template, budgetTokens: budget, tokenizer: spy.tokenizer });
    expect(Math.max(...spy.lengths)).toBeLessThanOrEqual(EXACT_CHARS);
    // Everything tokenized in all: a few bounds' worth, not the patch's 2.3 MB.
    expect(spy.lengths.reduce((sum, length) => sum + length, 0)).toBeLessThan(4 * EXACT_CHARS);
    expect(serialized.inputTokens).toBeLessThanOrEqual(budget);
    expect(serialized.inputIds).toEqual((await tiny.encode([serialized.text]))[0]);
    expect(serialized.truncated).toBe(true);
    expect(serialized.cut.patch).toBe(true);
    expect(serialized.cut.tokens_before).toBeGreaterThan(budget);
    expect(serialized.text).toContain('+++ b/big.txt\n@@ -0,0 +1,300000 @@\n+1\n+2\n');
    expect(serialized.text).toContain('+299999\n+300000\n');
  });
});

describe('tokenizerCounter with a bound', () => {
  /** A test double counting one token per `charsPerToken` characters, recording what it is given. */
  const counting = (charsPerToken: number) => {
    const lengths: number[] = [];
    const tokenizer: Tokenizer = {
      name: 'counting',
      encode: async () => {
        throw new Error('counts only');
      },
      countTokens: async (texts) => texts.map((text) => (lengths.push(text.length), Math.ceil(text.length / charsPerToken))),
      decode: async () => '',
      tokenToId: () => undefined,
    };
    return { tokenizer, lengths };
  };

  it('counts a text over the bound on its head + tail and extrapolates, over the budget', async () => {
    const { tokenizer, lengths } = counting(1);
    const { tokens, sampled } = await tokenizerCounter(tokenizer, { budget: 100, chars: 1_000 }).count(['x'.repeat(1_000_000), 'short']);
    expect(lengths).toEqual([500, 500, 5]);
    expect(tokens).toEqual([1_000_000, 5]);
    expect(sampled).toBe(true);
  });

  it('counts a dense text whole when its samples stay within the budget', async () => {
    // 100 characters a token: a 1,000-character sample holds 10 tokens, within a budget of 100.
    const { tokenizer, lengths } = counting(100);
    const { tokens, sampled } = await tokenizerCounter(tokenizer, { budget: 100, chars: 1_000 }).count(['y'.repeat(10_050)]);
    expect(tokens).toEqual([101]);
    expect(sampled).toBeUndefined();
    // Samples four times larger each round, then the whole text once it is under the bound.
    expect(lengths).toEqual([500, 500, 2_000, 2_000, 10_050]);
  });
});
