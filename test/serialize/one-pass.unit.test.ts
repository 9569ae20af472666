/**
 * A candidate that fits its budget costs one encode of its assembled text (issue 31.1), plus a
 * count of the issue for its cap: no piece is tokenized on its own. The ~4K-token trajectory of
 * the bench (19K characters, estimated at 5.5K tokens by the template's 3.5 characters a token)
 * fits a 4096-token budget; before, every piece and its cut variants were counted first.
 */
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { importOpenHands } from '../../src/formats/openhands.js';
import { syntheticTrajectory } from '../../src/loadgen/synthetic-trajectory.js';
import { loadChatTemplate } from '../../src/serialize/chat-template.js';
import { serializeTrajectory } from '../../src/serialize/serialize-trajectory.js';
import { loadTokenizer, type Tokenizer } from '../../src/serialize/tokenizer.js';
import { Task } from '../../src/types/index.js';
import { QWEN3_TOKENIZER, QWEN3_TOKENIZER_CONFIG } from '../scoring/http/helpers.js';

/** The real tokenizer, keeping every text it is asked to encode or count. */
function watched(inner: Tokenizer): Tokenizer & { encoded: string[]; counted: string[] } {
  const encoded: string[] = [];
  const counted: string[] = [];
  return {
    name: inner.name,
    encoded,
    counted,
    encode: (texts) => (encoded.push(...texts), inner.encode(texts)),
    countTokens: (texts) => (counted.push(...texts), inner.countTokens(texts)),
    decode: (ids) => inner.decode(ids),
    tokenToId: (token) => inner.tokenToId(token),
  };
}

const chars = (texts: string[]) => texts.reduce((sum, text) => sum + text.length, 0);

describe('serializing a candidate that fits', () => {
  let bundled: Tokenizer;
  let qwen3: Tokenizer;
  beforeAll(async () => {
    bundled = await loadTokenizer(fileURLToPath(new URL('../../models/winnower-value/', import.meta.url)));
    qwen3 = await loadTokenizer(QWEN3_TOKENIZER);
  });

  it('encodes the assembled text once, and counts only the issue beside it (judge-v1)', async () => {
    const { task, trajectory } = syntheticTrajectory(9);
    const tokenizer = watched(bundled);
    const serialized = await serializeTrajectory(task, trajectory, { template: 'judge-v1', budgetTokens: 4096, tokenizer });
    expect(serialized.truncated).toBe(false);
    expect(serialized.text.length / 3.5).toBeGreaterThan(4096); // estimated over the budget, yet it fits
    expect(tokenizer.encoded).toEqual([serialized.text]);
    expect(chars(tokenizer.counted)).toBeLessThan(task.problem_statement.length * 2 + 2_000);
  });

  it('encodes the rendered conversation once, and counts only the issue beside it (openhands-critic-v1)', async () => {
    const fixture = fileURLToPath(new URL('../fixtures/importers/openhands/acme__gadgets-201.output.jsonl', import.meta.url));
    const [trajectory] = (await importOpenHands(fixture)).items;
    const task = Task.parse({ instance_id: 'acme__gadgets-201', problem_statement: 'to_meters is off by 1.6%.' });
    const tokenizer = watched(qwen3);
    const serialized = await serializeTrajectory(task, trajectory!, {
      template: 'openhands-critic-v1',
      budgetTokens: 8192,
      tokenizer,
      chatTemplate: loadChatTemplate(QWEN3_TOKENIZER_CONFIG),
    });
    expect(serialized.truncated).toBe(false);
    expect(tokenizer.encoded).toEqual([serialized.text]);
    expect(tokenizer.counted).toHaveLength(1);
    expect(serialized.text).toContain(tokenizer.counted[0]);
  });
});
