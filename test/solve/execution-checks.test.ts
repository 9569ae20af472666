/**
 * Execution-backed selection without a test list (issue 20), end to end on real components: local
 * sandboxes, the demo repository, replayed candidate and test-writer trajectories. No
 * FAIL_TO_PASS/PASS_TO_PASS and no test command are given: the regression check finds the suite,
 * the test writers' tests are validated on base, and the pass matrix decides.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSandboxCount } from '../../src/sandbox/lifecycle.js';
import { createWorld, DEMO_DIR, demoRecordings, demoTask, hasBubblewrap, type TestWorld } from './helpers.js';

const recordings = demoRecordings();
const writers = Object.values(demoRecordings(join(DEMO_DIR, 'test-writers')));

/** A /solve body without any test list: only the regression check and the reproduction tests. */
function checksBody(repo: string, extra: Record<string, unknown> = {}) {
  return {
    instance_id: demoTask().instance_id,
    issue: demoTask().problem_statement,
    repo: { path: repo },
    n: 4,
    policy: {
      kind: 'replay',
      recordings: [recordings['plausible-wrong-fix'], recordings['breaks-other-tests'], recordings['correct-fix'], recordings['gives-up']],
    },
    agent: { config: 'default', time_limit_s: 60, command_timeout_s: 30 },
    verify: { enabled: true, reproduction: { n: 3, policy: { kind: 'replay', recordings: writers }, budget_s: 60, timeout_s: 60 } },
    ...extra,
  };
}

describe.skipIf(!hasBubblewrap())('regression check and reproduction tests without a test list', () => {
  let world: TestWorld;

  beforeAll(async () => {
    world = await createWorld();
  });

  afterAll(async () => {
    await world?.close();
  });

  it('finds the regression, discards the test that passes on base, and chooses by the matrix', async () => {
    const server = await world.start();
    try {
      const response = await server.app.inject({ method: 'POST', url: '/solve?wait=true', payload: checksBody(world.repo) });
      expect(response.statusCode).toBe(200);
      const job = response.json();
      expect(job.status).toBe('succeeded');
      const checks = job.result.checks;
      // The suite was found without a test list, and it ran on base twice.
      expect(checks.regression.base).toMatchObject({ scope: 'full', flaky: [] });
      expect(checks.regression.base.passed).toBeGreaterThanOrEqual(5);
      const regressions = Object.fromEntries(checks.regression.candidates.map((c: { index: number }) => [c.index, c]));
      // breaks-other-tests drops input validation: two tests that passed on base now fail.
      expect(regressions[1].regressions.map((r: { test: string }) => r.test).join(' ')).toMatch(/test_rejects_empty.*test_rejects_garbage/);
      expect(regressions[0].regressions).toEqual([]);
      expect(regressions[2].regressions).toEqual([]);
      // The writers' tests: two fail on base (valid), one passes there (discarded, with the reason).
      const tests = checks.reproduction.tests;
      expect(tests.map((t: { valid: boolean }) => t.valid)).toEqual([true, false, true]);
      expect(tests[1].base_outcome).toBe('passed');
      expect(tests[1].discard_reason).toMatch(/passes on the base commit/);
      expect(tests[0].file).toBe('tests/test_repro_hours_minutes.py');
      // The matrix: the plausible-but-wrong fix fails the three-digit test.
      const cell = (index: number, writer: number) =>
        checks.reproduction.matrix.find((c: { index: number; writer: number }) => c.index === index && c.writer === writer)?.outcome;
      expect(cell(0, 0)).toBe('passed');
      expect(cell(0, 2)).toBe('failed');
      expect(cell(2, 0)).toBe('passed');
      expect(cell(2, 2)).toBe('passed');
      expect(job.result.chosen.index).toBe(2);
      expect(job.result.selection.reason).toMatch(/breaks no test/);
      expect(job.result.selection.reason).toMatch(/2\/2 reproduction tests/);
      expect(checks.cost.sandbox_ms).toBeGreaterThan(0);
      const byIndex = Object.fromEntries(job.result.candidates.map((c: { index: number }) => [c.index, c]));
      expect(byIndex[1].checks).toEqual({ regressions: 2, repro_passed: 2, repro_total: 2 });
      expect(byIndex[0].checks).toEqual({ regressions: 0, repro_passed: 1, repro_total: 2 });
      const events =
        (await server.jobs.get(job.job_id)) && world
          ? (await server.app.inject({ method: 'GET', url: `/jobs/${job.job_id}/events` })).body
          : '';
      for (const type of ['regression-finish', 'repro-test-finish', 'matrix-cell-finish', 'matrix-finish'])
        expect(events).toContain(`event: ${type}`);
      expect(openSandboxCount()).toBe(0);
    } finally {
      await server.close();
    }
  }, 240_000);

  it('runs only the tests related to each patch when the whole suite does not fit the budget', async () => {
    const server = await world.start();
    try {
      const response = await server.app.inject({
        method: 'POST',
        url: '/solve?wait=true',
        payload: checksBody(world.repo, {
          n: 2,
          policy: { kind: 'replay', recordings: [recordings['breaks-other-tests'], recordings['correct-fix']] },
          verify: { enabled: true, timeout_s: 60, regression: { budget_s: 0.001 } },
        }),
      });
      expect(response.statusCode).toBe(200);
      const job = response.json();
      expect(job.status).toBe('succeeded');
      const { regression } = job.result.checks;
      expect(regression.base.scope).toBe('related');
      const byIndex = Object.fromEntries(regression.candidates.map((c: { index: number }) => [c.index, c]));
      // durations.py changed: tests/test_durations.py imports it, and its two validation tests broke.
      expect(byIndex[0]).toMatchObject({ status: 'checked', scope: 'related' });
      expect(byIndex[0].regressions).toHaveLength(2);
      expect(byIndex[1].regressions).toEqual([]);
      expect(job.result.chosen.index).toBe(1);
    } finally {
      await server.close();
    }
  }, 240_000);
});
