/**
 * The two procedures for putting the tests in place (docs/verify.md#two-procedures-for-the-test-files)
 * on a fixture where they differ: the test patch creates tests/test_new.py, and the candidate
 * creates the same file with a test of its own that passes against its wrong fix. winnower's
 * procedure removes the candidate's file and applies the test patch (unresolved); the SWE-bench
 * harness's restores only files that exist at the base commit, its test patch does not apply, and
 * it grades the candidate's own test (resolved). Both say why in `procedure_note`.
 * Runs on FakeSandbox (git clones in temp dirs, a test double) and on the real local provider.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalProvider } from '../../src/sandbox/providers/local/provider.js';
import type { Sandbox } from '../../src/sandbox/types.js';
import type { Task } from '../../src/types/task.js';
import { verifyCandidate } from '../../src/verify/verify-candidate.js';
import { commitRepo, stagedDiff } from '../support/git-fixture.js';
import { FakeSandbox } from './fake-sandbox.js';

const testOf = (body: string) =>
  `import unittest\n\nfrom calc.ops import add\n\n\nclass NewTest(unittest.TestCase):\n    def test_add(self):\n        ${body}\n`;

interface Fixture {
  path: string;
  baseCommit: string;
  task: Task;
  /** A wrong fix that also creates tests/test_new.py with a test that passes. */
  ownTests: string;
  /** The right fix, touching no test file. */
  good: string;
  /** The right fix, and an edit to tests/test_old.py (defines a listed test; the test patch does not touch it). */
  editsListed: string;
  cleanup(): void;
}

function makeFixture(): Fixture {
  const root = mkdtempSync(join(tmpdir(), 'winnower-harness-compat-'));
  const path = join(root, 'calc');
  mkdirSync(path);
  const oldTest =
    'import unittest\n\nfrom calc.ops import add\n\n\nclass OldTest(unittest.TestCase):\n    def test_zero(self):\n        self.assertEqual(add(0, 0), 0)\n';
  const baseCommit = commitRepo(
    path,
    {
      'calc/__init__.py': '',
      'calc/ops.py': 'def add(a, b):\n    return a - b\n',
      'tests/__init__.py': '',
      'tests/test_old.py': oldTest,
    },
    'base',
  );
  let n = 0;
  const diffOf = (files: Record<string, string>): string => stagedDiff(path, join(root, `work-${++n}`), files);
  return {
    path,
    baseCommit,
    task: {
      instance_id: 'demo__calc-new-test',
      problem_statement: 'add() subtracts',
      repo: { path, base_commit: baseCommit },
      fail_to_pass: ['test_add (tests.test_new.NewTest)'],
      pass_to_pass: ['test_zero (tests.test_old.OldTest)'],
      test_patch: diffOf({ 'tests/test_new.py': testOf('self.assertEqual(add(2, 3), 5)') }),
      meta: {},
    },
    ownTests: diffOf({ 'calc/ops.py': 'def add(a, b):\n    return 0\n', 'tests/test_new.py': testOf('self.assertTrue(True)') }),
    good: diffOf({ 'calc/ops.py': 'def add(a, b):\n    return a + b\n' }),
    editsListed: diffOf({
      'calc/ops.py': 'def add(a, b):\n    return a + b\n',
      'tests/test_old.py': oldTest.replace('add(0, 0), 0', 'add(0, 0), 1'),
    }),
    cleanup: () => rmSync(root, { recursive: true, force: true }),
  };
}

let fixture: Fixture;
beforeAll(() => {
  fixture = makeFixture();
});
afterAll(() => fixture.cleanup());

const bwrap = ['/usr/bin/bwrap', '/usr/local/bin/bwrap', '/bin/bwrap'].some((path) => existsSync(path));
const local = bwrap ? createLocalProvider({ logger: { info: () => undefined, warn: () => undefined } }) : undefined;
afterAll(async () => {
  await local?.close();
});

const sandboxes: Array<[string, () => Promise<Sandbox>]> = [['FakeSandbox', async () => new FakeSandbox(fixture.path, fixture.baseCommit)]];
if (local) sandboxes.push(['the local provider', () => local.create({ repo: fixture.task.repo })]);

async function verify(make: () => Promise<Sandbox>, patch: string, harnessCompat: boolean) {
  const sandbox = await make();
  try {
    return await verifyCandidate(sandbox, fixture.task, { id: 'c', patch }, { parser: 'unittest', harnessCompat, testTimeoutMs: 60_000 });
  } finally {
    await sandbox.close();
  }
}

describe.each(sandboxes)('harness_compat on %s', (_name, make) => {
  it("a candidate that creates the test patch's new file: winnower tests the test patch, the harness the candidate's own test", async () => {
    const strict = await verify(make, fixture.ownTests, false);
    expect(strict, JSON.stringify(strict)).toMatchObject({ status: 'unresolved', applied: true, fail_to_pass: { passed: 0, failed: 1 } });
    expect(strict.procedure).toBeUndefined();
    expect(strict.apply_error).toBeUndefined();
    expect(strict.procedure_note).toMatch(/creates tests\/test_new\.py, which the test patch creates too: winnower removed/);

    const harness = await verify(make, fixture.ownTests, true);
    expect(harness, JSON.stringify(harness)).toMatchObject({
      status: 'resolved',
      procedure: 'harness',
      applied: true,
      fail_to_pass: { passed: 1, failed: 0, missing: 0 },
      pass_to_pass: { passed: 1, failed: 0, missing: 0 },
    });
    expect(harness.apply_error).toMatch(/tests\/test_new\.py/);
    expect(harness.procedure_note).toMatch(/the test patch did not apply and, as in the harness, the tests ran anyway/);
    expect(harness.procedure_note).toMatch(/as in the SWE-bench harness, the file was not restored/);
  }, 120_000);

  it('a candidate that edits a file defining a listed test, which the test patch does not touch', async () => {
    const strict = await verify(make, fixture.editsListed, false);
    expect(strict, JSON.stringify(strict)).toMatchObject({ status: 'resolved', pass_to_pass: { passed: 1, failed: 0 } });
    expect(strict.procedure_note).toMatch(/changes tests\/test_old\.py, which define listed tests: winnower restored them/);
    const harness = await verify(make, fixture.editsListed, true);
    expect(harness, JSON.stringify(harness)).toMatchObject({
      status: 'unresolved',
      procedure: 'harness',
      pass_to_pass: { passed: 0, failed: 1 },
    });
    expect(harness.procedure_note).toMatch(/as in the SWE-bench harness, the candidate's version was tested/);
  }, 120_000);

  it('a candidate touching no test file: both procedures agree and say nothing', async () => {
    for (const harnessCompat of [false, true]) {
      const result = await verify(make, fixture.good, harnessCompat);
      expect(result, JSON.stringify(result)).toMatchObject({
        status: 'resolved',
        fail_to_pass: { passed: 1 },
        pass_to_pass: { passed: 1 },
      });
      expect(result.procedure_note).toBeUndefined();
      expect(result.procedure).toBe(harnessCompat ? 'harness' : undefined);
    }
  }, 120_000);
});
