import { describe, expect, it } from 'vitest';
import type { TestStatus } from '../../src/types/verify.js';
import { gradeTests, lookupTest } from '../../src/verify/grade.js';

const map = (entries: Record<string, TestStatus>) => new Map(Object.entries(entries));

describe('gradeTests', () => {
  it('resolves only when every F2P and P2P test passed (xfail counts as passed)', () => {
    const tests = map({ a: 'passed', b: 'xfail', c: 'passed' });
    const grade = gradeTests({ tests, failToPass: ['a'], passToPass: ['b', 'c'], exitCode: 1, timedOut: false });
    expect(grade).toMatchObject({
      status: 'resolved',
      resolved: true,
      fail_to_pass: { passed: 1, failed: 0, missing: 0 },
      pass_to_pass: { passed: 2, failed: 0, missing: 0 },
    });
  });

  it('reports missing tests as missing, and failed, errored or xpassed ones as failed', () => {
    const tests = map({ a: 'failed', b: 'error', d: 'xpass' });
    const grade = gradeTests({ tests, failToPass: ['a', 'gone'], passToPass: ['b', 'd'], exitCode: 1, timedOut: false });
    expect(grade.fail_to_pass).toEqual({ passed: 0, failed: 1, missing: 1 });
    expect(grade.pass_to_pass).toEqual({ passed: 0, failed: 2, missing: 0 });
    expect(grade.listed.get('gone')).toBe('missing');
    expect(grade.status).toBe('unresolved');
  });

  it('keeps a skipped PASS_TO_PASS test as maintained, as the SWE-bench harness does', () => {
    const tests = map({ a: 'passed', b: 'skipped', c: 'passed' });
    const grade = gradeTests({ tests, failToPass: ['a'], passToPass: ['b', 'c'], exitCode: 0, timedOut: false });
    expect(grade.pass_to_pass).toEqual({ passed: 2, failed: 0, missing: 0 });
    expect(grade.listed.get('b')).toBe('skipped');
    expect(grade.status).toBe('resolved');
  });

  it('counts a skipped FAIL_TO_PASS test as failed', () => {
    const tests = map({ a: 'skipped', c: 'passed' });
    const grade = gradeTests({ tests, failToPass: ['a'], passToPass: ['c'], exitCode: 0, timedOut: false });
    expect(grade.fail_to_pass).toEqual({ passed: 0, failed: 1, missing: 0 });
    expect(grade.status).toBe('unresolved');
  });

  it('is never resolved when the run timed out', () => {
    const grade = gradeTests({ tests: map({ a: 'passed' }), failToPass: ['a'], passToPass: [], exitCode: null, timedOut: true });
    expect(grade).toMatchObject({ status: 'timeout', resolved: false, fail_to_pass: { passed: 1, failed: 0, missing: 0 } });
  });

  it('decides on the exit code when no tests are listed', () => {
    expect(gradeTests({ tests: map({}), failToPass: [], passToPass: [], exitCode: 0, timedOut: false }).status).toBe('resolved');
    expect(gradeTests({ tests: map({}), failToPass: [], passToPass: [], exitCode: 3, timedOut: false }).status).toBe('unresolved');
  });

  it('counts a test listed twice once', () => {
    const grade = gradeTests({ tests: map({ a: 'passed' }), failToPass: ['a', 'a'], passToPass: [], exitCode: 0, timedOut: false });
    expect(grade.fail_to_pass.passed).toBe(1);
  });
});

describe('lookupTest', () => {
  it('matches a SWE-bench id truncated at a space to the worse of the ids it truncates', () => {
    const tests = map({ 't.py::test_x[a, b-1]': 'passed', 't.py::test_x[a, c-2]': 'failed', 't.py::test_x[a-0]': 'passed' });
    expect(lookupTest(tests, 't.py::test_x[a,')).toBe('failed');
    expect(lookupTest(tests, 't.py::test_x[a-0]')).toBe('passed');
  });

  it('matches unittest ids in any spelling, keeping the worse when two are printed', () => {
    const tests = map({ 'test_a (m.C)': 'passed', 'test_a (m.C.test_a)': 'failed' });
    expect(lookupTest(tests, 'm.C.test_a')).toBe('failed');
  });

  it('gives a test the error of the file or fixture that contains it', () => {
    const tests = map({ 'tests/t.py': 'error', 'setUpClass (m.tests.C)': 'error', 'setUpModule (m.other)': 'error' });
    expect(lookupTest(tests, 'tests/t.py::test_a[1]')).toBe('error');
    expect(lookupTest(tests, 'test_a (m.tests.C)')).toBe('error');
    expect(lookupTest(tests, 'test_a (m.tests.C.test_a)')).toBe('error');
    expect(lookupTest(tests, 'test_b (m.other.D)')).toBe('error');
    expect(lookupTest(tests, 'tests/u.py::test_a')).toBe('missing');
  });
});
