/**
 * /solve end to end on real components: local bubblewrap sandboxes, the bundled ONNX value model,
 * real verification, and a fake OpenAI-compatible policy that returns scripted tool calls.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSandboxCount } from '../../src/sandbox/lifecycle.js';
import { startFakePolicy, type FakePolicyServer } from '../fakes/fake-policy.js';
import { commandsOf, createWorld, demoRecordings, demoTask, hasBubblewrap, solveBody, type TestWorld } from './helpers.js';

const recordings = demoRecordings();
const correct = commandsOf(recordings['correct-fix']!);
const wrong = commandsOf(recordings['plausible-wrong-fix']!);
const breaks = commandsOf(recordings['breaks-other-tests']!);
const givesUp = commandsOf(recordings['gives-up']!);

describe.skipIf(!hasBubblewrap())('POST /solve end to end (local sandboxes, ONNX scorer, fake policy)', () => {
  let world: TestWorld;
  let policy: FakePolicyServer;

  beforeAll(async () => {
    world = await createWorld();
    policy = await startFakePolicy({
      scripts: {
        // The correct fix is rollout 2, so selection must find it rather than take the first.
        mixed: [{ commands: wrong }, { commands: breaks }, { commands: correct }, { commands: givesUp }],
        // Rollout 0's server breaks after two turns (400: not retried); rollout 1 is fine.
        flaky: [{ commands: correct, failFromTurn: { turn: 2, status: 400 } }, { commands: wrong }],
        // Never finishes on its own: for cancellation.
        slow: [{ commands: ['sleep 30'] }, { commands: ['sleep 30'] }, { commands: ['sleep 30'] }],
      },
    });
  });

  afterAll(async () => {
    await policy?.close();
    await world?.close();
  });

  it('selects the candidate whose patch passes the tests, with every candidate as evidence', async () => {
    const server = await world.start();
    try {
      const response = await server.app.inject({
        method: 'POST',
        url: '/solve?wait=true',
        payload: solveBody(world.repo, { n: 4, policy: { kind: 'openai', url: policy.url, model: 'mixed' } }),
      });
      expect(response.statusCode).toBe(200);
      const job = response.json();
      expect(job.status).toBe('succeeded');
      expect(job.result.chosen.index).toBe(2);
      expect(job.result.chosen.patch).toContain('(\\d+)([hms])');
      expect(job.result.chosen.verify_status).toBe('resolved');
      const byIndex = Object.fromEntries(job.candidates.map((c: { index: number }) => [c.index, c]));
      expect(byIndex[0].verify.status).toBe('unresolved');
      expect(byIndex[0].verify.fail_to_pass).toEqual({ passed: 2, failed: 1, missing: 0 });
      expect(byIndex[1].verify.status).toBe('unresolved');
      expect(byIndex[1].verify.pass_to_pass.failed).toBe(2);
      expect(byIndex[3].patch).toBe('');
      for (const candidate of job.candidates) {
        expect(candidate.status).toBe('finished');
        expect(candidate.exit).toBe('submitted');
        if (candidate.index === 3) continue;
        expect(candidate.value).toBeGreaterThan(0);
        expect(candidate.value).toBeLessThan(1);
      }
      // No patch: never scored or tested (issue 18 item 4), and last.
      expect(byIndex[3]).toMatchObject({ value: null, verify: null });
      expect(job.result.selection.ranking.at(-1)).toMatchObject({ trajectory_id: byIndex[3].trajectory_id, unusable: { kind: 'empty' } });
      expect(job.result.selection.strategy).toBe('hybrid');
      expect(job.result.rollouts).toMatchObject({ planned: 4, finished: 4, failed: 0 });
      // Distinct seeds per rollout reached the policy.
      expect(new Set(policy.requests.map((body) => body.seed))).toEqual(new Set([0, 1, 2, 3]));
      expect(openSandboxCount()).toBe(0);
    } finally {
      await server.close();
    }
  }, 120_000);

  it('turns a policy server that fails mid-rollout into a failed candidate of a finished job', async () => {
    const server = await world.start();
    try {
      const response = await server.app.inject({
        method: 'POST',
        url: '/solve?wait=true',
        payload: solveBody(world.repo, { n: 2, policy: { kind: 'openai', url: policy.url, model: 'flaky' } }),
      });
      expect(response.statusCode).toBe(200);
      const job = response.json();
      expect(job.status).toBe('succeeded');
      const [failed, fine] = job.candidates;
      expect(failed.status).toBe('failed');
      expect(failed.error.code).toBe('WNW_ERR_POLICY_UPSTREAM');
      expect(failed.exit).toBe('error');
      expect(fine.status).toBe('finished');
      expect(job.result.rollouts).toMatchObject({ finished: 1, failed: 1 });
      expect(job.result.chosen.index).toBe(1);
      expect(openSandboxCount()).toBe(0);
    } finally {
      await server.close();
    }
  }, 120_000);

  it('cancels a running job, closing every sandbox within seconds', async () => {
    const server = await world.start();
    try {
      const posted = await server.app.inject({
        method: 'POST',
        url: '/solve',
        payload: solveBody(world.repo, { n: 3, policy: { kind: 'openai', url: policy.url, model: 'slow' }, verify: { enabled: false } }),
      });
      expect(posted.statusCode).toBe(202);
      const { job_id: jobId } = posted.json();
      // Wait until all three rollouts are inside `sleep 30`.
      for (let i = 0; i < 200 && policy.requests.filter((body) => body.model === 'slow').length < 3; i += 1)
        await new Promise((r) => setTimeout(r, 50));
      await new Promise((r) => setTimeout(r, 300));
      expect(openSandboxCount()).toBe(3);
      const started = Date.now();
      const cancelled = await server.app.inject({ method: 'DELETE', url: `/jobs/${jobId}` });
      expect(cancelled.statusCode).toBe(200);
      expect(Date.now() - started).toBeLessThan(10_000);
      expect(cancelled.json().status).toBe('cancelled');
      expect(openSandboxCount()).toBe(0);
      expect(cancelled.json().candidates.every((c: { status: string }) => c.status === 'cancelled')).toBe(true);
      const again = await server.app.inject({ method: 'DELETE', url: `/jobs/${jobId}` });
      expect(again.statusCode).toBe(409);
    } finally {
      await server.close();
    }
  }, 60_000);

  it('skips rollouts still queued when the stop rule fires, counting them as saved', async () => {
    const server = await world.start();
    try {
      const ordered = [
        recordings['correct-fix']!,
        recordings['gives-up']!,
        recordings['plausible-wrong-fix']!,
        recordings['breaks-other-tests']!,
      ];
      const response = await server.app.inject({
        method: 'POST',
        url: '/solve?wait=true',
        payload: solveBody(world.repo, {
          n: 4,
          concurrency: 1,
          policy: { kind: 'replay', recordings: ordered },
          stop_rule: { min_value: 0, require_resolved: true },
        }),
      });
      const job = response.json();
      expect(job.status).toBe('succeeded');
      expect(job.result.chosen.index).toBe(0);
      expect(job.result.stopped_early).toContain('passed its tests');
      expect(job.result.rollouts).toMatchObject({ finished: 1, skipped: 3 });
      expect(job.result.compute.saved_fraction).toBe(0.75);
      expect(job.candidates.map((c: { status: string }) => c.status)).toEqual(['finished', 'skipped', 'skipped', 'skipped']);
    } finally {
      await server.close();
    }
  }, 60_000);

  it('fails the job, keeping every failed candidate, when all rollouts fail (missing repository)', async () => {
    const server = await world.start();
    try {
      // A missing repo.path is a 400 at submit; a URL is only cloned by the rollouts, so each of them fails.
      const response = await server.app.inject({
        method: 'POST',
        url: '/solve?wait=true',
        payload: solveBody(world.repo, {
          repo: { url: 'file:///nonexistent/winnower-repo' },
          n: 2,
          policy: { kind: 'openai', url: policy.url, model: 'mixed' },
        }),
      });
      const job = response.json();
      expect(job.status).toBe('failed');
      expect(job.error.code).toBe('WNW_ERR_SBX_REPO');
      expect(job.error.message).toContain('all 2 rollouts failed');
      expect(job.candidates.map((c: { status: string; error: { code: string } }) => [c.status, c.error.code])).toEqual([
        ['failed', 'WNW_ERR_SBX_REPO'],
        ['failed', 'WNW_ERR_SBX_REPO'],
      ]);
      expect(openSandboxCount()).toBe(0);
    } finally {
      await server.close();
    }
  }, 60_000);

  it('POST /rerank with verify tests existing candidates in fresh sandboxes and picks the one that passes', async () => {
    const fix = (pattern: string) =>
      `diff --git a/durations.py b/durations.py\n--- a/durations.py\n+++ b/durations.py\n@@ -2,7 +2,7 @@\n import re\n \n _UNITS = {"h": 3600, "m": 60, "s": 1}\n-_PART = re.compile(r"(\\d)([hms])")\n+_PART = re.compile(r"${pattern}([hms])")\n \n \n def parse_duration(text):\n`;
    const stale =
      'diff --git a/durations.py b/durations.py\n--- a/durations.py\n+++ b/durations.py\n@@ -1,3 +1,3 @@\n-this line is not there\n+nor is this one\n context\n';
    const task = demoTask();
    const server = await world.start();
    try {
      const response = await server.app.inject({
        method: 'POST',
        url: '/rerank',
        payload: {
          task: { ...task, repo: { path: world.repo } },
          verify: true,
          candidates: [
            { id: 'two-digits', patch: fix('(\\d{1,2})') },
            { id: 'stale', patch: stale },
            { id: 'right', patch: fix('(\\d+)') },
          ],
        },
      });
      expect(response.statusCode).toBe(200);
      const body = response.json();
      const status = Object.fromEntries(body.verify.map((v: { trajectory_id: string; status: string }) => [v.trajectory_id, v.status]));
      expect(status).toEqual({ 'two-digits': 'unresolved', stale: 'apply_failed', right: 'resolved' });
      expect(body.selection.strategy).toBe('hybrid');
      expect(body.selection.chosen).toBe('right');
      expect(openSandboxCount()).toBe(0);
    } finally {
      await server.close();
    }
  }, 60_000);

  it('keeps finished jobs across a server restart', async () => {
    const first = await world.start();
    let jobId: string;
    let before: unknown;
    try {
      const response = await first.app.inject({
        method: 'POST',
        url: '/solve?wait=true',
        payload: solveBody(world.repo, { n: 1, policy: { kind: 'openai', url: policy.url, model: 'mixed' } }),
      });
      jobId = response.json().job_id;
      before = response.json();
    } finally {
      await first.close();
    }
    const second = await world.start();
    try {
      const after = await second.app.inject({ method: 'GET', url: `/jobs/${jobId}` });
      expect(after.statusCode).toBe(200);
      expect(after.json()).toEqual(before);
      expect(after.json().status).toBe('succeeded');
    } finally {
      await second.close();
    }
  }, 60_000);
});
