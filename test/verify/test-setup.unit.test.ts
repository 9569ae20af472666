/** The pure parts of src/verify/test-setup.ts: which files each procedure restores, and when they differ. */
import { describe, expect, it } from 'vitest';
import { SolveRequest } from '../../src/solve/solve-request.js';
import type { Task } from '../../src/types/task.js';
import { createdFiles, harnessRestoredFiles, procedureNote, winnowerRestoredFiles } from '../../src/verify/test-setup.js';

const modifies = (path: string, extra = '') =>
  [
    `diff --git a/${path} b/${path}`,
    'index 1111111..2222222 100644',
    `--- a/${path}`,
    `+++ b/${path}`,
    '@@ -1 +1,2 @@',
    ' x',
    `+y${extra}`,
    '',
  ].join('\n');
const creates = (path: string) =>
  [
    `diff --git a/${path} b/${path}`,
    'new file mode 100644',
    'index 0000000..2222222',
    '--- /dev/null',
    `+++ b/${path}`,
    '@@ -0,0 +1 @@',
    '+y',
    '',
  ].join('\n');

const task = (testPatch: string): Task => ({
  instance_id: 'i',
  problem_statement: 'p',
  repo: { path: '/tmp/r' },
  fail_to_pass: ['tests/test_new.py::test_a'],
  pass_to_pass: ['tests/test_listed.py::test_b'],
  test_patch: testPatch,
  meta: {},
});

describe('harnessRestoredFiles', () => {
  it("is SWE-bench's `--- a/(.*)`: files the test patch modifies, not those it creates", () => {
    expect(harnessRestoredFiles(modifies('tests/test_old.py') + creates('tests/test_new.py'))).toEqual(['tests/test_old.py']);
    expect(harnessRestoredFiles(undefined)).toEqual([]);
  });

  it('matches anywhere in a line, as the unanchored regex does (a content line naming one is restored too)', () => {
    expect(harnessRestoredFiles(modifies('tests/a.py', ' # --- a/nowhere.py'))).toEqual(['tests/a.py', 'nowhere.py']);
  });
});

describe('createdFiles', () => {
  it('names the files a patch creates', () => {
    expect(createdFiles(modifies('a.py') + creates('tests/test_new.py'))).toEqual(['tests/test_new.py']);
  });
});

describe('procedureNote', () => {
  const t = task(modifies('tests/test_old.py') + creates('tests/test_new.py'));

  it('winnower restores the test patch files and the listed tests’ files', () => {
    expect(winnowerRestoredFiles(t, 'pytest')).toEqual(['tests/test_old.py', 'tests/test_new.py', 'tests/test_listed.py']);
  });

  it('says nothing for a candidate that touches no such file, or only one the test patch modifies (both restore it)', () => {
    expect(procedureNote(t, modifies('src/x.py'), 'pytest', 'winnower')).toBeUndefined();
    expect(procedureNote(t, modifies('tests/test_old.py'), 'pytest', 'harness')).toBeUndefined();
  });

  it("names a file both create, and a listed test's file the test patch leaves alone, in each procedure's words", () => {
    const candidate = creates('tests/test_new.py') + modifies('tests/test_listed.py');
    const strict = procedureNote(t, candidate, 'pytest', 'winnower');
    expect(strict).toMatch(/creates tests\/test_new\.py, which the test patch creates too: winnower removed/);
    expect(strict).toMatch(/changes tests\/test_listed\.py, which define listed tests: winnower restored them/);
    const harness = procedureNote(t, candidate, 'pytest', 'harness');
    expect(harness).toMatch(/as in the SWE-bench harness, the file was not restored/);
    expect(harness).toMatch(/tests\/test_listed\.py, which define listed tests the test patch does not restore/);
  });
});

describe('SolveRequest verify.harness_compat', () => {
  const request = (verify: Record<string, unknown>) => ({ issue: 'add() subtracts', repo: { path: '/tmp/r' }, verify });

  it('is taken with a test command or test list, and absent when not given', () => {
    expect(SolveRequest.parse(request({ test_command: 'true', harness_compat: true })).verify.harness_compat).toBe(true);
    expect(SolveRequest.parse(request({ fail_to_pass: ['t'] })).verify.harness_compat).toBeUndefined();
  });

  it('is refused, naming it, where no tests of the task run (regression checks only, or verification off)', () => {
    for (const verify of [{ harness_compat: true }, { enabled: false, test_command: 'true', harness_compat: false }]) {
      const parsed = SolveRequest.safeParse(request(verify));
      expect(parsed.success, JSON.stringify(verify)).toBe(false);
      expect(parsed.error?.issues[0]?.path).toEqual(['verify', 'harness_compat']);
    }
  });
});
