import { describe, expect, it } from 'vitest';
import { WinnowerError } from '../../src/errors.js';
import { clip, judgeMessages, preferenceFromLogprobs } from '../../src/judge/judge-prompt.js';
import { circulantPairs } from '../../src/judge/tournament.js';

const ids = (n: number) => Array.from({ length: n }, (_, index) => `c${index}`);
const opponents = (pairs: Array<[string, string]>, id: string) => pairs.filter(([a, b]) => a === id || b === id).length;

describe('circulantPairs', () => {
  it('asks N·k distinct pairs when N > 2k, every candidate meeting 2k opponents', () => {
    const pairs = circulantPairs(ids(10), 2);
    expect(pairs).toHaveLength(20);
    expect(new Set(pairs.map((pair) => [...pair].sort().join())).size).toBe(20);
    for (const id of ids(10)) expect(opponents(pairs, id)).toBe(4);
    // Neighbours in the current order, and the wrap-around from the last to the first.
    expect(pairs).toContainEqual(['c0', 'c1']);
    expect(pairs).toContainEqual(['c0', 'c9']);
    expect(pairs).not.toContainEqual(['c0', 'c5']);
  });

  it('is every pair once when N ≤ 2k + 1, and nothing for one candidate', () => {
    expect(circulantPairs(ids(5), 2)).toHaveLength(10);
    expect(circulantPairs(ids(4), 2)).toHaveLength(6);
    expect(circulantPairs(ids(2), 3)).toEqual([['c0', 'c1']]);
    expect(circulantPairs(ids(1), 2)).toEqual([]);
  });

  it('grows linearly in N for a fixed k', () => {
    for (const n of [8, 16, 32, 64]) expect(circulantPairs(ids(n), 3)).toHaveLength(n * 3);
  });
});

describe('preferenceFromLogprobs', () => {
  it('is the expectation of the digit over the score tokens present, renormalised, mapped to [0, 1]', () => {
    // 60% on 9, 40% on 5 among the digits; the text token does not count.
    const p = preferenceFromLogprobs([
      ['9', Math.log(0.3)],
      ['5', Math.log(0.2)],
      ['The', Math.log(0.5)],
    ]);
    expect(p).toBeCloseTo((0.6 * 9 + 0.4 * 5 - 1) / 8, 12);
    expect(preferenceFromLogprobs([['1', -0.1]])).toBe(0);
    expect(preferenceFromLogprobs([['9', -3]])).toBe(1);
    expect(preferenceFromLogprobs([['5', -0.2]])).toBe(0.5);
  });

  it('adds a digit written with a leading space to the digit, and counts each token once', () => {
    const spaced = preferenceFromLogprobs([
      ['9', Math.log(0.25)],
      [' 9', Math.log(0.25)],
      ['1', Math.log(0.5)],
    ]);
    expect(spaced).toBeCloseTo(0.5, 12);
    const repeated = preferenceFromLogprobs([
      ['9', Math.log(0.5)],
      ['9', Math.log(0.5)],
      ['1', Math.log(0.5)],
    ]);
    expect(repeated).toBeCloseTo(0.5, 12);
  });

  it('refuses an answer without any score digit, with the judge response code', () => {
    const attempt = () =>
      preferenceFromLogprobs([
        ['The', -0.1],
        ['10', -2],
      ]);
    expect(attempt).toThrow(WinnowerError);
    expect(attempt).toThrow(expect.objectContaining({ code: 'WNW_ERR_JUDGE_RESPONSE' }));
  });
});

describe('judgeMessages', () => {
  it('shows the issue, Patch A then Patch B, and asks for one digit', () => {
    const [system, user] = judgeMessages('the bug', 'patch-one', 'patch-two');
    expect(system!.role).toBe('system');
    const content = user!.content;
    expect(content.indexOf('the bug')).toBeLessThan(content.indexOf('## Patch A'));
    expect(content.indexOf('patch-one')).toBeLessThan(content.indexOf('## Patch B'));
    expect(content.indexOf('patch-two')).toBeGreaterThan(content.indexOf('## Patch B'));
    expect(content).toMatch(/single digit/);
  });

  it('keeps the head and tail of a long patch', () => {
    const long = `HEAD${'x'.repeat(50_000)}TAIL`;
    const clipped = clip(long, 1000);
    expect(clipped.length).toBeLessThan(1100);
    expect(clipped.startsWith('HEAD')).toBe(true);
    expect(clipped.endsWith('TAIL')).toBe(true);
    expect(clipped).toMatch(/characters cut/);
  });
});
