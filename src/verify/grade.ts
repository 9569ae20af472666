/**
 * Grading: from parsed outcomes and the task's FAIL_TO_PASS / PASS_TO_PASS lists to tallies and a
 * verdict. A listed test counts as passed when its outcome is `passed` or `xfail` (as in the
 * SWE-bench harness), as failed when it ran with any other outcome (failed, error, skipped,
 * xpass), and as missing when the log never names it. One exception, also the harness's: a
 * skipped PASS_TO_PASS test is maintained (passed); a skipped FAIL_TO_PASS test stays failed. `resolved` needs every listed test passed;
 * with no listed tests it needs exit code 0. A timed-out run is never resolved. Tests the lists do
 * not name do not count (SWE-bench's rule), but the ones that failed are returned all the same.
 */
import type { Tally, TestStatus, VerifyStatus } from '../types/verify.js';
import { worseStatus } from './parsers/common.js';
import { splitUnittestId, unittestIdForms } from './parsers/unittest.js';

export interface GradeInput {
  tests: ReadonlyMap<string, TestStatus>;
  failToPass: readonly string[];
  passToPass: readonly string[];
  exitCode: number | null;
  timedOut: boolean;
}

export interface Grade {
  status: Extract<VerifyStatus, 'resolved' | 'unresolved' | 'timeout'>;
  resolved: boolean;
  fail_to_pass: Tally;
  pass_to_pass: Tally;
  /** The outcome of every listed test (`missing` when the log does not name it). */
  listed: Map<string, TestStatus>;
  /** Tests the log shows failed or errored that the lists do not name, in log order. */
  other_failed: string[];
}

const PASSING: ReadonlySet<TestStatus> = new Set(['passed', 'xfail']);

export function isPassing(status: TestStatus): boolean {
  return PASSING.has(status);
}

/**
 * The spellings under which a log may name the listed test `id`, `id` itself first:
 * - unittest / Django: `test_x (m.C)`, `test_x (m.C.test_x)` (Python 3.11+, Django 4.2+) and the
 *   dotted `m.C.test_x` all name one test.
 */
export function equivalentIds(id: string): string[] {
  const forms = [id];
  const unittest = splitUnittestId(id);
  if (unittest) forms.push(...unittestIdForms(unittest.name, unittest.classPath));
  else if (/^[A-Za-z_][\w]*(\.[A-Za-z_]\w*)+$/.test(id)) {
    const dot = id.lastIndexOf('.');
    forms.push(...unittestIdForms(id.slice(dot + 1), id.slice(0, dot)));
  }
  return [...new Set(forms)];
}

/**
 * The outcome of one listed test:
 * 1. the outcome under the id or an equivalent spelling (`equivalentIds`; the worse if several);
 * 2. a pytest id SWE-bench truncated at its first space (`path::test_x[foo,`, because the harness
 *    splits lines on whitespace): the worse outcome of the ids it is a truncation of;
 * 3. the error of what contains the test, when the log names that instead: a pytest file that
 *    failed to collect (`path` for `path::test`), a unittest class or module whose fixture failed
 *    (`setUpClass (module.Class)`, `setUpModule (module)`);
 * 4. otherwise `missing`.
 */
export function lookupTest(tests: ReadonlyMap<string, TestStatus>, id: string): TestStatus {
  let found: TestStatus | undefined;
  for (const form of equivalentIds(id)) {
    const status = tests.get(form);
    if (status !== undefined) found = found === undefined ? status : worseStatus(found, status);
  }
  if (found !== undefined) return found;

  if (isTruncatedNodeId(id)) {
    for (const [key, status] of tests) {
      if (key.startsWith(`${id} `)) found = found === undefined ? status : worseStatus(found, status);
    }
    if (found !== undefined) return found;
  }

  const containers: string[] = [];
  const separator = id.indexOf('::');
  if (separator > 0) containers.push(id.slice(0, separator));
  const unittest = splitUnittestId(id);
  if (unittest) {
    const module = unittest.classPath.slice(0, Math.max(0, unittest.classPath.lastIndexOf('.')));
    containers.push(`setUpClass (${unittest.classPath})`, `setUpModule (${module})`);
  }
  for (const container of containers) {
    const status = tests.get(container);
    if (status === 'error' || status === 'failed') return 'error';
  }
  return 'missing';
}

/** `path::test_x[foo,`: a parametrized node id whose `[` is never closed. */
function isTruncatedNodeId(id: string): boolean {
  return id.includes('::') && id.lastIndexOf('[') > id.lastIndexOf(']');
}

function tally(
  tests: ReadonlyMap<string, TestStatus>,
  ids: readonly string[],
  listed: Map<string, TestStatus>,
  skippedPasses: boolean,
): Tally {
  const result: Tally = { passed: 0, failed: 0, missing: 0 };
  for (const id of new Set(ids)) {
    const status = lookupTest(tests, id);
    listed.set(id, status);
    if (status === 'missing') result.missing += 1;
    else if (isPassing(status) || (skippedPasses && status === 'skipped')) result.passed += 1;
    else result.failed += 1;
  }
  return result;
}

/** Grades parsed outcomes against the listed tests. */
export function gradeTests(input: GradeInput): Grade {
  const listed = new Map<string, TestStatus>();
  const fail_to_pass = tally(input.tests, input.failToPass, listed, false);
  // The harness fails a PASS_TO_PASS test only when it failed, errored or is absent; a skip keeps it.
  const pass_to_pass = tally(input.tests, input.passToPass, listed, true);
  const hasTests = listed.size > 0;
  const allPassed = hasTests
    ? fail_to_pass.failed + fail_to_pass.missing + pass_to_pass.failed + pass_to_pass.missing === 0
    : input.exitCode === 0;
  const resolved = allPassed && !input.timedOut;
  return {
    status: input.timedOut ? 'timeout' : resolved ? 'resolved' : 'unresolved',
    resolved,
    fail_to_pass,
    pass_to_pass,
    listed,
    other_failed: unlistedFailures(input.tests, [...input.failToPass, ...input.passToPass]),
  };
}

/**
 * Tests of the log that failed or errored and are none of `listed` (under any spelling
 * `equivalentIds` knows, or as the full id of a truncated pytest id), in log order.
 */
export function unlistedFailures(tests: ReadonlyMap<string, TestStatus>, listed: readonly string[]): string[] {
  const named = new Set(listed.flatMap(equivalentIds));
  const truncated = listed.filter(isTruncatedNodeId);
  const out: string[] = [];
  for (const [id, status] of tests) {
    if (status !== 'failed' && status !== 'error') continue;
    if (named.has(id) || truncated.some((prefix) => id.startsWith(`${prefix} `))) continue;
    out.push(id);
  }
  return out;
}
