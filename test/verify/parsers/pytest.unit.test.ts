import { describe, expect, it } from 'vitest';
import { nodeIdOf, parsePytestLog, pytestStatsCounts } from '../../../src/verify/parsers/pytest.js';

/** pytest 9.0.3 on Python 3.11 with -rA -v (captured on a dev machine, trimmed). */
const PYTEST_9 = `============================= test session starts ==============================
platform linux -- Python 3.11.7, pytest-9.0.3, pluggy-1.6.0 -- /usr/bin/python3
rootdir: /tmp/ut
collecting ... collected 10 items

pkg/test_m.py::A::test_doc PASSED                                        [ 10%]
pkg/test_m.py::A::test_err FAILED                                        [ 20%]
pkg/test_m.py::A::test_skip SKIPPED (why not)                            [ 60%]
pkg/test_m.py::A::test_sub SUBPASSED(i=0)                                [ 70%]
pkg/test_m.py::A::test_sub SUBFAILED(i=1)                                [ 70%]
pkg/test_m.py::A::test_sub PASSED                                        [ 70%]
pkg/test_m.py::A::test_xf XFAIL                                          [ 80%]
pkg/test_m.py::B::test_never ERROR                                       [100%]

==================================== ERRORS ====================================
________________________ ERROR at setup of B.test_never ________________________
E   RuntimeError: boom
==================================== PASSES ====================================
_________________________________ A.test_noise _________________________________
----------------------------- Captured stdout call -----------------------------
pkg/test_m.py::inner::test_printed PASSED
=========================== short test summary info ============================
PASSED pkg/test_m.py::A::test_doc
PASSED pkg/test_m.py::A::test_sub
SKIPPED [1] pkg/test_m.py:9: why not
XFAIL pkg/test_m.py::A::test_xf
ERROR pkg/test_m.py::B::test_never - RuntimeError: boom
FAILED pkg/test_m.py::A::test_err - ValueError: x
SUBFAILED(i=1) pkg/test_m.py::A::test_sub - AssertionError: 1 != 0
========== 2 failed, 2 passed, 1 skipped, 1 xfailed, 1 error in 1.17s ==========
`;

describe('parsePytestLog', () => {
  it('reads pytest 9 verbose lines and the -rA summary, subtests included', () => {
    const tests = parsePytestLog(PYTEST_9);
    expect(Object.fromEntries(tests)).toEqual({
      'pkg/test_m.py::A::test_doc': 'passed',
      'pkg/test_m.py::A::test_err': 'failed',
      'pkg/test_m.py::A::test_skip': 'skipped',
      // a failed subtest fails the test even though pytest 9 also prints it PASSED
      'pkg/test_m.py::A::test_sub': 'failed',
      'pkg/test_m.py::A::test_xf': 'xfail',
      'pkg/test_m.py::B::test_never': 'error',
    });
  });

  it('ignores test-looking lines in captured output sections', () => {
    expect(parsePytestLog(PYTEST_9).has('pkg/test_m.py::inner::test_printed')).toBe(false);
  });

  it('reads the stats line', () => {
    expect(pytestStatsCounts(PYTEST_9)).toEqual({ failed: 2, passed: 2, skipped: 1, xfailed: 1, error: 1 });
    expect(pytestStatsCounts('no pytest here')).toBeUndefined();
  });

  it('reads xdist lines and old `FAIL` summaries', () => {
    const log = [
      '============================= test session starts ==============================',
      '[gw0] [ 50%] PASSED tests/test_a.py::test_one',
      '[gw1] [100%] FAILED tests/test_a.py::test_two',
      '=========================== short test summary info ============================',
      'FAIL tests/test_a.py::test_three',
      '=================== 2 failed, 1 passed in 0.50 seconds ===================',
    ].join('\n');
    expect(Object.fromEntries(parsePytestLog(log))).toEqual({
      'tests/test_a.py::test_one': 'passed',
      'tests/test_a.py::test_two': 'failed',
      'tests/test_a.py::test_three': 'failed',
    });
  });

  it('keeps the worse outcome: a pass with a teardown error is an error', () => {
    const log = [
      '=========================== short test summary info ============================',
      'PASSED t.py::test_a',
      'ERROR t.py::test_a - RuntimeError: teardown',
      '========================= 1 passed, 1 error in 0.01s =========================',
    ].join('\n');
    expect(parsePytestLog(log).get('t.py::test_a')).toBe('error');
  });

  it('strips ANSI colour codes', () => {
    const log = [
      '\x1b[36m\x1b[1m=========================== short test summary info ============================\x1b[0m',
      '\x1b[31mFAILED\x1b[0m t.py::\x1b[1mtest_a\x1b[0m - AssertionError',
      '\x1b[31m============= \x1b[31m\x1b[1m1 failed\x1b[0m\x1b[31m in 0.35s\x1b[0m\x1b[31m ==============\x1b[0m',
    ].join('\n');
    expect(Object.fromEntries(parsePytestLog(log))).toEqual({ 't.py::test_a': 'failed' });
  });

  it('records a collection error under the file path', () => {
    const log = [
      '=========================== short test summary info ============================',
      'ERROR tests/test_b.py',
      '!!!!!!!!!!!!!!!!!!!! Interrupted: 1 error during collection !!!!!!!!!!!!!!!!!!!!',
      '=============================== 1 error in 0.12s ===============================',
    ].join('\n');
    expect(Object.fromEntries(parsePytestLog(log))).toEqual({ 'tests/test_b.py': 'error' });
  });

  it('ignores a summary block that is not the terminal one (nested runs, no outer summary)', () => {
    const log = [
      '============================= test session starts ==============================',
      't.py .                                                                   [100%]',
      '==================================== PASSES ====================================',
      '============================= test session starts ==============================',
      '=========================== short test summary info ============================',
      'FAILED inner.py::test_x - assert 0',
      '============================== 1 failed in 0.01s ===============================',
      '============================== 1 passed in 0.20s ===============================',
    ].join('\n');
    expect(parsePytestLog(log).size).toBe(0);
  });
});

describe('nodeIdOf', () => {
  it('cuts the message at the first ` - ` outside brackets', () => {
    expect(nodeIdOf('t.py::test_x - AssertionError: a - b')).toBe('t.py::test_x');
    expect(nodeIdOf('t.py::test_x[a - b] - boom')).toBe('t.py::test_x[a - b]');
    expect(nodeIdOf('t.py::test_x[foo, bar-expected2]')).toBe('t.py::test_x[foo, bar-expected2]');
  });
});
