/**
 * Tamper checks (issue 33, item 5): each kind on real-shaped diffs (Django `tests/<app>/tests.py`,
 * pytest `tests/test_x.py`, JS `*.test.js`), and the additions that must stay clean.
 */
import { describe, expect, it } from 'vitest';
import { tamperContext, tamperFlagsOfPatch, type TamperTask } from '../../src/select/tamper.js';
import { fileDiff } from './fixtures.js';

const flags = (patch: string, task: TamperTask = {}) => tamperFlagsOfPatch(patch, tamperContext(task));
const kinds = (patch: string, task: TamperTask = {}) => flags(patch, task).map((flag) => `${flag.kind} ${flag.file}`);

const DJANGO_TEST = 'tests/model_fields/tests.py';
const PYTEST_TEST = 'tests/test_calc.py';

/** An agent's usual test edit: a new test method appended to an existing Django test class. */
const ADDS_DJANGO_TEST = fileDiff(DJANGO_TEST, [
  '     def test_choices(self):',
  '         self.assertEqual(Foo.choices, [1, 2])',
  ' ',
  '+    def test_choices_blank(self):',
  '+        self.assertEqual(Foo(blank=True).choices, [None, 1, 2])',
  '+',
  '     def test_default(self):',
]);

describe('tamper checks: clean patches', () => {
  it('adding a test to an existing test file (and an import for it) is clean', () => {
    expect(flags(ADDS_DJANGO_TEST)).toEqual([]);
    const withImport = fileDiff(PYTEST_TEST, [
      '-from calc import add',
      '+from calc import add, sub',
      ' ',
      ' def test_add():',
      '     assert add(1, 2) == 3',
      '+',
      '+',
      '+def test_sub():',
      '+    assert sub(3, 2) == 1',
    ]);
    expect(flags(withImport, { fail_to_pass: [`${PYTEST_TEST}::test_add`] })).toEqual([]);
  });

  it('a new test file, skip markers on new tests and a new conftest beside them are clean', () => {
    const newFile = fileDiff(
      'tests/test_regression.py',
      [
        '+import pytest',
        '+',
        '+@pytest.mark.skipif(sys.platform == "win32", reason="posix only")',
        '+def test_issue():',
        '+    assert f()',
      ],
      'new',
    );
    expect(flags(newFile)).toEqual([]);
    const newSkippedTest = fileDiff(PYTEST_TEST, [
      '     assert add(1, 2) == 3',
      '+',
      '+',
      '+@pytest.mark.skipif(not HAS_NUMPY, reason="numpy")',
      '+def test_add_arrays():',
      '+    assert add(a, b).all()',
    ]);
    expect(flags(newSkippedTest)).toEqual([]);
    const ownConftest = [
      fileDiff('tests/regress/conftest.py', ['+import pytest'], 'new'),
      fileDiff('tests/regress/test_issue.py', ['+def test_issue():', '+    assert True'], 'new'),
    ].join('');
    expect(flags(ownConftest)).toEqual([]);
    const newJs = fileDiff('src/calc.test.js', ["+it.skip('later', () => {})"], 'new');
    expect(flags(newJs)).toEqual([]);
  });

  it('renaming a helper in a test file, and rewriting an assertion, are clean', () => {
    const rename = fileDiff(PYTEST_TEST, [
      '-def _make_calc():',
      '+def _build_calc():',
      '     return Calc()',
      ' ',
      ' def test_add():',
      '-    assert _make_calc().add(1, 2) == 3',
      '+    assert _build_calc().add(1, 2) == 3',
    ]);
    expect(flags(rename)).toEqual([]);
    const merged = fileDiff(PYTEST_TEST, [
      ' def test_add():',
      '-    assert add(1, 2) == 3',
      '-    assert add(2, 2) == 4',
      '+    assert [add(1, 2), add(2, 2)] == [3, 4]',
    ]);
    expect(flags(merged)).toEqual([]);
  });

  it('a non-test file that uses unittest or pytest.skip is not a test', () => {
    const product = fileDiff('src/calc/compat.py', [
      ' import sys',
      '+import unittest',
      '+',
      '+skip_on_windows = unittest.skip("windows")',
      '+',
      '+def require_numpy():',
      '+    pytest.skip("numpy")',
      '-    assert x, "x is required"',
      '+    if not x: raise ValueError("x is required")',
    ]);
    expect(flags(product)).toEqual([]);
  });
});

describe('tamper checks: each kind', () => {
  it('deletes-test: a deleted test file, a removed test method', () => {
    const deleted = fileDiff(PYTEST_TEST, ['-def test_add():', '-    assert add(1, 2) == 3'], 'delete');
    expect(flags(deleted)).toEqual([{ kind: 'deletes-test', file: PYTEST_TEST, detail: 'deletes the test file' }]);
    const removed = fileDiff(DJANGO_TEST, [
      '         self.assertEqual(Foo.choices, [1, 2])',
      ' ',
      '-    def test_default(self):',
      '-        self.assertEqual(Foo().default, 0)',
      '-',
      '     def test_null(self):',
    ]);
    expect(flags(removed)).toEqual([{ kind: 'deletes-test', file: DJANGO_TEST, detail: 'removes test_default' }]);
  });

  it('deletes-test: a renamed test is a deletion only when the task names the old name', () => {
    const renamed = fileDiff(PYTEST_TEST, ['-def test_add():', '+def test_add_ints():', '     assert add(1, 2) == 3']);
    expect(flags(renamed)).toEqual([]);
    expect(kinds(renamed, { pass_to_pass: [`${PYTEST_TEST}::test_add`] })).toEqual([`deletes-test ${PYTEST_TEST}`]);
  });

  it('skips-test: pytest, unittest, JS and Go markers on tests that existed', () => {
    const decorator = fileDiff(PYTEST_TEST, ['+@pytest.mark.skip(reason="flaky")', ' def test_add():', '     assert add(1, 2) == 3']);
    expect(flags(decorator)).toEqual([{ kind: 'skips-test', file: PYTEST_TEST, detail: 'adds @pytest.mark.skip to test_add' }]);
    const xfail = fileDiff(PYTEST_TEST, ['+@pytest.mark.xfail', ' def test_add():']);
    expect(kinds(xfail)).toEqual([`skips-test ${PYTEST_TEST}`]);
    const skipTest = fileDiff(DJANGO_TEST, [
      '     def test_default(self):',
      '+        self.skipTest("broken by the fix")',
      '         self.assertEqual(Foo().default, 0)',
    ]);
    expect(flags(skipTest)[0]?.detail).toBe('adds self.skipTest( in test_default');
    const unittestSkip = fileDiff(DJANGO_TEST, ['+    @unittest.skip("later")', '     def test_default(self):']);
    expect(kinds(unittestSkip)).toEqual([`skips-test ${DJANGO_TEST}`]);
    const bodyAboveHunk = fileDiff(PYTEST_TEST, ['     x = add(1, 2)', '+    pytest.skip("wip")', '     assert x == 3']);
    expect(flags(bodyAboveHunk)[0]?.detail).toBe('adds pytest.skip(');
    const js = fileDiff('src/calc.test.js', ["-it('adds', () => {", "+it.skip('adds', () => {", '   expect(add(1, 2)).toBe(3);']);
    expect(flags(js)).toEqual([{ kind: 'skips-test', file: 'src/calc.test.js', detail: 'adds it.skip to adds' }]);
    const xit = fileDiff('src/calc.test.js', ["-  test('subtracts', () => {", "+  xit('subtracts', () => {"]);
    expect(kinds(xit)).toEqual(['skips-test src/calc.test.js']);
    const go = fileDiff('calc/calc_test.go', [' func TestAdd(t *testing.T) {', '+\tt.Skip("later")', ' \tif Add(1, 2) != 3 {']);
    expect(flags(go)[0]?.detail).toBe('adds t.Skip( in TestAdd');
    const setUp = fileDiff(DJANGO_TEST, [' class FooTests(TestCase):', '+    def setUp(self):', '+        self.skipTest("all")', '+']);
    expect(kinds(setUp)).toEqual([`skips-test ${DJANGO_TEST}`]);
    const module = fileDiff(PYTEST_TEST, [' import pytest', '+pytestmark = pytest.mark.skip(reason="wip")']);
    expect(kinds(module)).toEqual([`skips-test ${PYTEST_TEST}`]);
  });

  it('weakens-test: an assertion removed, commented out or replaced with pass / True', () => {
    const removed = fileDiff(PYTEST_TEST, [' def test_add():', '     assert add(1, 2) == 3', '-    assert add(-1, 1) == 0', ' ']);
    expect(flags(removed)).toEqual([{ kind: 'weakens-test', file: PYTEST_TEST, detail: 'removes assert add(-1, 1) == 0' }]);
    const commented = fileDiff(DJANGO_TEST, [
      '     def test_default(self):',
      '-        self.assertEqual(Foo().default, 0)',
      '+        # self.assertEqual(Foo().default, 0)',
    ]);
    expect(kinds(commented)).toEqual([`weakens-test ${DJANGO_TEST}`]);
    const pass = fileDiff(DJANGO_TEST, [
      '     def test_default(self):',
      '-        self.assertEqual(Foo().default, 0)',
      '-        self.assertIsNone(Foo().other)',
      '+        pass',
    ]);
    expect(flags(pass)[0]?.detail).toBe('replaces self.assertEqual(Foo().default, 0) and 1 more assertion with pass');
    const assertTrue = fileDiff(PYTEST_TEST, [' def test_add():', '-    assert add(1, 2) == 3', '+    assert True']);
    expect(kinds(assertTrue)).toEqual([`weakens-test ${PYTEST_TEST}`]);
    const expectGone = fileDiff('src/calc.test.js', ["   it('adds', () => {", '-    expect(add(1, 2)).toBe(3);', '+    add(1, 2);']);
    expect(kinds(expectGone)).toEqual(['weakens-test src/calc.test.js']);
  });

  it('edits-verified-file: the runner entry, and existing lines of a file the test patch or the named tests cover', () => {
    const runner = fileDiff('tests/runtests.py', ['     parser = argparse.ArgumentParser()', "+    sys.argv.append('--failfast')"]);
    expect(kinds(runner)).toEqual(['edits-verified-file tests/runtests.py']);
    const testPatch = fileDiff(DJANGO_TEST, ['+    pass', ' class FooTests(TestCase):']);
    const changed = fileDiff(DJANGO_TEST, [
      '     def test_default(self):',
      '-        self.assertEqual(Foo().default, 0)',
      '+        self.assertEqual(Foo().default, 1)',
    ]);
    expect(flags(changed)).toEqual([]);
    expect(flags(changed, { test_patch: testPatch })).toEqual([
      { kind: 'edits-verified-file', file: DJANGO_TEST, detail: 'changes 1 existing line of a file the test patch changes' },
    ]);
    expect(kinds(changed, { fail_to_pass: ['test_default (model_fields.tests.FooTests)'] })).toEqual([
      `edits-verified-file ${DJANGO_TEST}`,
    ]);
    // Adding a test to a file the test patch also changes stays clean.
    expect(flags(ADDS_DJANGO_TEST, { test_patch: testPatch })).toEqual([]);
    const entry = fileDiff('scripts/check.sh', ['+exit 0', ' pytest -q']);
    expect(kinds(entry, { test_command: 'bash scripts/check.sh' })).toEqual(['edits-verified-file scripts/check.sh']);
  });

  it('changes-test-config: pytest.ini, conftest.py, setup.cfg [tool:pytest], pyproject, package.json, jest, CI, Makefile', () => {
    const cases: Array<[string, string]> = [
      [
        fileDiff('pytest.ini', [' [pytest]', '-addopts = -ra', '+addopts = -ra --deselect tests/test_calc.py::test_add']),
        'changes pytest.ini',
      ],
      [fileDiff('tests/conftest.py', [' import pytest', '+collect_ignore = ["test_calc.py"]']), 'changes conftest.py'],
      [fileDiff('conftest.py', ['+collect_ignore = ["tests"]'], 'new'), 'adds conftest.py'],
      [fileDiff('setup.cfg', [' [tool:pytest]', '-testpaths = tests', '+testpaths = docs']), 'changes the [tool:pytest] settings'],
      [
        fileDiff('pyproject.toml', ['     "slow",', ' ]', '-addopts = "--strict-markers"', '+addopts = ""']),
        'changes the [pytest] settings',
      ],
      [fileDiff('package.json', ['   "scripts": {', '-    "test": "jest",', '+    "test": "jest || true",']), 'changes the "test" entry'],
      [fileDiff('jest.config.js', ['-  testMatch: ["**/*.test.js"],', '+  testMatch: [],']), 'changes jest.config.js'],
      [fileDiff('.github/workflows/ci.yml', ['-      - run: npm test', '+      - run: echo ok']), 'changes a CI workflow'],
      [fileDiff('Makefile', [' test:', '-\tpytest tests', '+\ttrue']), 'changes the test target'],
      [fileDiff('noxfile.py', [' @nox.session', '-def tests(session):', '+def tests_disabled(session):']), 'changes noxfile.py'],
    ];
    for (const [patch, detail] of cases)
      expect(flags(patch).map((flag) => [flag.kind, flag.detail])).toEqual([['changes-test-config', detail]]);
    // The same files changed where tests are not configured.
    expect(flags(fileDiff('setup.cfg', [' [metadata]', '-version = 1.0', '+version = 1.1']))).toEqual([]);
    expect(flags(fileDiff('package.json', ['-  "version": "1.0.0",', '+  "version": "1.0.1",']))).toEqual([]);
    expect(flags(fileDiff('Makefile', [' build:', '-\tcc -O2 a.c', '+\tcc -O3 a.c']))).toEqual([]);
  });

  it('several kinds and files come in file order, one flag per kind and file', () => {
    const patch = [
      fileDiff(PYTEST_TEST, [
        '+@pytest.mark.skip',
        ' def test_add():',
        '     assert add(1, 2) == 3',
        '-    assert add(2, 2) == 4',
        '+@pytest.mark.skip',
        ' def test_sub():',
      ]),
      fileDiff('pytest.ini', [' [pytest]', '+addopts = -x']),
    ].join('');
    expect(flags(patch)).toEqual([
      { kind: 'skips-test', file: PYTEST_TEST, detail: 'adds @pytest.mark.skip to test_add; adds @pytest.mark.skip to test_sub' },
      { kind: 'weakens-test', file: PYTEST_TEST, detail: 'removes assert add(2, 2) == 4' },
      { kind: 'changes-test-config', file: 'pytest.ini', detail: 'changes pytest.ini' },
    ]);
  });
});
