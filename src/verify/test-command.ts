/**
 * Builds the command that runs a task's FAIL_TO_PASS / PASS_TO_PASS tests with the repository's
 * own runner when the task gives test ids but no `test_command`. Each command runs a superset of
 * the listed tests (whole files or modules, as the SWE-bench harness does) in the runner's
 * most explicit output mode, and grading then reads the outcome of each listed id:
 *
 * - pytest: `python3 -m pytest -rA --tb=no -p no:cacheprovider <files>`, the files holding the
 *   listed node ids (deduplicated). Files rather than node ids, because one id pytest cannot find
 *   (a renamed parameter, an id truncated at a space in SWE-bench lists) would abort the whole run.
 * - Django: `./tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1 <modules>`, the
 *   test modules of the listed `test_x (module.Class)` ids, plus the modules the test patch touches
 *   (which covers ids that are docstring lines).
 * - SymPy: `bin/test -C --verbose <files>` with the test files the test patch touches; without a
 *   test patch, `bin/test -C --verbose -k <names>` (keyword match on the bare names).
 * - unittest: `python3 -m unittest -v <module.Class.test_x ...>`.
 * - exit-code: needs `task.test_command`; nothing can be built.
 */
import { wnwError } from '../errors.js';
import type { Task } from '../types/task.js';
import type { ParserName } from './detect.js';
import { splitUnittestId } from './parsers/unittest.js';

/** Quotes a word for POSIX shells when it holds anything beyond a safe set. */
export function shellWord(value: string): string {
  return /^[\w@%+=:,./-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;
}

/** The paths a unified diff touches (new side; the old side for deletions), in order. */
export function patchedFiles(patch: string | undefined): string[] {
  if (!patch) return [];
  const files = new Set<string>();
  for (const match of patch.matchAll(/^diff --git a\/(\S+) b\/(\S+)$/gm)) files.add(match[2] === '/dev/null' ? match[1]! : match[2]!);
  if (files.size === 0) {
    for (const match of patch.matchAll(/^\+\+\+ (?:b\/)?(\S+)/gm)) if (match[1] !== '/dev/null') files.add(match[1]!);
  }
  return [...files];
}

function unique<T>(values: Iterable<T>): T[] {
  return [...new Set(values)];
}

function listedIds(task: Pick<Task, 'fail_to_pass' | 'pass_to_pass'>): string[] {
  return unique([...task.fail_to_pass, ...task.pass_to_pass]);
}

/** Django test label (module) for a listed id; undefined for docstring-line ids. */
export function djangoModuleOf(id: string): string | undefined {
  const parts = splitUnittestId(id);
  if (!parts) return undefined;
  const dot = parts.classPath.lastIndexOf('.');
  return dot > 0 ? parts.classPath.slice(0, dot) : undefined;
}

/** `tests/aggregation/tests.py` → `aggregation.tests` (Django's runtests.py labels). */
export function djangoModuleOfFile(path: string): string | undefined {
  const match = /^tests\/(.+)\.py$/.exec(path);
  if (!match || match[1]!.endsWith('__init__')) return undefined;
  return match[1]!.replace(/\//g, '.');
}

/** `test_x (a.b.Class)` → `a.b.Class.test_x`; dotted ids pass through. */
export function unittestTarget(id: string): string {
  const parts = splitUnittestId(id);
  return parts ? `${parts.classPath}.${parts.name}` : id.trim();
}

/**
 * The files that define the listed tests, where an id names its file: the path of a pytest node id
 * (`path::test`), the module of a unittest id (`test_x (pkg.mod.Class)` → `pkg/mod.py`; Django's
 * runner imports from `tests/`, so `tests/pkg/mod.py`). Only relative paths without `..`.
 * SymPy's bare names and dotted ids name no file.
 */
export function listedTestFiles(task: Pick<Task, 'fail_to_pass' | 'pass_to_pass'>, parser: string): string[] {
  const files: string[] = [];
  for (const id of listedIds(task)) {
    const separator = id.indexOf('::');
    if (separator > 0) {
      files.push(id.slice(0, separator).trim());
      continue;
    }
    const parts = splitUnittestId(id);
    const dot = parts ? parts.classPath.lastIndexOf('.') : -1;
    if (!parts || dot <= 0) continue;
    const path = `${parts.classPath.slice(0, dot).replace(/\./g, '/')}.py`;
    files.push(parser === 'django' ? `tests/${path}` : path);
  }
  return unique(files.filter((file) => file !== '' && !file.startsWith('/') && !file.startsWith('-') && !file.split('/').includes('..')));
}

function noTests(task: Pick<Task, 'instance_id'>, why: string): never {
  throw wnwError('WNW_ERR_VERIFY_NO_TESTS', `cannot build a test command for ${task.instance_id}: ${why}`, {
    details: { instance_id: task.instance_id },
  });
}

/** The shell command that runs the task's listed tests with `parser`'s runner. */
export function buildTestCommand(
  task: Pick<Task, 'instance_id' | 'fail_to_pass' | 'pass_to_pass' | 'test_patch'>,
  parser: ParserName,
): string {
  const ids = listedIds(task);
  const patchFiles = patchedFiles(task.test_patch).filter((file) => file.endsWith('.py'));
  switch (parser) {
    case 'pytest': {
      const files = unique(ids.map((id) => id.split('::')[0]!.trim()).filter((file) => file !== ''));
      if (files.length === 0) noTests(task, 'no FAIL_TO_PASS or PASS_TO_PASS node ids');
      return ['python3 -m pytest -rA --tb=no -p no:cacheprovider', ...files.map(shellWord)].join(' ');
    }
    case 'django': {
      const modules = unique(
        [...ids.map(djangoModuleOf), ...patchFiles.map(djangoModuleOfFile)].filter((module): module is string => module !== undefined),
      );
      if (modules.length === 0) noTests(task, 'no test module can be derived from the listed ids or the test patch');
      return ['./tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1', ...modules.map(shellWord)].join(' ');
    }
    case 'sympy': {
      const files = patchFiles.filter((file) => /(^|\/)tests\/test_[^/]*\.py$/.test(file));
      if (files.length > 0) return ['bin/test -C --verbose', ...files.map(shellWord)].join(' ');
      if (ids.length === 0) noTests(task, 'no listed test names and no test files in the test patch');
      return ['bin/test -C --verbose -k', ...ids.map(shellWord)].join(' ');
    }
    case 'unittest': {
      if (ids.length === 0) noTests(task, 'no FAIL_TO_PASS or PASS_TO_PASS test ids');
      return ['python3 -m unittest -v', ...unique(ids.map(unittestTarget)).map(shellWord)].join(' ');
    }
    case 'exit-code':
      return noTests(task, 'the exit-code parser needs task.test_command');
  }
}
