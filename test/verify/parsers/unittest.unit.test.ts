import { describe, expect, it } from 'vitest';
import { lookupTest } from '../../../src/verify/grade.js';
import { parseUnittestLog, splitUnittestId, unittestStatus } from '../../../src/verify/parsers/unittest.js';

/**
 * A synthetic `python3.11 -m unittest -v` log, shaped like a real one captured from a small suite
 * (docstring test, stderr noise, subtests, skip, expected failure, unexpected success, a failing
 * setUpClass).
 */
const UNITTEST_311 = `test_doc (pkg.test_m.A.test_doc)
Docstring line here. ... ok
test_err (pkg.test_m.A.test_err) ... ERROR
test_fail (pkg.test_m.A.test_fail) ... FAIL
test_noise (pkg.test_m.A.test_noise) ... noise on stderr
ok
test_ok (pkg.test_m.A.test_ok) ... ok
test_skip (pkg.test_m.A.test_skip) ... skipped 'why not'
test_sub (pkg.test_m.A.test_sub) ... 
  test_sub (pkg.test_m.A.test_sub) (i=1) ... FAIL
test_xf (pkg.test_m.A.test_xf) ... expected failure
test_xp (pkg.test_m.A.test_xp) ... unexpected success
ERROR

======================================================================
ERROR: test_err (pkg.test_m.A.test_err)
----------------------------------------------------------------------
Traceback (most recent call last):
  File "/tmp/ut/pkg/test_m.py", line 8, in test_err
ValueError: x

======================================================================
ERROR: setUpClass (pkg.test_m.B)
----------------------------------------------------------------------
RuntimeError: boom

======================================================================
FAIL: test_sub (pkg.test_m.A.test_sub) (i=1)
----------------------------------------------------------------------
AssertionError: 1 != 0

----------------------------------------------------------------------
Ran 9 tests in 0.001s

FAILED (failures=2, errors=2, skipped=1, expected failures=1, unexpected successes=1)
`;

describe('parseUnittestLog', () => {
  const tests = parseUnittestLog(UNITTEST_311);
  /** What grading reads for a listed id (any spelling of the test). */
  const status = (id: string) => lookupTest(tests, id);

  it('reads every status of Python 3.11 verbose output', () => {
    // keyed as printed
    expect(tests.get('test_ok (pkg.test_m.A.test_ok)')).toBe('passed');
    expect(tests.get('test_err (pkg.test_m.A.test_err)')).toBe('error');
    expect(tests.get('test_fail (pkg.test_m.A.test_fail)')).toBe('failed');
    expect(tests.get('test_skip (pkg.test_m.A.test_skip)')).toBe('skipped');
    expect(tests.get('test_xf (pkg.test_m.A.test_xf)')).toBe('xfail');
    expect(tests.get('test_xp (pkg.test_m.A.test_xp)')).toBe('xpass');
    expect(tests.get('test_sub (pkg.test_m.A.test_sub)')).toBe('failed');
    expect(tests.get('setUpClass (pkg.test_m.B)')).toBe('error');
    // and the test of a class whose setUpClass failed is graded error
    expect(status('test_never (pkg.test_m.B)')).toBe('error');
  });

  it('matches the short, long and dotted spellings of an id', () => {
    expect(status('test_ok (pkg.test_m.A)')).toBe('passed');
    expect(status('test_ok (pkg.test_m.A.test_ok)')).toBe('passed');
    expect(status('pkg.test_m.A.test_ok')).toBe('passed');
    expect(status('pkg.test_m.A.test_nope')).toBe('missing');
  });

  it('gives a status split by stderr noise to its test', () => {
    expect(status('test_noise (pkg.test_m.A)')).toBe('passed');
  });

  it('keys a docstring test by its name and by its docstring line', () => {
    expect(status('test_doc (pkg.test_m.A)')).toBe('passed');
    expect(tests.get('Docstring line here.')).toBe('passed');
  });

  it('reads the pre-3.11 form', () => {
    const old = parseUnittestLog('test_a (tests.test_x.T) ... ok\ntest_b (tests.test_x.T) ... FAIL\n');
    expect(old.get('test_a (tests.test_x.T)')).toBe('passed');
    expect(lookupTest(old, 'test_a (tests.test_x.T.test_a)')).toBe('passed');
    expect(lookupTest(old, 'tests.test_x.T.test_b')).toBe('failed');
  });
});

describe('unittest helpers', () => {
  it('maps status words', () => {
    expect(unittestStatus("skipped 'no db'")).toBe('skipped');
    expect(unittestStatus('Testing against Django installed in /x')).toBeUndefined();
  });

  it('splits ids in both forms', () => {
    expect(splitUnittestId('test_a (m.C)')).toEqual({ name: 'test_a', classPath: 'm.C' });
    expect(splitUnittestId('test_a (m.C.test_a)')).toEqual({ name: 'test_a', classPath: 'm.C' });
    expect(splitUnittestId('A docstring line')).toBeUndefined();
  });
});
