import { describe, expect, it } from 'vitest';
import { parseSympyLog, sympyStatus, sympySummaryCounts } from '../../../src/verify/parsers/sympy.js';

describe('parseSympyLog', () => {
  it('reads every status form of bin/test --verbose', () => {
    const log = [
      'sympy/core/tests/test_a.py[7] ',
      'test_ok ok',
      'test_fail F',
      'test_exc E',
      'test_xfail f',
      'test_xpass X',
      'test_skip_new requires numpy s',
      'test_skip_plain  - s',
      'test_skip_old s - requires scipy',
      'test_printing hello from the test',
      'ok',
      'test_last ok                                                   [FAIL]',
      '',
      'sympy/core/tests/test_b.py[?]   Failed to import                [FAIL]',
      '________________________________ slowest tests _________________________________',
      'test_fail - Took 11.298 seconds',
      '== tests finished: 3 passed, 1 failed, 3 skipped, 1 expected to fail, 1 expected to fail but passed, 1 exceptions, in 1.00 seconds ==',
    ].join('\n');
    expect(Object.fromEntries(parseSympyLog(log))).toEqual({
      test_ok: 'passed',
      test_fail: 'failed',
      test_exc: 'error',
      test_xfail: 'xfail',
      test_xpass: 'xpass',
      test_skip_new: 'skipped',
      test_skip_plain: 'skipped',
      test_skip_old: 'skipped',
      test_printing: 'passed',
      test_last: 'passed',
      'sympy/core/tests/test_b.py': 'error',
    });
    expect(sympySummaryCounts(log)).toMatchObject({ passed: 3, failed: 1, skipped: 3, exceptions: 1 });
  });

  it('keeps the worse outcome for a name found in two files', () => {
    const log = 'sympy/a/tests/test_x.py[1] \ntest_same ok\nsympy/b/tests/test_x.py[1] \ntest_same F\n';
    expect(parseSympyLog(log).get('test_same')).toBe('failed');
  });

  it('maps status text', () => {
    expect(sympyStatus('T')).toBe('error');
    expect(sympyStatus('Timeout T')).toBe('skipped');
    expect(sympyStatus('')).toBeUndefined();
  });
});
