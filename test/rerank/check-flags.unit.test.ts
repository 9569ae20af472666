/**
 * The flags that shape the checks without a test list (`--regression-budget`,
 * `--pool-tests-budget`, `--no-regression`, `--no-pool-tests`) are refused by name when those
 * checks run for no instance (every task has given tests, no `--checks`): accepted, they would be
 * ignored. With one instance that runs them, or `--checks`, or `--no-given-tests`, they stand.
 */
import { describe, expect, it } from 'vitest';
import { checksRunFor, refuseUnreadCheckFlags } from '../../src/rerank/execute-instance.js';
import { Task } from '../../src/types/index.js';

const withTests = Task.parse({ instance_id: 'o__r-1', problem_statement: 'x', fail_to_pass: ['t::a'], pass_to_pass: ['t::b'] });
const withoutTests = Task.parse({ instance_id: 'o__r-2', problem_statement: 'y' });
const tasks = new Map([
  [withTests.instance_id, withTests],
  [withoutTests.instance_id, withoutTests],
]);
const given = { checks: 'auto' as const, givenTests: true };

describe('checks without a test list: flags that would be ignored', () => {
  it('refuses a budget when every instance has given tests and --checks is not given, naming the flag', () => {
    const refused = () => refuseUnreadCheckFlags({ ...given, checkFlags: ['--regression-budget'] }, ['o__r-1'], (id) => tasks.get(id));
    expect(refused).toThrow(/--regression-budget shapes the checks without a test list, which run for no instance here/);
    try {
      refused();
    } catch (error) {
      expect(error).toMatchObject({
        code: 'WNW_ERR_INPUT_INVALID',
        details: { field: 'regression_budget', refused: ['--regression-budget'] },
      });
    }
    expect(() =>
      refuseUnreadCheckFlags({ ...given, checkFlags: ['--pool-tests-budget', '--no-regression'] }, ['o__r-1'], (id) => tasks.get(id)),
    ).toThrow(/--pool-tests-budget, --no-regression shape the checks/);
  });

  it('keeps them when some instance runs the checks: no given tests, no task record, --checks or --no-given-tests', () => {
    const flags = ['--regression-budget', '--pool-tests-budget'];
    expect(() => refuseUnreadCheckFlags({ ...given, checkFlags: flags }, ['o__r-1', 'o__r-2'], (id) => tasks.get(id))).not.toThrow();
    expect(() => refuseUnreadCheckFlags({ ...given, checkFlags: flags }, ['o__r-1', 'o__r-9'], (id) => tasks.get(id))).not.toThrow();
    expect(() =>
      refuseUnreadCheckFlags({ checks: 'always', givenTests: true, checkFlags: flags }, ['o__r-1'], (id) => tasks.get(id)),
    ).not.toThrow();
    expect(() =>
      refuseUnreadCheckFlags({ checks: 'auto', givenTests: false, checkFlags: flags }, ['o__r-1'], (id) => tasks.get(id)),
    ).not.toThrow();
    expect(() => refuseUnreadCheckFlags({ ...given }, ['o__r-1'], (id) => tasks.get(id))).not.toThrow();
  });

  it('checksRunFor: the rule executeInstance runs the checks by', () => {
    expect(checksRunFor(given, withTests)).toBe(false);
    expect(checksRunFor(given, withoutTests)).toBe(true);
    expect(checksRunFor(given, undefined)).toBe(true);
    expect(checksRunFor({ checks: 'always', givenTests: true }, withTests)).toBe(true);
    expect(checksRunFor({ checks: 'auto', givenTests: false }, withTests)).toBe(true);
  });
});
