/** Issue 18 item 1: a patch of 300,000 changed lines is prepared and ranked under every strategy, with no RangeError. */
import { describe, expect, it } from 'vitest';
import { DEFAULT_MODEL_DIR } from '../../src/config.js';
import { loadSelector } from '../../src/scoring/model-folder.js';
import { normalizePatch, select } from '../../src/select/index.js';
import { Strategy } from '../../src/types/index.js';
import { maxOf, pushAll } from '../../src/util/large-arrays.js';
import { LARGE_PATCH_LINES, largeAddedFilePatch } from '../support/large-patch.js';
import { FIX_A, score, trajectory } from './fixtures.js';

describe('a patch of 300,000 changed lines', () => {
  const big = largeAddedFilePatch();

  it('normalizes', () => {
    const normalized = normalizePatch(big);
    expect(normalized?.changedLines).toBe(LARGE_PATCH_LINES);
    expect(normalized?.files).toEqual(['big.txt']);
  });

  it.each(Strategy.options)('is ranked under %s beside a small fix', (strategy) => {
    const selector = loadSelector(DEFAULT_MODEL_DIR());
    const selection = select(
      strategy,
      [
        { trajectory: trajectory('big', big), score: score('big', 0.9) },
        { trajectory: trajectory('fix', FIX_A), score: score('fix', 0.6) },
      ],
      { ...(selector ? { selector } : {}), task: { problem_statement: 'calc adds wrongly' } },
    );
    expect(selection.ranking.map((entry) => entry.trajectory_id).sort()).toEqual(['big', 'fix']);
    expect(selection.chosen).not.toBeNull();
  });
});

describe('large-arrays', () => {
  it('pushAll and maxOf hold for more elements than call arguments may', () => {
    const many = Array.from({ length: 1_000_000 }, (_, index) => index);
    expect(pushAll([-1], many)).toHaveLength(1_000_001);
    expect(maxOf(many)).toBe(999_999);
    expect(maxOf([], 0)).toBe(0);
    expect(maxOf([1, Number.NaN, 3])).toBeNaN();
  });
});
