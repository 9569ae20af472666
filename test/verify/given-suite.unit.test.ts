import { describe, expect, it } from 'vitest';
import { givenSuite } from '../../src/verify/given-suite.js';

const files = ['tests/utils_tests/tests.py', 'tests/test_ops.py', 'sympy/core/tests/test_add.py'];

describe('a given suite command', () => {
  it('narrows pytest to the related files, dropping its own paths and keeping its options', () => {
    const suite = givenSuite('python3 -m pytest -rA -p no:cacheprovider tests', files);
    expect(suite).toMatchObject({ command: 'python3 -m pytest -rA -p no:cacheprovider tests', parser: 'pytest' });
    expect(suite.forFiles?.(['tests/test_ops.py'])).toBe('python3 -m pytest -rA -p no:cacheprovider tests/test_ops.py');
  });

  it('narrows Django runtests.py to module labels and SymPy bin/test to files', () => {
    const django = givenSuite('python3 tests/runtests.py --settings test_sqlite --parallel 1 admin_views', files);
    expect(django.parser).toBe('django');
    expect(django.forFiles?.(['tests/utils_tests/tests.py'])).toBe(
      'python3 tests/runtests.py --settings test_sqlite --parallel 1 utils_tests.tests',
    );
    const sympy = givenSuite('bin/test -C sympy/core', files);
    expect(sympy.parser).toBe('sympy');
    expect(sympy.forFiles?.(['sympy/core/tests/test_add.py'])).toBe('bin/test -C sympy/core/tests/test_add.py');
  });

  it('narrows unittest discovery to the modules of the files', () => {
    const suite = givenSuite('PYTHONPATH=src python3 -m unittest discover -s tests -t .', files);
    expect(suite.parser).toBe('unittest');
    expect(suite.forFiles?.(['tests/test_ops.py'])).toBe('PYTHONPATH=src python3 -m unittest -v tests.test_ops');
  });

  it('cannot narrow a runner that selects no files, or a command that is more than one plain command', () => {
    for (const command of ['make check', 'go test ./...', 'sh tests/check_add.sh', 'cd tests && python3 -m pytest', '$PY -m pytest'])
      expect(givenSuite(command, files).forFiles, command).toBeUndefined();
  });

  it('takes verify.parser when it is given', () => {
    expect(givenSuite('make check', files, 'exit-code').parser).toBe('exit-code');
  });
});
