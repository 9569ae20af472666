/**
 * Tests from the pool through POST /rerank with a repository (docs/checks.md#tests-from-the-pool),
 * on a pytest project in the src layout (`pythonpath = ["src"]`): four candidates that each add or
 * change a test. `fix-a` changes tests/test_ops.py, `fix-b` adds its own agreeing file, `wrong-c`
 * (absolute values) adds a test its own patch passes and the fixes pass too, `import-d` adds a test
 * importing a name that does not exist on base (collection ImportError: invalid, reason stated).
 * Without a test list, a fix is chosen; `wrong-c` gets nothing for its own test; the matrix, the
 * weights and the cost are in the response; on a pool where the bundled value model prefers a
 * wrong candidate, the pool tests overturn it; `pool_tests` fields are validated at submit.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSandboxCount } from '../../src/sandbox/lifecycle.js';
import { commitRepo, stagedDiff } from '../support/git-fixture.js';
import { createWorld, hasBubblewrap, type TestWorld } from '../solve/helpers.js';
import { hasPytest } from '../support/python.js';

const OPS = 'def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n';
const TESTS = 'from calc.ops import add, mul\n\n\ndef test_mul():\n    assert mul(3, 4) == 12\n';
const FILES: Record<string, string> = {
  'pyproject.toml': '[project]\nname = "calc"\nversion = "0.1"\n\n[tool.pytest.ini_options]\npythonpath = ["src"]\ntestpaths = ["tests"]\n',
  'src/calc/__init__.py': '',
  'src/calc/ops.py': OPS,
  'tests/test_ops.py': TESTS,
};
const fixed = OPS.replace('a - b', 'a + b');

describe.skipIf(!hasBubblewrap() || !hasPytest())('POST /rerank checks: tests from the pool', () => {
  let world: TestWorld;
  let root: string;
  let repo: string;
  let patches: Record<'a' | 'b' | 'c' | 'd', string>;

  beforeAll(async () => {
    world = await createWorld();
    root = mkdtempSync(join(tmpdir(), 'winnower-pool-'));
    repo = join(root, 'repo');
    execFileSync('mkdir', ['-p', repo]);
    commitRepo(repo, FILES, 'base');
    let n = 0;
    const diff = (edits: Record<string, string>) => stagedDiff(repo, join(root, `scratch-${n++}`), edits);
    patches = {
      a: diff({ 'src/calc/ops.py': fixed, 'tests/test_ops.py': `${TESTS}\n\ndef test_add_negative():\n    assert add(-1, 1) == 0\n` }),
      b: diff({
        'src/calc/ops.py': fixed,
        'tests/test_add.py': 'from calc.ops import add\n\n\ndef test_add_both_negative():\n    assert add(-2, -3) == -5\n',
      }),
      c: diff({
        'src/calc/ops.py': OPS.replace('a - b', 'abs(a) + abs(b)'),
        'tests/test_add_positive.py': 'from calc.ops import add\n\n\ndef test_add_positive():\n    assert add(2, 3) == 5\n',
      }),
      d: diff({
        'src/calc/ops.py': `${OPS}\n\ndef add_many(*values):\n    return sum(values)\n`,
        'tests/test_many.py': 'from calc.ops import add_many\n\n\ndef test_add_many():\n    assert add_many(1, 2, 3) == 6\n',
      }),
    };
  });
  afterAll(async () => {
    await world?.close();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  const body = (checks: Record<string, unknown>, names: Array<'a' | 'b' | 'c' | 'd'> = ['a', 'b', 'c', 'd']) => ({
    task: { instance_id: 'demo__calc-3', problem_statement: 'add() subtracts instead of adding', repo: { path: repo } },
    checks,
    candidates: names.map((name) => ({ id: { a: 'fix-a', b: 'fix-b', c: 'wrong-c', d: 'import-d' }[name], patch: patches[name] })),
  });

  it('chooses a fix by the agreeing tests; the wrong fix gains nothing from its own test', async () => {
    const server = await world.start();
    try {
      const response = await server.app.inject({ method: 'POST', url: '/rerank', payload: body({ regression: true }) });
      expect(response.statusCode, response.body).toBe(200);
      const answer = response.json();
      const pool = answer.checks.pool_tests;
      expect(pool.runner).toBe('pytest');
      const tests = Object.fromEntries(pool.tests.map((test: { writer: number }) => [test.writer, test]));
      expect(tests[0]).toMatchObject({ valid: true, ids: ['tests/test_ops.py::test_add_negative'], files: [{ change: 'changed' }] });
      expect(tests[1]).toMatchObject({ valid: true, ids: ['tests/test_add.py::test_add_both_negative'] });
      expect(tests[2]).toMatchObject({ valid: true, ids: ['tests/test_add_positive.py::test_add_positive'] });
      expect(tests[3]).toMatchObject({ valid: false, base_outcome: 'error' });
      expect(tests[3].discard_reason).toMatch(/errors at collection on the base commit: ImportError: cannot import name 'add_many'/);
      // A's and B's tests pass with the two fixes only; C's passes with all three: two clusters.
      expect(pool.clusters).toEqual([
        { writers: [0, 1], passes: [0, 1], weight: 2 },
        { writers: [2], passes: [0, 1, 2], weight: 1 },
      ]);
      const scores = Object.fromEntries(pool.scores.map((score: { index: number }) => [score.index, score]));
      expect(scores[0]).toEqual({ index: 0, score: 3, passed: 2, total: 2, own_passed: 1, own_total: 1, failed_weight: 0 });
      expect(scores[1]).toEqual({ index: 1, score: 3, passed: 2, total: 2, own_passed: 1, own_total: 1, failed_weight: 0 });
      expect(scores[2]).toEqual({ index: 2, score: 0, passed: 0, total: 2, own_passed: 1, own_total: 1, failed_weight: 4 });
      expect(scores[3]).toEqual({ index: 3, score: 0, passed: 0, total: 3, own_passed: 0, own_total: 0, failed_weight: 5 });
      expect(pool.matrix).toHaveLength(12);
      expect(pool.sandbox_ms).toHaveLength(4);
      expect(['fix-a', 'fix-b']).toContain(answer.selection.chosen);
      // Both fixes rank above both wrong candidates, whatever the value model thinks of them.
      const ranked = answer.selection.ranking.map((entry: { trajectory_id: string }) => entry.trajectory_id);
      expect(ranked.slice(0, 2).sort()).toEqual(['fix-a', 'fix-b']);
      expect(answer.selection.reason).toMatch(
        /pool tests: passes 2\/2 of the others' \(failed weight 0, score 3; its own 1\/1 not counted\)/,
      );
      expect(openSandboxCount()).toBe(0);
    } finally {
      await server.close();
    }
  });

  it("overturns the value model's choice: without fix-a, fix-b is chosen by wrong-c's test it passes", async () => {
    const server = await world.start();
    try {
      const off = await server.app.inject({
        method: 'POST',
        url: '/rerank',
        payload: body({ regression: true, pool_tests: { enabled: false } }, ['b', 'c', 'd']),
      });
      expect(off.statusCode, off.body).toBe(200);
      // The bundled value model alone prefers a wrong candidate here.
      expect(off.json().selection.chosen).not.toBe('fix-b');
      const on = await server.app.inject({ method: 'POST', url: '/rerank', payload: body({ regression: true }, ['b', 'c', 'd']) });
      expect(on.statusCode, on.body).toBe(200);
      expect(on.json().selection.chosen).toBe('fix-b');
      // fix-b's own test passes with fix-b alone: valid, but worth nothing to anyone.
      expect(on.json().checks.pool_tests.scores.map((s: { index: number; score: number }) => [s.index, s.score])).toEqual([
        [0, 1],
        [1, 0],
        [2, 0],
      ]);
    } finally {
      await server.close();
    }
  });

  it('leaves out the tests of a changed file that already failed on base before the writer touched it', async () => {
    const broken = join(root, 'broken');
    execFileSync('mkdir', ['-p', broken]);
    const tests = `${TESTS}\n\ndef test_environment():\n    assert False, 'fails here whatever the patch'\n`;
    commitRepo(broken, { ...FILES, 'tests/test_ops.py': tests }, 'base');
    const fixA = stagedDiff(broken, join(root, 'broken-a'), {
      'src/calc/ops.py': fixed,
      'tests/test_ops.py': `${tests}\n\ndef test_add_negative():\n    assert add(-1, 1) == 0\n`,
    });
    const fixB = stagedDiff(broken, join(root, 'broken-b'), { 'src/calc/ops.py': fixed });
    const server = await world.start();
    try {
      const response = await server.app.inject({
        method: 'POST',
        url: '/rerank',
        payload: {
          task: { instance_id: 'demo__calc-4', problem_statement: 'add() subtracts instead of adding', repo: { path: broken } },
          checks: { regression: false },
          candidates: [
            { id: 'fix-a', patch: fixA },
            { id: 'fix-b', patch: fixB },
          ],
        },
      });
      expect(response.statusCode, response.body).toBe(200);
      const [test] = response.json().checks.pool_tests.tests;
      expect(test).toMatchObject({
        valid: true,
        ids: ['tests/test_ops.py::test_add_negative'],
        already_failing: ['tests/test_ops.py::test_environment'],
      });
      expect(response.json().checks.pool_tests.scores[1]).toMatchObject({ index: 1, score: 1, passed: 1 });
    } finally {
      await server.close();
    }
  });

  it('pool_tests: max_tests and budget_s are honoured', async () => {
    const server = await world.start();
    try {
      const capped = await server.app.inject({
        method: 'POST',
        url: '/rerank',
        payload: body({ regression: false, pool_tests: { max_tests: 1 } }),
      });
      expect(capped.statusCode, capped.body).toBe(200);
      const pool = capped.json().checks.pool_tests;
      expect(pool.tests.filter((test: { valid: boolean }) => test.valid).map((test: { writer: number }) => test.writer)).toEqual([0]);
      for (const test of pool.tests.slice(1)) expect(test.discard_reason).toBe('not run: over verify.pool_tests.max_tests (1)');
      expect(pool.matrix).toHaveLength(4);

      const spent = await server.app.inject({
        method: 'POST',
        url: '/rerank',
        payload: body({ regression: false, pool_tests: { budget_s: 0.001 } }),
      });
      expect(spent.statusCode, spent.body).toBe(200);
      const none = spent.json().checks.pool_tests;
      expect(none.matrix).toEqual([]);
      for (const test of none.tests) expect(test.discard_reason).toBe('not run: verify.pool_tests.budget_s was spent');
    } finally {
      await server.close();
    }
  });

  it('pool_tests: enabled false turns it off; a bad field is a 400 naming it', async () => {
    const server = await world.start();
    try {
      const off = await server.app.inject({
        method: 'POST',
        url: '/rerank',
        payload: body({ regression: true, pool_tests: { enabled: false } }),
      });
      expect(off.statusCode, off.body).toBe(200);
      expect(off.json().checks.pool_tests).toBeNull();
      expect(off.json().checks.regression).not.toBeNull();
      const none = await server.app.inject({
        method: 'POST',
        url: '/rerank',
        payload: body({ regression: false, pool_tests: { enabled: false } }),
      });
      expect(none.statusCode).toBe(400);
      expect(none.body).toContain('every check is off');
      const bad = await server.app.inject({ method: 'POST', url: '/rerank', payload: body({ pool_tests: { max_tests: 0 } }) });
      expect(bad.statusCode).toBe(400);
      expect(bad.body).toContain('checks.pool_tests.max_tests');
      const unknown = await server.app.inject({ method: 'POST', url: '/rerank', payload: body({ pool_tests: { budget: 5 } }) });
      expect(unknown.statusCode).toBe(400);
      expect(unknown.body).toContain('budget');
    } finally {
      await server.close();
    }
  });
});
