/**
 * `POST /rerank` with a repository and `checks` (issue 20): the same regression check and
 * reproduction tests a solve job runs, on a pool of existing candidates, without any test list.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSandboxCount } from '../../src/sandbox/lifecycle.js';
import { createWorld, DEMO_DIR, demoRecordings, demoTask, hasBubblewrap, type TestWorld } from '../solve/helpers.js';

const fix = (pattern: string) =>
  `diff --git a/durations.py b/durations.py\n--- a/durations.py\n+++ b/durations.py\n@@ -2,7 +2,7 @@\n import re\n \n _UNITS = {"h": 3600, "m": 60, "s": 1}\n-_PART = re.compile(r"(\\d)([hms])")\n+_PART = re.compile(r"${pattern}([hms])")\n \n \n def parse_duration(text):\n`;
// Multi-digit amounts, but no validation left: "  " and "ten minutes" no longer raise.
const breaks = [
  'diff --git a/durations.py b/durations.py',
  '--- a/durations.py',
  '+++ b/durations.py',
  '@@ -11,11 +11,7 @@ def parse_duration(text):',
  '     Raises ValueError for empty or malformed input.',
  '     """',
  '     cleaned = text.strip().lower()',
  '-    if not cleaned:',
  '-        raise ValueError("empty duration")',
  '-    parts = _PART.findall(cleaned)',
  '-    if not parts or _PART.sub("", cleaned) != "":',
  '-        raise ValueError(f"malformed duration: {text!r}")',
  '+    parts = re.findall(r"(\\d+)([hms])", cleaned)',
  '     return sum(int(amount) * _UNITS[unit] for amount, unit in parts)',
  ' ',
  ' ',
  '',
].join('\n');

describe.skipIf(!hasBubblewrap())('POST /rerank with checks', () => {
  let world: TestWorld;

  beforeAll(async () => {
    world = await createWorld();
  });

  afterAll(async () => {
    await world?.close();
  });

  it('finds the regressions and runs the matrix without a test list, and chooses by them', async () => {
    const { test_command: _command, fail_to_pass: _f2p, pass_to_pass: _p2p, test_patch: _patch, ...task } = demoTask();
    const writers = Object.values(demoRecordings(join(DEMO_DIR, 'test-writers')));
    const server = await world.start();
    try {
      const response = await server.app.inject({
        method: 'POST',
        url: '/rerank',
        payload: {
          task: { ...task, repo: { path: world.repo } },
          checks: { reproduction: { n: 3, policy: { kind: 'replay', recordings: writers }, budget_s: 60, timeout_s: 60 } },
          candidates: [
            { id: 'breaks', patch: breaks },
            { id: 'two-digits', patch: fix('(\\d{1,2})') },
            { id: 'right', patch: fix('(\\d+)') },
          ],
        },
      });
      expect(response.statusCode, response.body).toBe(200);
      const body = response.json();
      const regressions = Object.fromEntries(
        body.checks.regression.candidates.map((c: { trajectory_id: string; regressions: unknown[] }) => [
          c.trajectory_id,
          c.regressions.length,
        ]),
      );
      expect(regressions).toEqual({ breaks: 2, 'two-digits': 0, right: 0 });
      expect(body.checks.reproduction.tests.filter((t: { valid: boolean }) => t.valid)).toHaveLength(2);
      const passed = (index: number) =>
        body.checks.reproduction.matrix.filter(
          (cell: { index: number; outcome: string }) => cell.index === index && cell.outcome === 'passed',
        ).length;
      expect([passed(0), passed(1), passed(2)]).toEqual([2, 1, 2]);
      expect(body.selection.chosen).toBe('right');
      expect(body.selection.reason).toMatch(/breaks no test, passes 2\/2 reproduction tests/);
      expect(openSandboxCount()).toBe(0);
      // Checks alone make it a rerank job: its result keeps the evidence, per candidate too.
      const job = (await server.app.inject(`/jobs/${body.job_id}`)).json();
      expect(job).toMatchObject({ kind: 'rerank', status: 'succeeded', result: { chosen: { index: 2, trajectory_id: 'right' } } });
      expect(job.result.checks.regression.candidates).toEqual(body.checks.regression.candidates);
      expect(job.result.candidates.map((c: { checks: { regressions: number } | null }) => c.checks?.regressions)).toEqual([2, 0, 0]);
      // The request is kept with its candidates by id only.
      expect((await server.app.winnower.store.getJob(body.job_id))!.request).toMatchObject({
        candidates: [{ id: 'breaks' }, { id: 'two-digits' }, { id: 'right' }],
      });
    } finally {
      await server.close();
    }
  }, 240_000);

  it('refuses checks without a repository or image, naming the field', async () => {
    const server = await world.start();
    try {
      const response = await server.app.inject({
        method: 'POST',
        url: '/rerank',
        payload: { task: { instance_id: 'x', problem_statement: 'y' }, checks: {}, candidates: [{ id: 'a', patch: fix('(\\d+)') }] },
      });
      expect(response.statusCode).toBe(400);
      expect(response.json().error.details.field).toBe('body.checks');
    } finally {
      await server.close();
    }
  });
});
