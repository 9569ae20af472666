import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_MODEL_DIR, TINY_MODEL_DIR } from '../../src/config.js';
import { startServeProcess, type ServeProcess } from '../support/cli.js';

const PATCH = (line: string) =>
  `diff --git a/src/a.py b/src/a.py\n--- a/src/a.py\n+++ b/src/a.py\n@@ -1,1 +1,2 @@\n def f():\n+    ${line}\n`;
const body = JSON.stringify({
  task: { instance_id: 'acme__widgets-1', problem_statement: 'f is wrong' },
  candidates: [
    { id: 'a', patch: PATCH('x = 1') },
    { id: 'b', patch: PATCH('y = 2') },
  ],
});

describe('winnower serve reloads its model folder on SIGHUP', () => {
  const dir = mkdtempSync(join(tmpdir(), 'winnower-reload-'));
  const modelDir = join(dir, 'model');
  let serve: ServeProcess | undefined;
  afterAll(async () => {
    serve?.child.kill('SIGTERM');
    await serve?.exited;
    rmSync(dir, { recursive: true, force: true });
  });

  it('the next request after the signal scores and selects with the newly written folder', async () => {
    // The folder starts as the untrained model (no selector.json: default strategy value) ...
    cpSync(TINY_MODEL_DIR(), modelDir, { recursive: true });
    serve = startServeProcess(join(dir, 'data'), { WINNOWER_SCORER_MODEL: modelDir });
    const base = await serve.base;
    const rerank = async () => {
      const response = await fetch(`${base}/rerank`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      expect(response.status).toBe(200);
      return (await response.json()) as { selection: { strategy: string }; scores: Array<{ model?: string }> };
    };
    expect((await rerank()).selection.strategy).toBe('value');
    // ... then a trained model is written over it (the bundled one: its selector.json says robust).
    rmSync(modelDir, { recursive: true, force: true });
    cpSync(DEFAULT_MODEL_DIR(), modelDir, { recursive: true });
    expect((await rerank()).selection.strategy).toBe('value'); // no reload yet: the loaded model stays
    serve.child.kill('SIGHUP');
    for (let i = 0; i < 200 && !serve.output().includes('scorer reloaded on SIGHUP'); i++)
      await new Promise((resolve) => setTimeout(resolve, 100));
    expect(serve.output()).toContain('scorer reloaded on SIGHUP');
    expect((await rerank()).selection.strategy).toBe('robust');
    expect(serve.child.exitCode).toBeNull();
  }, 120_000);
});
