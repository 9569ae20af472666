import { describe, expect, it } from 'vitest';
import { WinnowerError } from '../../src/errors.js';
import { type ParserName, detectParser } from '../../src/verify/detect.js';
import {
  buildTestCommand,
  djangoModuleOf,
  listedTestFiles,
  patchedFiles,
  shellWord,
  unittestTarget,
} from '../../src/verify/test-command.js';
import { describeRealData, subfolders } from '../support/shared-data.js';
import { OWN_LOGS, REAL_LOGS, listsOf, loadFixture } from './swebench-fixtures.js';

const task = (fields: { fail_to_pass?: string[]; pass_to_pass?: string[]; test_patch?: string }) => ({
  instance_id: 'x',
  fail_to_pass: fields.fail_to_pass ?? [],
  pass_to_pass: fields.pass_to_pass ?? [],
  test_patch: fields.test_patch,
});

/** The test targets of a command: test file paths and dotted Django module labels. */
const targets = (command: string): string[] =>
  command
    .split(/\s+/)
    .filter((word) => !word.startsWith('-') && !word.endsWith('runtests.py'))
    .filter((word) => /\.py$/.test(word) || /^[A-Za-z_]\w*(\.\w+)+$/.test(word));

/** The commands built from each report's ids and eval.sh's test patch target what the harness's own command targets. */
function expectHarnessTargets(root: string, parserOf: (name: string, testCommand: string) => ParserName): number {
  let checked = 0;
  for (const name of subfolders(root)) {
    const fixture = loadFixture(root, name);
    if (!fixture.report || fixture.testCommand.startsWith('tox ')) continue; // tox runs a command of its own
    const lists = listsOf(fixture.report);
    const command = buildTestCommand(
      task({ fail_to_pass: lists.failToPass, pass_to_pass: lists.passToPass, test_patch: fixture.testPatch }),
      parserOf(name, fixture.testCommand),
    );
    expect(targets(command).length, name).toBeGreaterThan(0);
    expect(new Set(targets(command)), name).toEqual(new Set(targets(fixture.testCommand)));
    checked += 1;
  }
  return checked;
}

describeRealData('buildTestCommand on real harness logs', 'swebench-logs', () => {
  it('runs the same files or modules as the SWE-bench harness for every log', () => {
    // winnower builds the command when a task has none: the parser comes from the repository.
    expect(expectHarnessTargets(REAL_LOGS, (name) => detectParser({ instance_id: name }))).toBe(22);
  });
});

describe('buildTestCommand', () => {
  it('runs the same files or modules as the harness-shaped logs (pytest, Django, SymPy, unittest)', () => {
    expect(expectHarnessTargets(OWN_LOGS, (name, testCommand) => detectParser({ instance_id: name, test_command: testCommand }))).toBe(10);
  });

  it('builds pytest commands from the files of the node ids', () => {
    const command = buildTestCommand(
      task({ fail_to_pass: ['tests/a.py::T::test_x[1-2]'], pass_to_pass: ['tests/a.py::test_y', 'tests/b c.py::test_z'] }),
      'pytest',
    );
    expect(command).toBe("python3 -m pytest -rA --tb=no -p no:cacheprovider tests/a.py 'tests/b c.py'");
  });

  it('builds Django commands from module labels, both id forms, plus the test patch modules', () => {
    const command = buildTestCommand(
      task({
        fail_to_pass: [
          'test_a (aggregation.tests.AggregateTestCase)',
          'test_b (template_tests.filter_tests.test_x.T.test_b)',
          'A docstring line',
        ],
        test_patch: 'diff --git a/tests/queries/test_q.py b/tests/queries/test_q.py\n',
      }),
      'django',
    );
    expect(command).toBe(
      './tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1 aggregation.tests template_tests.filter_tests.test_x queries.test_q',
    );
  });

  it('builds SymPy commands from the test patch files, else keyword names', () => {
    const patch = 'diff --git a/sympy/core/tests/test_basic.py b/sympy/core/tests/test_basic.py\n';
    expect(buildTestCommand(task({ fail_to_pass: ['test_immutable'], test_patch: patch }), 'sympy')).toBe(
      'bin/test -C --verbose sympy/core/tests/test_basic.py',
    );
    expect(buildTestCommand(task({ fail_to_pass: ['test_immutable', 'test_has'] }), 'sympy')).toBe(
      'bin/test -C --verbose -k test_immutable test_has',
    );
  });

  it('builds unittest commands from dotted ids', () => {
    expect(
      buildTestCommand(
        task({ fail_to_pass: ['test_a (pkg.tests.T)'], pass_to_pass: ['pkg.tests.T.test_b', 'test_a (pkg.tests.T.test_a)'] }),
        'unittest',
      ),
    ).toBe('python3 -m unittest -v pkg.tests.T.test_a pkg.tests.T.test_b');
  });

  it('refuses with WNW_ERR_VERIFY_NO_TESTS when nothing can be run', () => {
    for (const parser of ['pytest', 'django', 'sympy', 'unittest', 'exit-code'] as const) {
      try {
        buildTestCommand(task({}), parser);
        expect.unreachable();
      } catch (error) {
        expect(WinnowerError.isInstance(error) && error.code, parser).toBe('WNW_ERR_VERIFY_NO_TESTS');
      }
    }
  });
});

describe('test command helpers', () => {
  it('quotes shell words only when needed', () => {
    expect(shellWord('tests/a.py')).toBe('tests/a.py');
    expect(shellWord("it's")).toBe(`'it'\\''s'`);
    expect(shellWord('a;rm -rf /')).toBe("'a;rm -rf /'");
  });

  it('lists patched files', () => {
    expect(patchedFiles('diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\ndiff --git a/y.py b/y.py\n')).toEqual(['x.py', 'y.py']);
    expect(patchedFiles('--- a/z.py\n+++ b/z.py\n@@ -1 +1 @@\n')).toEqual(['z.py']);
    expect(patchedFiles(undefined)).toEqual([]);
  });

  it('maps ids to Django modules and unittest targets', () => {
    expect(djangoModuleOf('test_a (a.b.C)')).toBe('a.b');
    expect(djangoModuleOf('test_a (a.b.C.test_a)')).toBe('a.b');
    expect(djangoModuleOf('Free text')).toBeUndefined();
    expect(unittestTarget('test_a (a.b.C)')).toBe('a.b.C.test_a');
  });
});

describe('listedTestFiles', () => {
  it('names the files that define the listed tests, relative paths only', () => {
    const task = {
      fail_to_pass: ['tests/test_a.py::test_x[1 2]', 'test_y (pkg.tests.test_b.C)', 'test_TR5'],
      pass_to_pass: ['tests/test_a.py::test_z', 'pkg.tests.test_b.C.test_w', '../up.py::t', '/etc/passwd::t', 'test_q (a.b.C.test_q)'],
    };
    expect(listedTestFiles(task, 'pytest')).toEqual(['tests/test_a.py', 'pkg/tests/test_b.py', 'a/b.py']);
    expect(listedTestFiles({ fail_to_pass: ['test_x (aggregation.tests.AggTests)'], pass_to_pass: [] }, 'django')).toEqual([
      'tests/aggregation/tests.py',
    ]);
  });
});
