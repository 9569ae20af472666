import { describe, expect, it } from 'vitest';
import { WinnowerError } from '../../src/errors.js';
import { PARSER_NAMES, detectParser, getParser } from '../../src/verify/detect.js';

describe('detectParser', () => {
  it('reads the runner from the test command first', () => {
    expect(detectParser({ instance_id: 'x', test_command: './tests/runtests.py --verbosity 2 a.tests' })).toBe('django');
    expect(detectParser({ instance_id: 'x', test_command: "PYTHONWARNINGS='ignore' bin/test -C --verbose sympy/core" })).toBe('sympy');
    expect(detectParser({ instance_id: 'x', test_command: 'tox --current-env -epy39 -v -- tests/t.py' })).toBe('pytest');
    expect(detectParser({ instance_id: 'x', test_command: 'python -m unittest -v tests' })).toBe('unittest');
    // pytest in the django repository is pytest
    expect(detectParser({ instance_id: 'django__django-1', test_command: 'python -m pytest tests' })).toBe('pytest');
  });

  it('falls back to the repository, then pytest', () => {
    expect(detectParser({ instance_id: 'django__django-11095' })).toBe('django');
    expect(detectParser({ instance_id: 'sympy__sympy-20590' })).toBe('sympy');
    expect(detectParser({ instance_id: 'custom', repo: { name: 'sympy/sympy' } })).toBe('sympy');
    expect(detectParser({ instance_id: 'psf__requests-2317' })).toBe('pytest');
    expect(detectParser({ instance_id: 'demo', test_command: 'make test' })).toBe('pytest');
  });

  it('honours an override and rejects unknown names, listing the valid ones', () => {
    expect(detectParser({ instance_id: 'demo', test_command: 'make test' }, 'exit-code')).toBe('exit-code');
    try {
      getParser('nose');
      expect.unreachable();
    } catch (error) {
      expect(WinnowerError.isInstance(error) && error.code).toBe('WNW_ERR_INPUT_INVALID');
      for (const name of PARSER_NAMES) expect((error as Error).message).toContain(name);
    }
    expect(() => detectParser({ instance_id: 'x' }, 'nose')).toThrow(/unknown test log parser/);
  });
});
