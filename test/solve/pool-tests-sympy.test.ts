/**
 * Tests from the pool on a SymPy-shaped repository (`bin/test` over `sympy/`, test-suite.ts's
 * detection; test/verify/suite-repos.ts), through the pool-check stage (src/solve/pool-checks.ts):
 * the writers' files run with `bin/test <files>`, a changed test file's tests that already failed
 * on base are left out, and the fixes rank by each other's tests (docs/checks.md#tests-from-the-pool).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPolicyFactory } from '../../src/rollout/policy/policy-factory.js';
import { openSandboxCount } from '../../src/sandbox/lifecycle.js';
import { createLocalProvider } from '../../src/sandbox/providers/local/provider.js';
import type { SandboxProvider } from '../../src/sandbox/types.js';
import { checkPool } from '../../src/solve/pool-checks.js';
import { createSqliteStore } from '../../src/store/sqlite-store.js';
import type { JobStore } from '../../src/store/types.js';
import type { Trajectory } from '../../src/types/trajectory.js';
import { SYMPY_ADD_TESTS, SYMPY_EXECUTABLE, SYMPY_FILES, suiteRepos } from '../verify/suite-repos.js';
import { hasBubblewrap } from './helpers.js';

const trajectory = (id: string, patch: string): Trajectory => ({
  format: 'winnower-trajectory-1',
  id,
  instance_id: 'sympy__sympy-9',
  source: 'test',
  messages: [],
  patch,
  exit: 'submitted',
  meta: {},
});

const ADD = 'sympy/core/add.py';
const newTest = (name: string, body: string) => `from sympy.core.add import add\n\n\ndef ${name}():\n    ${body}\n`;

describe.skipIf(!hasBubblewrap())('tests from the pool on a SymPy-shaped repository', () => {
  let repos: ReturnType<typeof suiteRepos>;
  let sandboxes: SandboxProvider;
  let store: JobStore;
  let dataDir: string;

  beforeAll(() => {
    repos = suiteRepos();
    sandboxes = createLocalProvider();
    dataDir = mkdtempSync(join(tmpdir(), 'wnw-pool-sympy-'));
    store = createSqliteStore(dataDir);
  });
  afterAll(async () => {
    await sandboxes?.close();
    store?.close();
    repos?.cleanup();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it("runs the writers' files with bin/test and ranks the fixes by the tests they pass", async () => {
    // The bug: add subtracts, so the repository's own add tests fail on base already.
    const repo = repos.make('sympy-pool', { ...SYMPY_FILES, [ADD]: 'def add(a, b):\n    return a - b\n' }, SYMPY_EXECUTABLE);
    const fixed = 'def add(a, b):\n    return a + b\n';
    const patches = {
      'fix-a': repo.patch({
        write: {
          [ADD]: fixed,
          'sympy/core/tests/test_add.py': `${SYMPY_ADD_TESTS}\n\ndef test_add_negative():\n    assert add(-1, 1) == 0\n`,
        },
      }),
      'fix-b': repo.patch({
        write: { [ADD]: fixed, 'sympy/core/tests/test_add_more.py': newTest('test_both_negative', 'assert add(-2, -3) == -5') },
      }),
      'wrong-c': repo.patch({
        write: {
          [ADD]: 'def add(a, b):\n    return abs(a) + abs(b)\n',
          'sympy/core/tests/test_add_positive.py': newTest('test_positive', 'assert add(2, 3) == 5'),
        },
      }),
    };
    const result = await checkPool(
      { sandboxes, store, createPolicy: createPolicyFactory() },
      {
        instance_id: 'sympy__sympy-9',
        problem_statement: 'add subtracts',
        repo: { path: repo.path },
        fail_to_pass: [],
        pass_to_pass: [],
        meta: {},
      },
      Object.entries(patches).map(([id, patch]) => trajectory(id, patch)),
      { regression: { enabled: false }, signal: new AbortController().signal },
    );
    expect(openSandboxCount()).toBe(0);
    const pool = result.evidence.pool_tests!;
    expect(pool.runner).toBe('sympy');
    const [a, b, c] = pool.tests;
    // A's changed file: its two old tests fail on base with and without A's change; only its new one counts.
    expect(a).toMatchObject({ valid: true, ids: ['test_add_negative'], command: expect.stringContaining('bin/test') });
    expect(a!.already_failing?.sort()).toEqual(['test_add_ints', 'test_add_zero']);
    expect(b).toMatchObject({ valid: true, ids: ['test_both_negative'] });
    expect(c).toMatchObject({ valid: true, ids: ['test_positive'] });
    expect(result.checks.get('fix-a')?.pool).toEqual({ score: 3, passed: 2, total: 2, own_passed: 1, own_total: 1, failed_weight: 0 });
    expect(result.checks.get('fix-b')?.pool).toEqual({ score: 3, passed: 2, total: 2, own_passed: 1, own_total: 1, failed_weight: 0 });
    expect(result.checks.get('wrong-c')?.pool).toEqual({ score: 0, passed: 0, total: 2, own_passed: 1, own_total: 1, failed_weight: 4 });
  });
});
