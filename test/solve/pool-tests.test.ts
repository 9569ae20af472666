/**
 * Tests from the pool in `/solve` (docs/checks.md#tests-from-the-pool), end to end on real
 * components: local sandboxes, the demo repository, replayed candidates whose commands run for
 * real. No test list is given, so the check is on by default: every candidate writes a test
 * (`fix-a` extends tests/test_durations.py, `fix-b` adds its own file, `wrong-c` — two digits at
 * most — a test its own patch passes, `import-d` a test importing a name that does not exist);
 * the fixes are chosen by each other's tests, and the evidence is in the result and the events.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSandboxCount } from '../../src/sandbox/lifecycle.js';
import { hasPytest } from '../support/python.js';
import { createWorld, demoTask, hasBubblewrap, type TestWorld } from './helpers.js';

const FIX = String.raw`python3 - <<'PY'
import pathlib
p = pathlib.Path('durations.py')
p.write_text(p.read_text().replace(r'(\d)([hms])', r'(\d+)([hms])'))
PY`;
const WRONG = String.raw`python3 - <<'PY'
import pathlib
p = pathlib.Path('durations.py')
p.write_text(p.read_text().replace(r'(\d)([hms])', r'(\d\d?)([hms])'))
PY`;
/**
 * The pool's runner is pytest where the sandbox's python3 imports it, else unittest
 * (docs/checks.md#tests-from-the-pool); the candidates' tests are unittest cases, which both run,
 * and their ids are each runner's own.
 */
const RUNNER = hasPytest() ? 'pytest' : 'unittest';
const testId = (module: string, cls: string, name: string) =>
  RUNNER === 'pytest' ? `tests/${module}.py::${cls}::${name}` : `${name} (tests.${module}.${cls}.${name})`;
const writeFile = (path: string, content: string, append = false) => `cat ${append ? '>>' : '>'} ${path} <<'EOF'\n${content}EOF`;

/** A replayed candidate running `commands`, then submitting. */
function recording(name: string, commands: string[]) {
  const steps = [...commands, 'echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT'];
  return {
    format: 'winnower-trajectory-1',
    id: `recorded/${name}`,
    instance_id: demoTask().instance_id,
    source: `recorded-${name}`,
    messages: steps.map((command, i) => ({
      role: 'assistant',
      content: `step ${i}`,
      tool_calls: [{ id: `call_${i}`, type: 'function', function: { name: 'bash', arguments: JSON.stringify({ command }) } }],
    })),
    patch: '',
    exit: 'submitted',
    meta: {},
  };
}

const candidates = [
  recording('fix-a', [
    FIX,
    writeFile(
      'tests/test_durations.py',
      '\n\nclass ThreeDigitTests(unittest.TestCase):\n    def test_three_digit_seconds(self):\n        self.assertEqual(parse_duration("100s"), 100)\n',
      true,
    ),
  ]),
  recording('fix-b', [
    FIX,
    writeFile(
      'tests/test_long_units.py',
      'import unittest\n\nfrom durations import parse_duration\n\n\nclass LongUnitsTests(unittest.TestCase):\n    def test_minutes(self):\n        self.assertEqual(parse_duration("120m"), 7200)\n',
    ),
  ]),
  recording('wrong-c', [
    WRONG,
    writeFile(
      'tests/test_two_digits.py',
      'import unittest\n\nfrom durations import parse_duration\n\n\nclass TwoDigitsTests(unittest.TestCase):\n    def test_two_digits(self):\n        self.assertEqual(parse_duration("12m"), 720)\n',
    ),
  ]),
  recording('import-d', [
    writeFile(
      'tests/test_many.py',
      'import unittest\n\nfrom durations import parse_many\n\n\nclass ManyTests(unittest.TestCase):\n    def test_many(self):\n        self.assertEqual(parse_many("1h 2m"), [3600, 120])\n',
    ),
  ]),
];

describe.skipIf(!hasBubblewrap())('/solve: tests from the pool without a test list', () => {
  let world: TestWorld;
  beforeAll(async () => {
    world = await createWorld();
  });
  afterAll(async () => {
    await world?.close();
  });

  it("chooses a fix by the other fix's test; the wrong fix's own test does not count; evidence in result and events", async () => {
    const server = await world.start();
    try {
      const response = await server.app.inject({
        method: 'POST',
        url: '/solve?wait=true',
        payload: {
          instance_id: demoTask().instance_id,
          issue: demoTask().problem_statement,
          repo: { path: world.repo },
          n: 4,
          policy: { kind: 'replay', recordings: candidates },
          agent: { config: 'default', time_limit_s: 60, command_timeout_s: 30 },
          verify: { enabled: true, regression: { enabled: false }, pool_tests: { timeout_s: 60 } },
        },
      });
      expect(response.statusCode, response.body).toBe(200);
      const job = response.json();
      expect(job.status, JSON.stringify(job.error)).toBe('succeeded');
      const pool = job.result.checks.pool_tests;
      expect(pool.runner).toBe(RUNNER);
      const tests = Object.fromEntries(pool.tests.map((test: { writer: number }) => [test.writer, test]));
      expect(tests[0]).toMatchObject({
        valid: true,
        ids: [testId('test_durations', 'ThreeDigitTests', 'test_three_digit_seconds')],
        files: [{ change: 'changed' }],
      });
      expect(tests[1]).toMatchObject({ valid: true, ids: [testId('test_long_units', 'LongUnitsTests', 'test_minutes')] });
      expect(tests[2]).toMatchObject({ valid: true, ids: [testId('test_two_digits', 'TwoDigitsTests', 'test_two_digits')] });
      expect(tests[3]).toMatchObject({ valid: false, base_outcome: 'error' });
      expect(tests[3].discard_reason).toMatch(/errors at collection on the base commit: ImportError: cannot import name 'parse_many'/);
      expect(pool.clusters).toEqual([
        { writers: [0, 1], passes: [0, 1], weight: 2 },
        { writers: [2], passes: [0, 1, 2], weight: 1 },
      ]);
      const byIndex = Object.fromEntries(job.result.candidates.map((c: { index: number }) => [c.index, c]));
      expect(byIndex[0].checks.pool).toEqual({ score: 3, passed: 2, total: 2, own_passed: 1, own_total: 1, failed_weight: 0 });
      expect(byIndex[2].checks.pool).toEqual({ score: 0, passed: 0, total: 2, own_passed: 1, own_total: 1, failed_weight: 4 });
      expect([0, 1]).toContain(job.result.chosen.index);
      expect(job.result.selection.reason).toMatch(/pool tests: passes 2\/2 of the others'/);
      expect(pool.sandbox_ms.map((row: { index: number }) => row.index)).toEqual([0, 1, 2, 3]);

      const events = await server.app.inject({ method: 'GET', url: `/jobs/${job.job_id ?? job.id}/events?follow=false` });
      const types = events.body.match(/"type":"pool-[a-z-]+"/g) ?? [];
      expect(new Set(types)).toEqual(
        new Set(['"type":"pool-tests-start"', '"type":"pool-test-finish"', '"type":"pool-cell-finish"', '"type":"pool-matrix-finish"']),
      );
      expect(openSandboxCount()).toBe(0);
    } finally {
      await server.close();
    }
    // Four rollouts, then every candidate against every pool test: a dozen sandboxes, which on a
    // loaded 2-core machine outlast the default 30 s.
  }, 120_000);

  it('refuses a bad pool_tests field at submit, naming it', async () => {
    const server = await world.start();
    try {
      const response = await server.app.inject({
        method: 'POST',
        url: '/solve',
        payload: {
          issue: 'x',
          repo: { path: world.repo },
          verify: { enabled: true, pool_tests: { timeout_s: -1 } },
        },
      });
      expect(response.statusCode).toBe(400);
      expect(response.body).toContain('verify.pool_tests.timeout_s');
    } finally {
      await server.close();
    }
  });
});
