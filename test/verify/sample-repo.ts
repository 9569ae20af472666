/**
 * A tiny Python repository with a real bug and a unittest suite, built in a temp directory for the
 * verification tests, with candidate patches made by editing a copy and taking `git diff`.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Task } from '../../src/types/task.js';
import { commitRepo, stagedDiff } from '../support/git-fixture.js';

export const HAS_PYTHON = spawnSync('python3', ['--version']).status === 0;

const FILES: Record<string, string> = {
  'calc/__init__.py': '',
  'calc/ops.py': 'def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n',
  'tests/__init__.py': '',
  'tests/test_ops.py': [
    'import unittest',
    '',
    'from calc.ops import add, mul',
    '',
    '',
    'class OpsTest(unittest.TestCase):',
    '    def test_mul(self):',
    '        self.assertEqual(mul(3, 4), 12)',
    '',
  ].join('\n'),
};

export interface SampleRepo {
  path: string;
  baseCommit: string;
  /** The task: F2P `test_add` (added by the test patch), P2P `test_mul`. */
  task: Task;
  patches: {
    /** Fixes add(). */
    good: string;
    /** Changes add() but still wrong. */
    wrong: string;
    /** Fixes add() and breaks mul(). */
    breaking: string;
    /** Fixes add() and also edits the test file the test patch touches. */
    touchesTests: string;
    /** Context that is not in the file. */
    nonApplying: string;
  };
  cleanup(): void;
}

/** Creates the repository and the patches (a git clone per patch, then `git diff`). */
export function makeSampleRepo(): SampleRepo {
  const root = mkdtempSync(join(tmpdir(), 'winnower-sample-'));
  const path = join(root, 'calc');
  mkdirSync(path);
  const baseCommit = commitRepo(path, FILES, 'calc with a bug in add');

  let n = 0;
  const diffOf = (files: Record<string, string>): string => stagedDiff(path, join(root, `work-${++n}`), files);
  const ops = (add: string, mul = 'a * b') => `def add(a, b):\n    return ${add}\n\n\ndef mul(a, b):\n    return ${mul}\n`;
  const testFile = `${FILES['tests/test_ops.py']}\n    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n`;

  const testPatch = diffOf({ 'tests/test_ops.py': testFile });
  const task: Task = {
    instance_id: 'demo__calc-1',
    problem_statement: 'add() subtracts',
    repo: { path, base_commit: baseCommit, name: 'demo/calc' },
    fail_to_pass: ['test_add (tests.test_ops.OpsTest)'],
    pass_to_pass: ['test_mul (tests.test_ops.OpsTest)'],
    test_patch: testPatch,
    meta: {},
  };
  return {
    path,
    baseCommit,
    task,
    patches: {
      good: diffOf({ 'calc/ops.py': ops('a + b') }),
      wrong: diffOf({ 'calc/ops.py': ops('a + b + 1') }),
      breaking: diffOf({ 'calc/ops.py': ops('a + b', 'a + b') }),
      touchesTests: diffOf({
        'calc/ops.py': ops('a + b'),
        'tests/test_ops.py': `${FILES['tests/test_ops.py']}\n    def test_add(self):\n        pass\n`,
      }),
      nonApplying: [
        'diff --git a/calc/ops.py b/calc/ops.py',
        '--- a/calc/ops.py',
        '+++ b/calc/ops.py',
        '@@ -1,2 +1,2 @@',
        ' def add(x, y):',
        '-    return x * y',
        '+    return x + y',
        '',
      ].join('\n'),
    },
    cleanup: () => rmSync(root, { recursive: true, force: true }),
  };
}
