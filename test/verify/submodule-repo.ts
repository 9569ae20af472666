/**
 * A tiny Python repository with a real submodule (`vendor/lib`, a `git submodule add` of a second
 * local repository), built in a temp directory, and candidate patches taken with `git diff` in a
 * clone whose submodule is checked out: the fix plus the submodule's own `-dirty` or moved-commit
 * section, as agents' patches carry them.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Task } from '../../src/types/task.js';
import { commitRepo, git, writeFiles } from '../support/git-fixture.js';

export interface SubmoduleRepo {
  path: string;
  /** F2P `test_add` (in the repository already), no test patch. */
  task: Task;
  patches: {
    /** Fixes add(); the submodule's files were edited too (`Subproject commit <sha>-dirty`). */
    fixWithDirtySubmodule: string;
    /** Fixes add(); the submodule was moved to a new commit of its own. */
    fixWithMovedSubmodule: string;
  };
  cleanup(): void;
}

export function makeSubmoduleRepo(): SubmoduleRepo {
  const root = mkdtempSync(join(tmpdir(), 'winnower-submodule-'));
  const lib = join(root, 'lib');
  const path = join(root, 'calc');
  mkdirSync(lib);
  mkdirSync(path);
  commitRepo(lib, { 'helpers.py': 'VERSION = 1\n' }, 'lib');

  git(path, 'init', '-q', '-b', 'main');
  writeFiles(path, {
    'calc/__init__.py': '',
    'calc/ops.py': 'def add(a, b):\n    return a - b\n',
    'tests/__init__.py': '',
    'tests/test_ops.py':
      'import unittest\n\nfrom calc.ops import add\n\n\nclass OpsTest(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n',
  });
  git(path, 'submodule', 'add', '-q', lib, 'vendor/lib');
  git(path, 'add', '-A');
  git(path, 'commit', '-q', '-m', 'calc with a bug in add, and a submodule');
  const baseCommit = git(path, 'rev-parse', 'HEAD').trim();

  let n = 0;
  const diffOf = (edit: (work: string) => void): string => {
    const work = join(root, `work-${++n}`);
    git(root, 'clone', '-q', '--recurse-submodules', path, work);
    writeFiles(work, { 'calc/ops.py': 'def add(a, b):\n    return a + b\n' });
    edit(join(work, 'vendor/lib'));
    return git(work, 'diff');
  };
  return {
    path,
    task: {
      instance_id: 'demo__calc-submodule',
      problem_statement: 'add() subtracts',
      repo: { path, base_commit: baseCommit, name: 'demo/calc' },
      test_command: 'python3 -m unittest -v tests.test_ops',
      fail_to_pass: ['test_add (tests.test_ops.OpsTest)'],
      pass_to_pass: [],
      meta: {},
    },
    patches: {
      fixWithDirtySubmodule: diffOf((sub) => writeFiles(sub, { 'helpers.py': 'VERSION = 2\n' })),
      fixWithMovedSubmodule: diffOf((sub) => {
        writeFiles(sub, { 'helpers.py': 'VERSION = 3\n' });
        git(sub, 'commit', '-q', '-am', 'bump');
      }),
    },
    cleanup: () => rmSync(root, { recursive: true, force: true }),
  };
}
