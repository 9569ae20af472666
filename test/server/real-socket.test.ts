/**
 * Routes that watch for the client going away, over a real socket: `inject()` does not reproduce
 * Node's IncomingMessage, which closes (and reads as destroyed) as soon as its body has been read.
 */
import { rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prepareDemoRepo } from '../../src/cli/demo-repo.js';
import { openSandboxCount } from '../../src/sandbox/lifecycle.js';
import { DEMO_DIR, hasBubblewrap } from '../solve/helpers.js';
import { listenOnLoopback, startTestApp, type TestApp } from './test-app.js';

const PATCH_A = 'diff --git a/a.py b/a.py\n--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n';
const PATCH_B = 'diff --git a/a.py b/a.py\n--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-x = 1\n+x = 3\n';
const NEW_FILE = 'diff --git a/notes.txt b/notes.txt\nnew file mode 100644\n--- /dev/null\n+++ b/notes.txt\n@@ -0,0 +1 @@\n+hello\n';
const task = { instance_id: 'demo__demo-1', problem_statement: 'x should be 2' };

describe('HTTP API over a real socket', () => {
  let server: TestApp;
  let valueModel: NonNullable<TestApp['valueModel']>;
  let app: TestApp['app'];
  let base: string;

  beforeAll(async () => {
    server = await startTestApp({ valueModel: 'bundled' });
    ({ app } = server);
    valueModel = server.valueModel!;
    ({ base } = await listenOnLoopback(app));
  });

  afterAll(async () => {
    await server?.close();
  });

  it('POST /rerank scores every candidate (reading the body is not a client disconnect)', async () => {
    const response = await request(`${base}/rerank`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        task,
        candidates: [
          { id: 'a', patch: PATCH_A },
          { id: 'b', patch: PATCH_B },
        ],
      }),
    });
    const body = (await response.body.json()) as {
      selection: { strategy: string; degraded_to?: string | null };
      scores: Array<{ value?: number; error?: unknown }>;
    };
    expect(response.statusCode).toBe(200);
    expect(body.scores.map((score) => typeof score.value)).toEqual(['number', 'number']);
    // The server's default without tests: the bundled model folder's default_strategy when it comes with a selector.
    expect(body.selection.strategy).toBe(valueModel.selector ? (valueModel.selector.default_strategy ?? 'learned') : 'value');
    expect(body.selection.degraded_to ?? null).toBeNull();
  });

  it.skipIf(!hasBubblewrap())(
    'POST /rerank still stops verifying, closing its sandboxes, when the client goes away',
    async () => {
      const repo = prepareDemoRepo(join(DEMO_DIR, 'repo'));
      try {
        const client = new AbortController();
        const answer = request(`${base}/rerank`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            task: { ...task, repo: { path: repo }, test_command: 'sleep 60' },
            verify: true,
            candidates: [{ id: 'a', patch: NEW_FILE }],
          }),
          signal: client.signal,
        }).catch(() => undefined);
        for (let i = 0; i < 200 && openSandboxCount() === 0; i += 1) await new Promise((resolve) => setTimeout(resolve, 50));
        expect(openSandboxCount()).toBe(1);
        client.abort();
        await answer;
        for (let i = 0; i < 200 && openSandboxCount() > 0; i += 1) await new Promise((resolve) => setTimeout(resolve, 50));
        expect(openSandboxCount()).toBe(0);
      } finally {
        rmSync(dirname(repo), { recursive: true, force: true });
      }
    },
    30_000,
  );
});
