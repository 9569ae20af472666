import { describe, expect, it } from 'vitest';
import { lookupTest } from '../../../src/verify/grade.js';
import { parseDjangoLog } from '../../../src/verify/parsers/django.js';

describe('parseDjangoLog', () => {
  it('finds a status that interleaved runner stderr pushed to a later line', () => {
    const log = [
      'test_a (app.tests.T) ... ok',
      'test_b (app.tests.T) ... Testing against Django installed in /testbed/django',
      'Importing application app',
      'Operations to perform:',
      '  Applying admin.0001_initial... OK',
      'System check identified no issues (0 silenced).',
      'ok',
      'test_c (app.tests.T) ... skipped "Database doesn\'t support feature(s): x"',
      'test_d (app.tests.T) ... FAIL',
      '',
      '======================================================================',
      'FAIL: test_d (app.tests.T)',
      'Ran 4 tests in 0.1s',
      'FAILED (failures=1)',
    ].join('\n');
    const tests = parseDjangoLog(log);
    expect(tests.get('test_a (app.tests.T)')).toBe('passed');
    expect(tests.get('test_b (app.tests.T)')).toBe('passed');
    expect(tests.get('test_c (app.tests.T)')).toBe('skipped');
    expect(tests.get('test_d (app.tests.T)')).toBe('failed');
    // the migration line's `... OK` is not a test
    expect([...tests.keys()].some((id) => id.includes('Applying'))).toBe(false);
  });

  it('reads Django 4.2+ docstring tests under the name and the docstring line', () => {
    const log = [
      'test_e (app.tests.T.test_e)',
      'Regression test for #123: something holds. ... ok',
      'test_f (app.tests.T.test_f) ... ERROR',
    ].join('\n');
    const tests = parseDjangoLog(log);
    expect(tests.get('test_e (app.tests.T.test_e)')).toBe('passed');
    expect(tests.get('Regression test for #123: something holds.')).toBe('passed');
    expect(lookupTest(tests, 'test_e (app.tests.T)')).toBe('passed');
    expect(lookupTest(tests, 'test_f (app.tests.T)')).toBe('error');
  });
});
