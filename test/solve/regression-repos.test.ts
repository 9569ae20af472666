/**
 * Issue 33, the regression check's defects, on small real-shaped repositories (test/verify/suite-repos.ts)
 * checked by the pool-check stage (src/solve/pool-checks.ts, what `/rerank` with `checks` runs) in
 * local sandboxes: a given command no parser reads is graded by exit code (D1b), tests a patch
 * deletes or renames are removed, not regressions (D3), a package.json test script does not win
 * over a Python suite (D5), a run that compared nothing is never "breaks no test", related tests
 * with a given command, and each candidate's cost.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPolicyFactory } from '../../src/rollout/policy/policy-factory.js';
import { openSandboxCount } from '../../src/sandbox/lifecycle.js';
import { createLocalProvider } from '../../src/sandbox/providers/local/provider.js';
import type { SandboxProvider } from '../../src/sandbox/types.js';
import { checkPool, type PoolChecks } from '../../src/solve/pool-checks.js';
import { createSqliteStore } from '../../src/store/sqlite-store.js';
import type { JobStore } from '../../src/store/types.js';
import type { CandidateRegressions } from '../../src/types/checks.js';
import type { Trajectory } from '../../src/types/trajectory.js';
import {
  DJANGO_EXECUTABLE,
  DJANGO_FILES,
  KARMA_FILES,
  OPS_PY,
  SHELL_FILES,
  SRC_LAYOUT_FILES,
  SYMPY_ADD_TESTS,
  SYMPY_EXECUTABLE,
  SYMPY_FILES,
  type SuiteRepo,
  suiteRepos,
  TEXT_PY,
  TEXT_TESTS,
} from '../verify/suite-repos.js';
import { hasBubblewrap } from './helpers.js';
import { hasPytest } from '../support/python.js';

const trajectory = (id: string, patch: string): Trajectory => ({
  format: 'winnower-trajectory-1',
  id,
  instance_id: 'demo__suite-1',
  source: 'test',
  messages: [],
  patch,
  exit: 'submitted',
  meta: {},
});

describe.skipIf(!hasBubblewrap() || !hasPytest())('the regression check on real-shaped repositories', () => {
  let repos: ReturnType<typeof suiteRepos>;
  let sandboxes: SandboxProvider;
  let store: JobStore;
  let dataDir: string;

  beforeAll(() => {
    repos = suiteRepos();
    sandboxes = createLocalProvider();
    dataDir = mkdtempSync(join(tmpdir(), 'wnw-regression-repos-'));
    store = createSqliteStore(dataDir);
  });
  afterAll(async () => {
    await sandboxes?.close();
    store?.close();
    repos?.cleanup();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  const check = async (
    repo: SuiteRepo,
    candidates: Record<string, string>,
    options: { test_command?: string; budget_s?: number } = {},
  ): Promise<PoolChecks & { byId: Record<string, CandidateRegressions> }> => {
    const result = await checkPool(
      { sandboxes, store, createPolicy: createPolicyFactory() },
      {
        instance_id: 'demo__suite-1',
        problem_statement: 'a bug',
        repo: { path: repo.path },
        fail_to_pass: [],
        pass_to_pass: [],
        meta: {},
        ...(options.test_command ? { test_command: options.test_command } : {}),
      },
      Object.entries(candidates).map(([id, patch]) => trajectory(id, patch)),
      { regression: { enabled: true, ...(options.budget_s ? { budget_s: options.budget_s } : {}) }, signal: new AbortController().signal },
    );
    const byId = Object.fromEntries((result.evidence.regression?.candidates ?? []).map((c) => [c.trajectory_id, c]));
    expect(openSandboxCount()).toBe(0);
    return { ...result, byId };
  };

  it('D1b: grades a given shell suite by exit code, so breaking its only test is a regression', async () => {
    const repo = repos.make('shell', SHELL_FILES);
    const result = await check(
      repo,
      {
        breaks: repo.patch({ write: { 'calc.sh': 'add() {\n  echo $(($1 - $2))\n}\n' } }),
        keeps: repo.patch({ write: { 'calc.sh': 'add() {\n  echo $(($2 + $1))\n}\n' } }),
      },
      { test_command: 'sh tests/check_add.sh' },
    );
    const base = result.evidence.regression?.base;
    expect(base).toMatchObject({ runner: 'given', parser: 'exit-code', command: 'sh tests/check_add.sh', scope: 'full', passed: 1 });
    expect(base?.error).toBeUndefined();
    expect(base?.grading_reason).toMatch(/pytest parser found no test.*graded by its exit code/);
    expect(result.byId.breaks).toMatchObject({
      status: 'checked',
      compared: 1,
      regressions: [{ test: 'sh tests/check_add.sh', base: 'passed', candidate: 'failed' }],
    });
    expect(result.byId.keeps).toMatchObject({ status: 'checked', compared: 1, regressions: [] });
    expect(result.checks.get('breaks')?.regressions).toBe(1);
    expect(result.checks.get('keeps')?.regressions).toBe(0);
  }, 120_000);

  it('says a given command over budget_s whose runner selects no files could not be narrowed, not "breaks no test"', async () => {
    const repo = repos.make('shell-slow', SHELL_FILES);
    const result = await check(
      repo,
      { breaks: repo.patch({ write: { 'calc.sh': 'add() {\n  echo 0\n}\n' } }) },
      { test_command: 'sh tests/check_add.sh', budget_s: 0.001 },
    );
    expect(result.evidence.regression?.base).toMatchObject({ scope: 'related' });
    expect(result.byId.breaks).toMatchObject({ status: 'not_compared', compared: 0 });
    expect(result.byId.breaks?.error).toMatch(/does not fit verify\.regression\.budget_s, and no subset could be chosen/);
    expect(result.checks.get('breaks')?.regressions).toBeNull();
  }, 120_000);

  it('D3: a Django-style test renamed or a test file deleted by the patch is removed, not a regression', async () => {
    const repo = repos.make('django', DJANGO_FILES, DJANGO_EXECUTABLE);
    const renamed = TEXT_TESTS.replace('def test_slugify', 'def test_slugify_spaces');
    const result = await check(repo, {
      renames: repo.patch({ write: { 'tests/utils_tests/tests.py': renamed } }),
      deletes: repo.patch({
        delete: ['tests/html_tests/tests.py'],
        write: { 'django/utils/html.py': 'def escape(text):\n    return text\n' },
      }),
      breaks: repo.patch({ write: { 'django/utils/text.py': TEXT_PY.replace('x[:1].upper()', 'x[:1]') } }),
    });
    expect(result.evidence.regression?.base).toMatchObject({ runner: 'django', parser: 'django', scope: 'full', passed: 3 });
    const { renames, deletes, breaks } = result.byId;
    expect(renames).toMatchObject({ status: 'checked', regressions: [], compared: 2 });
    expect(renames?.removed).toEqual([
      { test: expect.stringMatching(/^test_slugify \(utils_tests\.tests\.TextTests/), file: 'tests/utils_tests/tests.py' },
    ]);
    expect(deletes).toMatchObject({ status: 'checked', regressions: [] });
    expect(deletes?.removed).toEqual([
      { test: expect.stringMatching(/^test_escape \(html_tests\.tests\.EscapeTests/), file: 'tests/html_tests/tests.py' },
    ]);
    expect(breaks?.regressions.map((r) => r.test)).toEqual([expect.stringMatching(/^test_capfirst \(utils_tests\.tests\.TextTests/)]);
    expect(breaks?.removed).toEqual([]);
    // Selection reads no regression for a removal (the tamper check judges it).
    expect(result.checks.get('renames')?.regressions).toBe(0);
    expect(result.checks.get('breaks')?.regressions).toBe(1);
  }, 180_000);

  it('runs the related Django modules with a given runtests.py command over budget_s', async () => {
    const repo = repos.make('django-related', DJANGO_FILES, DJANGO_EXECUTABLE);
    const result = await check(
      repo,
      {
        breaks: repo.patch({ write: { 'django/utils/text.py': TEXT_PY.replace('x[:1].upper()', 'x[:1]') } }),
        fixes: repo.patch({ write: { 'django/utils/text.py': `${TEXT_PY}\n\ndef unused():\n    return None\n` } }),
      },
      { test_command: 'python3 tests/runtests.py --settings=test_sqlite --parallel 1 --verbosity 2', budget_s: 0.001 },
    );
    expect(result.evidence.regression?.base).toMatchObject({ runner: 'given', scope: 'related' });
    // django/utils/text.py: tests/utils_tests/tests.py imports it; html_tests does not run.
    expect(result.byId.breaks).toMatchObject({ status: 'checked', scope: 'related', compared: 2 });
    expect(result.byId.breaks?.regressions.map((r) => r.test)).toEqual([expect.stringMatching(/^test_capfirst \(utils_tests\.tests/)]);
    expect(result.byId.fixes).toMatchObject({ status: 'checked', compared: 2, regressions: [] });
    // The first candidate to need the subset paid for its two base runs: each costs sandbox time,
    // and the checks' cost is the base's plus the candidates'.
    const candidates = Object.values(result.byId);
    for (const c of candidates) expect(c.sandbox_ms).toBeGreaterThan(0);
    expect(result.evidence.cost.sandbox_ms).toBe(
      (result.evidence.regression?.base?.duration_ms ?? 0) + candidates.reduce((sum, c) => sum + (c.sandbox_ms ?? 0), 0),
    );
  }, 180_000);

  it('D3 on SymPy-style bin/test: a test function the patch drops from its file is removed', async () => {
    const repo = repos.make('sympy', SYMPY_FILES, SYMPY_EXECUTABLE);
    const result = await check(repo, {
      drops: repo.patch({
        write: { 'sympy/core/tests/test_add.py': SYMPY_ADD_TESTS.replace(/\n\n\ndef test_add_zero\(\):\n.*\n$/, '\n') },
      }),
      breaks: repo.patch({ write: { 'sympy/core/add.py': 'def add(a, b):\n    return a + b + 1\n' } }),
    });
    expect(result.evidence.regression?.base).toMatchObject({ runner: 'sympy', parser: 'sympy', passed: 3 });
    expect(result.byId.drops).toMatchObject({
      status: 'checked',
      regressions: [],
      removed: [{ test: 'test_add_zero', file: 'sympy/core/tests/test_add.py' }],
    });
    expect(result.byId.breaks?.regressions.map((r) => r.test)).toEqual(['test_add_ints', 'test_add_zero']);
  }, 120_000);

  it('runs the related SymPy files with a given bin/test command over budget_s', async () => {
    const repo = repos.make('sympy-related', SYMPY_FILES, SYMPY_EXECUTABLE);
    const result = await check(
      repo,
      { breaks: repo.patch({ write: { 'sympy/sets/union.py': 'def union(a, b):\n    return list(a) + list(b)\n' } }) },
      { test_command: 'bin/test -C --verbose sympy', budget_s: 0.001 },
    );
    expect(result.byId.breaks).toMatchObject({ status: 'checked', scope: 'related', compared: 1, regressions: [{ test: 'test_union' }] });
  }, 120_000);

  it('src layout: a deleted test file is removed; a related subset passing nothing on base compares nothing', async () => {
    const repo = repos.make('src-layout', SRC_LAYOUT_FILES);
    const full = await check(repo, {
      deletes: repo.patch({ delete: ['tests/test_legacy.py'] }),
      breaks: repo.patch({ write: { 'src/pkg/ops.py': OPS_PY.replace('a * b', 'a + b') } }),
    });
    expect(full.evidence.regression?.base).toMatchObject({ runner: 'pytest', passed: 3 });
    expect(full.byId.deletes).toMatchObject({
      status: 'checked',
      regressions: [],
      compared: 2,
      removed: [{ test: 'tests/test_legacy.py::test_add_legacy', file: 'tests/test_legacy.py' }],
    });
    expect(full.byId.breaks?.regressions.map((r) => r.test)).toEqual(['tests/test_ops.py::test_mul']);

    const related = await check(
      repo,
      {
        // src/pkg/div.py: only tests/test_div.py is related, and its one test fails on base.
        div: repo.patch({ write: { 'src/pkg/div.py': 'def div(a, b):\n    return a // b\n' } }),
        breaks: repo.patch({ write: { 'src/pkg/ops.py': OPS_PY.replace('a * b', 'a + b') } }),
      },
      { test_command: 'python3 -m pytest -rA --tb=short -p no:cacheprovider tests', budget_s: 0.001 },
    );
    expect(related.byId.div).toMatchObject({ status: 'not_compared', compared: 0, regressions: [] });
    expect(related.byId.div?.error).toMatch(/passed in both base runs, so there was nothing to compare/);
    expect(related.checks.get('div')?.regressions).toBeNull();
    // The given command's own `tests` path is replaced by the related files, so the subset is a subset.
    expect(related.byId.breaks).toMatchObject({ status: 'checked', scope: 'related', compared: 3 });
    expect(related.byId.breaks?.regressions.map((r) => r.test)).toEqual(['tests/test_ops.py::test_mul']);
  }, 180_000);

  it('D5: a Python repository with a karma test script in package.json runs pytest', async () => {
    const repo = repos.make('karma', KARMA_FILES);
    const result = await check(repo, {
      breaks: repo.patch({ write: { 'docs_tool/util.py': 'def split_words(text):\n    return [text]\n' } }),
    });
    expect(result.evidence.regression?.base).toMatchObject({ runner: 'pytest', passed: 2 });
    expect(result.byId.breaks?.regressions.map((r) => r.test)).toEqual(['tests/test_util.py::test_split_words']);
  }, 120_000);
});
