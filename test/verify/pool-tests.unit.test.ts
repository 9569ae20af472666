/**
 * The pure pieces of the tests from the pool (docs/checks.md#tests-from-the-pool): which files of
 * a patch are its tests, how a run of them reads on base and with a candidate, and how the matrix
 * is weighed (clusters by pass vector, weights by distinct writers, own tests apart).
 */
import { describe, expect, it } from 'vitest';
import type { PoolCell } from '../../src/types/checks.js';
import type { TestStatus } from '../../src/types/verify.js';
import { poolTestSections } from '../../src/verify/pool-test-extract.js';
import { readPoolBase, readPoolCell } from '../../src/verify/pool-test-outcome.js';
import { weighPoolTests } from '../../src/verify/pool-test-weights.js';

const section = (path: string, header: string, body = '@@ -1 +1,2 @@\n x = 1\n+def test_y(): assert False\n') =>
  `diff --git a/${path} b/${path}\n${header}--- a/${path}\n+++ b/${path}\n${body}`;

const fix = section('pkg/slug.py', 'index 1..2 100644\n');
const changed = section('tests/test_slug.py', 'index 1..2 100644\n');
const added = section('tests/unit/test_new.py', 'new file mode 100644\nindex 0..2\n', '@@ -0,0 +1 @@\n+def test_new(): assert False\n');
const deleted = section('tests/test_old.py', 'deleted file mode 100644\nindex 1..0\n', '@@ -1 +0,0 @@\n-def test_old(): pass\n');
const conftest = section('tests/conftest.py', 'index 1..2 100644\n');
const settings = section('tests/test_sqlite.py', 'index 1..2 100644\n');

describe('poolTestSections', () => {
  it('takes the test modules a patch adds or changes, with their sections alone', () => {
    const { files, patch } = poolTestSections(fix + changed + added + deleted + conftest);
    expect(files).toEqual([
      { path: 'tests/test_slug.py', change: 'changed' },
      { path: 'tests/unit/test_new.py', change: 'added' },
    ]);
    expect(patch).toBe(changed + added);
    expect(patch).not.toContain('pkg/slug.py');
  });

  it('finds none in a patch without test modules (conftest and settings files are not tests to run)', () => {
    expect(poolTestSections(fix + conftest).files).toEqual([]);
    // Django's tests/test_sqlite.py is a settings module named like a test: it is one by name.
    expect(poolTestSections(settings).files).toEqual([{ path: 'tests/test_sqlite.py', change: 'changed' }]);
    expect(poolTestSections('').files).toEqual([]);
  });
});

const run = (tests: Record<string, TestStatus>, log = '', extra: { timed_out?: boolean; exit_code?: number | null } = {}) => ({
  tests: new Map(Object.entries(tests)),
  log,
  timed_out: extra.timed_out ?? false,
  exit_code: extra.exit_code ?? 1,
});

describe('readPoolBase', () => {
  it('keeps the ids that fail on base, not those that pass', () => {
    expect(readPoolBase(run({ 'tests/test_slug.py::test_a': 'passed', 'tests/test_slug.py::test_b': 'failed' }))).toEqual({
      outcome: 'failed',
      ids: ['tests/test_slug.py::test_b'],
    });
  });

  it('calls a collection ImportError invalid, naming the cause (pytest and unittest/Django logs)', () => {
    const pytestLog =
      "==== ERRORS ====\n___ ERROR collecting tests/test_u.py ___\nImportError while importing test module\nE   ImportError: cannot import name 'slugify_unicode'\n";
    expect(readPoolBase(run({ 'tests/test_u.py': 'error' }, pytestLog))).toEqual({
      outcome: 'error',
      ids: [],
      reason: "errors at collection on the base commit: ImportError: cannot import name 'slugify_unicode'",
    });
    const unittestLog =
      "ERROR: test_u (unittest.loader._FailedTest.test_u)\nImportError: Failed to import test module: test_u\nTraceback...\nImportError: cannot import name 'x' from 'pkg'\n";
    expect(readPoolBase(run({ 'test_u (unittest.loader._FailedTest.test_u)': 'error' }, unittestLog)).reason).toBe(
      "errors at collection on the base commit: ImportError: cannot import name 'x' from 'pkg'",
    );
  });

  it('keeps the ids of files that all pass on base as a keeps test; discards those that ran nothing or timed out', () => {
    expect(readPoolBase(run({ b: 'passed', a: 'passed' }))).toEqual({ outcome: 'passed', ids: [], kept: ['a', 'b'] });
    expect(readPoolBase(run({}, 'no tests ran', { exit_code: 5 })).reason).toBe('no test ran on the base commit (exit 5)');
    expect(readPoolBase(run({ a: 'failed' }, '', { timed_out: true })).outcome).toBe('error');
  });
});

describe('readPoolCell', () => {
  it('passes only when every base-failing id passes; a missing id fails it', () => {
    expect(readPoolCell(run({ a: 'passed', b: 'passed' }), ['a', 'b'])).toBe('passed');
    expect(readPoolCell(run({ a: 'passed' }), ['a', 'b'])).toBe('failed');
    expect(readPoolCell(run({ a: 'passed' }, '', { timed_out: true }), ['a'])).toBe('error');
  });
});

const cells = (rows: Record<number, Record<number, PoolCell['outcome']>>): PoolCell[] =>
  Object.entries(rows).flatMap(([index, row]) =>
    Object.entries(row).map(([writer, outcome]) => ({
      index: Number(index),
      writer: Number(writer),
      outcome,
      own: index === writer,
      duration_ms: 1,
    })),
  );

describe('weighPoolTests', () => {
  // A (0) and B (1) fix the bug, each with its own agreeing test; C (2) a wrong fix with its own test; D (3) none valid.
  const matrix = cells({
    0: { 0: 'passed', 1: 'passed', 2: 'failed' },
    1: { 0: 'passed', 1: 'passed', 2: 'failed' },
    2: { 0: 'failed', 1: 'failed', 2: 'passed' },
    3: { 0: 'failed', 1: 'failed', 2: 'failed' },
  });

  it('clusters agreeing tests, weighs them by distinct writers, and leaves own tests out of the score', () => {
    const weighing = weighPoolTests([0, 1, 2], matrix);
    expect(weighing.clusters).toEqual([
      { writers: [0, 1], passes: [0, 1], weight: 2 },
      { writers: [2], passes: [2], weight: 1 },
    ]);
    expect(weighing.scores.get(0)).toEqual({ score: 2, passed: 1, total: 2, own_passed: 1, own_total: 1, failed_weight: 1 });
    expect(weighing.scores.get(2)).toEqual({ score: 0, passed: 0, total: 2, own_passed: 1, own_total: 1, failed_weight: 4 });
    expect(weighing.scores.get(3)).toEqual({ score: 0, passed: 0, total: 3, own_passed: 0, own_total: 0, failed_weight: 5 });
  });

  it('drops a test nobody passes and one that was invalid on base; not_run cells do not count', () => {
    const weighing = weighPoolTests(
      [0, 1],
      cells({ 0: { 0: 'failed', 1: 'passed' }, 1: { 0: 'failed', 1: 'not_run' }, 2: { 0: 'failed', 1: 'passed', 3: 'passed' } }),
    );
    expect([...weighing.valid]).toEqual([1]);
    expect([...weighing.unpassed]).toEqual([0]);
    expect(weighing.scores.get(2)).toEqual({ score: 1, passed: 1, total: 1, own_passed: 0, own_total: 0, failed_weight: 0 });
    expect(weighing.scores.get(1)).toEqual({ score: 0, passed: 0, total: 0, own_passed: 0, own_total: 0, failed_weight: 0 });
  });

  it("weighs the others' tests a candidate fails: writing a test costs the writer nothing against one that wrote none", () => {
    // A (0) is a right fix that wrote the only test telling it from B (1), a wrong fix that wrote none;
    // C (2), another wrong fix, wrote a test both fixes pass. By passes A and B tie (1 each: A's own
    // test is counted apart); by failures B fails A's test and A fails nothing.
    const weighing = weighPoolTests(
      [0, 2],
      cells({ 0: { 0: 'passed', 2: 'passed' }, 1: { 0: 'failed', 2: 'passed' }, 2: { 0: 'failed', 2: 'passed' } }),
    );
    expect(weighing.scores.get(0)).toMatchObject({ score: 1, failed_weight: 0 });
    expect(weighing.scores.get(1)).toMatchObject({ score: 1, failed_weight: 1 });
    expect(weighing.scores.get(2)).toMatchObject({ score: 0, failed_weight: 1 });
  });
});
