import { expect, it } from 'vitest';
import { countNoun } from '../../src/util/count-noun.js';

it('puts the noun in the plural unless the count is one', () => {
  expect([0, 1, 2].map((n) => countNoun(n, 'instance'))).toEqual(['0 instances', '1 instance', '2 instances']);
  expect(countNoun(3, 'policy', 'policies')).toBe('3 policies');
});
