/**
 * Putting the task's tests in place over an applied candidate patch, by one of two procedures
 * (docs/verify.md#two-procedures-for-the-test-files):
 *
 * - `winnower` (the default): every file the test patch touches and every file defining a listed
 *   test is restored to the base commit, one by one (removed when the base lacks it), then the
 *   test patch is applied; a test patch that does not apply is an `error`.
 * - `harness`: what the SWE-bench harness's eval.sh does. One `git checkout <base> <files>` of the
 *   files the test patch names as `--- a/<path>` (SWE-bench's DIFF_MODIFIED_FILE_REGEX, so files
 *   the test patch creates are not restored), under `set -uxo pipefail` without `-e`: if it fails,
 *   nothing is restored and the script goes on; then `git apply -v -` of the test patch, whose
 *   failure also goes on; then the tests run and are graded on what they print.
 *
 * The two differ for a candidate that creates a file the test patch creates (the harness's test
 * patch then does not apply and it grades the candidate's own tests), or that changes a file
 * defining a listed test which the test patch does not restore; `procedureNote` says so.
 */
import { throwIfAborted, toWinnowerError } from '../errors.js';
import type { Sandbox } from '../sandbox/types.js';
import type { Task } from '../types/task.js';
import { listedTestFiles, patchedFiles, shellWord } from './test-command.js';

export type TestProcedure = 'winnower' | 'harness';

/** Setup commands (git) get this long. */
const SETUP_TIMEOUT_MS = 120_000;

/** The outcome of putting the tests in place: `error` stops verification (winnower's procedure only). */
export interface TestSetup {
  error?: string;
  /** git's message when the test patch did not apply. */
  testPatchError?: string;
  /** What happened that the other procedure would not do. */
  notes: string[];
}

/** The files the harness restores: every `--- a/<path>` of the test patch, as its regex finds them (not anchored). */
export function harnessRestoredFiles(testPatch: string | undefined): string[] {
  if (!testPatch) return [];
  return [...new Set([...testPatch.matchAll(/--- a\/(.*)/g)].map((match) => match[1]!))];
}

/** The files a patch creates (`new file mode`, or an old side of /dev/null). */
export function createdFiles(patch: string | undefined): string[] {
  if (!patch) return [];
  const created = new Set<string>();
  for (const section of patch.split(/^(?=diff --git )/m)) {
    const path = /^\+\+\+ b\/(.+?)\t?$/m.exec(section)?.[1];
    if (path && (/^new file mode /m.test(section) || /^--- \/dev\/null$/m.test(section))) created.add(path);
  }
  return [...created];
}

/** The files winnower restores: those the test patch touches and those defining the listed tests. */
export function winnowerRestoredFiles(task: Task, parser: string): string[] {
  return [...new Set([...patchedFiles(task.test_patch), ...listedTestFiles(task, parser)])];
}

/**
 * How the two procedures would treat this candidate differently, in words; undefined when they
 * would not. A file the test patch modifies is restored by both, so only these differ: a file the
 * test patch creates that the candidate also wrote, and a file defining a listed test that the
 * candidate changed and the test patch does not name.
 */
export function procedureNote(task: Task, candidatePatch: string, parser: string, procedure: TestProcedure): string | undefined {
  const touched = new Set(patchedFiles(candidatePatch));
  const harness = new Set(harnessRestoredFiles(task.test_patch));
  const bothCreate = createdFiles(task.test_patch).filter((file) => touched.has(file));
  const onlyWinnower = winnowerRestoredFiles(task, parser).filter(
    (file) => touched.has(file) && !harness.has(file) && !bothCreate.includes(file),
  );
  const notes: string[] = [];
  if (bothCreate.length > 0) {
    notes.push(
      procedure === 'harness'
        ? `the candidate creates ${bothCreate.join(', ')}, which the test patch creates too: as in the SWE-bench harness, the file was not restored, so the test patch could not apply and the candidate's own version was tested (winnower's procedure removes it and applies the test patch)`
        : `the candidate creates ${bothCreate.join(', ')}, which the test patch creates too: winnower removed the candidate's version and applied the test patch; the SWE-bench harness restores only files that exist at the base commit, so its test patch would not apply and it would test the candidate's own version (harness_compat)`,
    );
  }
  if (onlyWinnower.length > 0) {
    notes.push(
      procedure === 'harness'
        ? `the candidate changes ${onlyWinnower.join(', ')}, which define listed tests the test patch does not restore: as in the SWE-bench harness, the candidate's version was tested (winnower's procedure restores them to the base commit)`
        : `the candidate changes ${onlyWinnower.join(', ')}, which define listed tests: winnower restored them to the base commit; the SWE-bench harness restores only the test patch's files and would test the candidate's version (harness_compat)`,
    );
  }
  return notes.length > 0 ? notes.join('; ') : undefined;
}

/** Puts the tests in place over the applied candidate patch by `procedure`. Cancellation throws. */
export async function setUpTests(
  sandbox: Sandbox,
  task: Task,
  parser: string,
  procedure: TestProcedure,
  signal: AbortSignal | undefined,
): Promise<TestSetup> {
  const testPatch = task.test_patch && task.test_patch.trim() !== '' ? task.test_patch : undefined;
  if (procedure === 'harness') {
    const notes: string[] = [];
    const files = harnessRestoredFiles(testPatch);
    // An empty list makes eval.sh's `git checkout <base>`: the commit the sandbox is at already, no file changes.
    if (files.length > 0) {
      const checkout = await sandbox.exec(`git checkout HEAD ${files.map(shellWord).join(' ')}`, {
        timeoutMs: SETUP_TIMEOUT_MS,
        ...(signal ? { signal } : {}),
      });
      throwIfAborted(signal);
      if (checkout.exitCode !== 0) {
        const why = (checkout.stderr || checkout.stdout).trim() || `exit ${checkout.exitCode ?? 'killed'}`;
        notes.push(`restoring the test files failed as a whole, as the harness's one git checkout does, and the tests ran anyway: ${why}`);
      }
    }
    if (!testPatch) return { notes };
    const applied = await applyTestPatch(sandbox, testPatch, signal);
    if (applied) notes.push(`the test patch did not apply and, as in the harness, the tests ran anyway: ${applied}`);
    return { notes, ...(applied ? { testPatchError: applied } : {}) };
  }
  const reset = await resetFiles(sandbox, winnowerRestoredFiles(task, parser), signal);
  if (reset) return { error: `restoring test files: ${reset}`, notes: [] };
  if (!testPatch) return { notes: [] };
  const applied = await applyTestPatch(sandbox, testPatch, signal);
  return applied ? { error: `test patch did not apply: ${applied}`, testPatchError: applied, notes: [] } : { notes: [] };
}

/** git's message when the test patch does not apply, else undefined. */
async function applyTestPatch(sandbox: Sandbox, testPatch: string, signal: AbortSignal | undefined): Promise<string | undefined> {
  try {
    await sandbox.applyPatch(testPatch, { signal });
    return undefined;
  } catch (error) {
    throwIfAborted(signal);
    const failure = toWinnowerError(error);
    if (failure.code === 'WNW_ERR_OP_ABORTED') throw failure;
    return failure.message;
  }
}

/**
 * Restores `files` to the base commit (HEAD) in the sandbox's git checkout: tracked ones are
 * checked out, ones absent from HEAD are removed. Returns an error message, or undefined. A
 * workdir that is not a git checkout is left alone.
 */
async function resetFiles(sandbox: Sandbox, files: string[], signal: AbortSignal | undefined): Promise<string | undefined> {
  if (files.length === 0) return undefined;
  const script = [
    'git rev-parse --verify -q HEAD >/dev/null 2>&1 || exit 0',
    `for f in ${files.map(shellWord).join(' ')}; do`,
    '  if git cat-file -e "HEAD:$f" 2>/dev/null; then git --literal-pathspecs checkout -q HEAD -- "$f" || exit 1; else rm -f -- "$f"; fi',
    'done',
  ].join('\n');
  const result = await sandbox.exec(script, { timeoutMs: SETUP_TIMEOUT_MS, ...(signal ? { signal } : {}) });
  throwIfAborted(signal);
  if (result.exitCode === 0) return undefined;
  return (result.stderr || result.stdout).trim() || `exit ${result.exitCode ?? 'killed'}`;
}
