/**
 * Issue 18 items 1 and 2 through POST /rerank with verification (local sandboxes, the bundled
 * ONNX scorer, the demo task): a 300,000-line added file beside the correct fix is verified,
 * scored and ranked (no 500); a patch that did not apply is never chosen, even alone; a patch
 * that makes a symbolic link out of the repository is refused with a 400 naming it.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prepareDemoRepo } from '../../src/cli/demo-repo.js';
import { DEMO_DIR, demoTask, hasBubblewrap } from '../solve/helpers.js';
import { largeAddedFilePatch } from '../support/large-patch.js';
import { startTestApp, type TestApp } from './test-app.js';

/** The demo's correct fix (multi-digit amounts), as git diff prints it. */
const FIX = [
  'diff --git a/durations.py b/durations.py',
  '--- a/durations.py',
  '+++ b/durations.py',
  '@@ -2,7 +2,7 @@',
  ' import re',
  ' ',
  ' _UNITS = {"h": 3600, "m": 60, "s": 1}',
  '-_PART = re.compile(r"(\\d)([hms])")',
  '+_PART = re.compile(r"(\\d+)([hms])")',
  ' ',
  ' ',
  ' def parse_duration(text):',
  '',
].join('\n');
/** The same edit against lines the file does not have. */
const STALE = FIX.replace(' import re', ' import os');

describe.skipIf(!hasBubblewrap())('POST /rerank with unusable and huge candidates', () => {
  let server: TestApp;
  let task: Record<string, unknown>;
  beforeAll(async () => {
    const repo = prepareDemoRepo(join(DEMO_DIR, 'repo'));
    const demo = demoTask();
    task = {
      instance_id: demo.instance_id,
      problem_statement: demo.problem_statement,
      repo: { path: repo },
      test_command: demo.test_command,
      fail_to_pass: demo.fail_to_pass,
      pass_to_pass: demo.pass_to_pass,
      test_patch: demo.test_patch,
    };
    server = await startTestApp({ valueModel: 'bundled' });
  });
  afterAll(async () => {
    await server?.close();
  });

  const rerank = (candidates: Array<{ id: string; patch: string }>, extra: Record<string, unknown> = {}) =>
    server.app.inject({ method: 'POST', url: '/rerank', payload: { task, candidates, verify: true, ...extra } });

  it('verifies and ranks a 300,000-line added file beside the correct fix, and chooses the fix', async () => {
    const response = await rerank([
      { id: 'huge', patch: largeAddedFilePatch() },
      { id: 'fix', patch: FIX },
    ]);
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(body.selection.chosen).toBe('fix');
    expect(body.verify.map((result: { trajectory_id: string; status: string }) => [result.trajectory_id, result.status]).sort()).toEqual([
      ['fix', 'resolved'],
      ['huge', 'unresolved'],
    ]);
    expect(body.selection.ranking.map((entry: { trajectory_id: string }) => entry.trajectory_id)).toEqual(['fix', 'huge']);
  }, 300_000);

  it('chooses nothing when the only candidate did not apply, and says why', async () => {
    const response = await rerank([{ id: 'stale', patch: STALE }]);
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(body.verify[0].status).toBe('apply_failed');
    expect(body.selection.chosen).toBeNull();
    expect(body.chosen_patch).toBeNull();
    expect(body.selection.reason).toBe('None of the 1 candidate has a usable patch (1 did not apply), nothing chosen.');
    expect(body.selection.ranking[0].unusable).toMatchObject({ kind: 'apply_failed' });
  }, 120_000);

  it('ranks a candidate that did not apply below the one that did, whatever the strategy', async () => {
    for (const strategy of ['value', 'consensus', 'hybrid', 'learned']) {
      const body = (
        await rerank(
          [
            { id: 'stale', patch: STALE },
            { id: 'fix', patch: FIX },
          ],
          { strategy },
        )
      ).json();
      expect(body.selection.chosen, strategy).toBe('fix');
      expect(body.selection.ranking.at(-1), strategy).toMatchObject({ trajectory_id: 'stale', unusable: { kind: 'apply_failed' } });
    }
  }, 300_000);

  it('refuses a patch that makes a symbolic link to a host path with a 400 naming the candidate', async () => {
    const link =
      'diff --git a/passwd b/passwd\nnew file mode 120000\nindex 0000000..1111111\n--- /dev/null\n+++ b/passwd\n@@ -0,0 +1 @@\n+/etc/passwd\n\\ No newline at end of file\n';
    const response = await rerank(
      [
        { id: 'fix', patch: FIX },
        { id: 'link', patch: link },
      ],
      { verify: false },
    );
    expect(response.statusCode).toBe(400);
    expect(response.json().error).toMatchObject({ code: 'WNW_ERR_INPUT_INVALID', details: { field: 'body.candidates.1.patch' } });
    expect(response.json().error.message).toMatch(/symbolic link to "\/etc\/passwd", which is an absolute path, outside the repository/);
  });
});
