/**
 * Issue 33 D4 through POST /rerank with `checks`: a src-layout pytest project whose package is not
 * installed, so every test file fails to collect and the base suite passes no test. That is a base
 * error naming the runner, the exit code and the first output lines; no candidate is "breaks no test".
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSandboxCount } from '../../src/sandbox/lifecycle.js';
import { createWorld, hasBubblewrap, type TestWorld } from '../solve/helpers.js';
import { hasPytest } from '../support/python.js';

/** `src/calc/ops.py` (not on sys.path: never installed) and `tests/test_ops.py` importing it. */
function srcLayoutRepo(dir: string): string {
  const files: Record<string, string> = {
    'pyproject.toml': '[project]\nname = "calc"\nversion = "0.1"\n\n[tool.pytest.ini_options]\ntestpaths = ["tests"]\n',
    'src/calc/__init__.py': '',
    'src/calc/ops.py': 'def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n',
    'tests/test_ops.py': 'from calc.ops import mul\n\n\ndef test_mul():\n    assert mul(3, 4) == 12\n',
  };
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), content);
  }
  const git = (...args: string[]) =>
    execFileSync('git', ['-C', dir, '-c', 'user.email=t@example.com', '-c', 'user.name=t', ...args], { stdio: 'pipe' });
  git('init', '-q');
  git('add', '-A');
  git('commit', '-q', '-m', 'base');
  return dir;
}

const patchOf = (line: string) =>
  [
    'diff --git a/src/calc/ops.py b/src/calc/ops.py',
    '--- a/src/calc/ops.py',
    '+++ b/src/calc/ops.py',
    '@@ -1,5 +1,5 @@',
    ' def add(a, b):',
    '-    return a - b',
    `+    return ${line}`,
    ' ',
    ' ',
    ' def mul(a, b):',
    '',
  ].join('\n');

describe.skipIf(!hasBubblewrap() || !hasPytest())('POST /rerank checks on a base suite that passes no test', () => {
  let world: TestWorld;
  let root: string;
  beforeAll(async () => {
    world = await createWorld();
    root = mkdtempSync(join(tmpdir(), 'winnower-srclayout-'));
  });
  afterAll(async () => {
    await world?.close();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it('records a base error naming runner, exit code and output, and checks no candidate', async () => {
    const repo = srcLayoutRepo(join(root, 'repo'));
    const server = await world.start();
    try {
      const response = await server.app.inject({
        method: 'POST',
        url: '/rerank',
        payload: {
          task: { instance_id: 'demo__calc-2', problem_statement: 'add() subtracts', repo: { path: repo } },
          checks: { regression: true },
          candidates: [
            { id: 'fix', patch: patchOf('a + b') },
            { id: 'wrong', patch: patchOf('a * b') },
          ],
        },
      });
      expect(response.statusCode, response.body).toBe(200);
      const body = response.json();
      const base = body.checks.regression.base;
      expect(base).toMatchObject({ runner: 'pytest', passed: 0 });
      expect(base.error).toMatch(/passed no test \(runner pytest, command `python3 -m pytest[^`]*`, exit [1-9]\d*\)/);
      expect(base.error).toMatch(/ModuleNotFoundError|ERROR|error/);
      expect(body.checks.regression.candidates).toEqual([]);
      expect(body.selection.reason).not.toMatch(/breaks no test/);
      expect(openSandboxCount()).toBe(0);
    } finally {
      await server.close();
    }
  });
});
