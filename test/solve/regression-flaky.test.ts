/**
 * Flaky tests in the regression check: a test whose two base runs differ is ignored and listed,
 * on the base and on each candidate it was ignored for. The fake provider (test/verify/fake-sandbox.ts)
 * runs every sandbox on the host, so a test can make "the first run to get here" pass and every
 * later one fail through a marker folder outside the repository.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPolicyFactory } from '../../src/rollout/policy/policy-factory.js';
import { checkPool } from '../../src/solve/pool-checks.js';
import { createSqliteStore } from '../../src/store/sqlite-store.js';
import type { JobStore } from '../../src/store/types.js';
import { FakeProvider } from '../verify/fake-sandbox.js';
import { suiteRepos } from '../verify/suite-repos.js';
import { hostHasPytest } from '../support/python.js';

// The fake provider runs the suite with this process's python3, not the sandbox's.
describe.skipIf(!hostHasPytest())('flaky tests in the regression check', () => {
  let repos: ReturnType<typeof suiteRepos>;
  let scratch: string;
  let store: JobStore;

  beforeAll(() => {
    repos = suiteRepos();
    scratch = mkdtempSync(join(tmpdir(), 'wnw-flaky-'));
    store = createSqliteStore(join(scratch, 'data'));
  });
  afterAll(() => {
    store?.close();
    repos?.cleanup();
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  it('ignores and lists a test whose two base runs differ, on the base and on the candidate', async () => {
    const marker = join(scratch, 'ran-once');
    const tests = [
      'import os',
      '',
      'from pkg.ops import add',
      '',
      '',
      'def test_once():',
      `    os.mkdir(${JSON.stringify(marker)})`,
      '',
      '',
      'def test_add():',
      '    assert add(2, 3) == 5',
      '',
    ].join('\n');
    const repo = repos.make('flaky', {
      'pkg/__init__.py': '',
      'pkg/ops.py': 'def add(a, b):\n    return a + b\n',
      'tests/test_ops.py': tests,
    });
    const sandboxes = new FakeProvider();
    try {
      const result = await checkPool(
        { sandboxes, store, createPolicy: createPolicyFactory() },
        { instance_id: 'demo__flaky-1', problem_statement: 'x', repo: { path: repo.path }, fail_to_pass: [], pass_to_pass: [], meta: {} },
        [
          {
            format: 'winnower-trajectory-1',
            id: 'edit',
            instance_id: 'demo__flaky-1',
            source: 'test',
            messages: [],
            patch: repo.patch({ write: { 'pkg/ops.py': 'def add(a, b):\n    return b + a\n' } }),
            exit: 'submitted',
            meta: {},
          },
        ],
        { regression: { enabled: true }, signal: new AbortController().signal },
      );
      const regression = result.evidence.regression;
      expect(regression?.base).toMatchObject({ runner: 'pytest', scope: 'full', passed: 1, flaky: ['tests/test_ops.py::test_once'] });
      // test_once fails with the candidate (the marker exists), but a flaky test is no regression.
      expect(regression?.candidates[0]).toMatchObject({
        status: 'checked',
        compared: 1,
        regressions: [],
        flaky: ['tests/test_ops.py::test_once'],
      });
      expect(result.checks.get('edit')?.regressions).toBe(0);
    } finally {
      await sandboxes.close();
    }
  }, 120_000);
});
