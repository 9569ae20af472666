/**
 * Tests from the pool through `winnower rerank --repos --verify --no-given-tests`, end to end on
 * the local provider over the Django-shaped repository: four candidates that each add or change a
 * test (django-pool.ts). Without a test list, the two correct fixes are chosen over the wrong fix
 * that passes its own test; the ImportError test is invalid with its reason; the matrix, the
 * clusters' weights and each candidate's sandbox time are in the evidence. `--no-pool-tests`
 * turns the check off, and is refused without --verify.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { type DjangoPool, makeDjangoPool } from './django-pool.js';
import { type DjangoShapedRepo, makeDjangoShapedRepo } from './django-shaped-repo.js';

const jsonl = (rows: unknown[]) => rows.map((row) => JSON.stringify(row)).join('\n') + '\n';
const readJsonl = (file: string) =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line));

const ID = 'django__django-7';

describe('winnower rerank --repos --verify: tests from the pool', () => {
  let repo: DjangoShapedRepo;
  let pool: DjangoPool;
  let dir: string;
  let files: { candidates: string; tasks: string };

  beforeAll(() => {
    repo = makeDjangoShapedRepo();
    pool = makeDjangoPool(repo);
    dir = mkdtempSync(join(tmpdir(), 'wnw-rerank-pool-'));
    files = { candidates: join(dir, 'candidates.jsonl'), tasks: join(dir, 'tasks.jsonl') };
    writeFileSync(
      files.tasks,
      jsonl([
        {
          instance_id: ID,
          repo: 'django/django',
          base_commit: repo.baseCommit,
          problem_statement: 'slugify() should join words with hyphens, not underscores.',
          version: '4.2',
          // Hidden by --no-given-tests: selection as a user without tests has it.
          test_patch: repo.testPatch,
          FAIL_TO_PASS: ['test_slugify (utils_tests.test_text.TestUtilsText)'],
          PASS_TO_PASS: [],
        },
      ]),
    );
    writeFileSync(
      files.candidates,
      jsonl(
        (['a', 'b', 'c', 'd'] as const).map((name) => ({ instance_id: ID, model_name_or_path: `agent-${name}`, model_patch: pool[name] })),
      ),
    );
  });
  afterAll(() => {
    repo?.cleanup();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const rerank = (out: string, ...extra: string[]) =>
    runCli(['rerank', '--candidates', files.candidates, '--tasks', files.tasks, '--out', out, '--no-progress', ...extra], {
      timeoutMs: 300_000,
    });

  it('chooses a fix whose test the other fix passes; the wrong fix gets nothing for its own test', async () => {
    const out = join(dir, 'pool', 'predictions.jsonl');
    const { code, stdout, stderr } = await rerank(out, '--verify', '--repos', repo.reposDir, '--no-given-tests');
    expect(code, stderr).toBe(0);
    const scores = readJsonl(join(dir, 'pool', 'predictions.scores.jsonl'));
    const of = (source: string) => scores.find((line) => line.source === source)!;
    // Three valid tests (A's, B's, C's): each writer runs the two others' and its own, counted apart.
    expect(of('agent-a').checks.pool).toEqual({ score: 2, passed: 1, total: 2, own_passed: 1, own_total: 1, failed_weight: 1 });
    expect(of('agent-b').checks.pool).toEqual({ score: 2, passed: 1, total: 2, own_passed: 1, own_total: 1, failed_weight: 1 });
    // C passes its own test only: counted apart, not in its score.
    expect(of('agent-c').checks.pool).toEqual({ score: 0, passed: 0, total: 2, own_passed: 1, own_total: 1, failed_weight: 4 });
    // D's own test is invalid (ImportError on base): it runs the three valid ones and passes none.
    expect(of('agent-d').checks.pool).toEqual({ score: 0, passed: 0, total: 3, own_passed: 0, own_total: 0, failed_weight: 5 });
    expect(['agent-a', 'agent-b']).toContain(scores.find((line) => line.chosen)!.source);
    expect(readJsonl(out)[0].model_patch).toMatch(/replace\(' ', '-'\)/);

    const evidence = readJsonl(join(dir, 'pool', 'predictions.checks.jsonl'))[0].checks.pool_tests;
    expect(evidence.runner).toBe('given');
    const tests = Object.fromEntries(evidence.tests.map((test: { writer: number }) => [test.writer, test]));
    expect(tests[0]).toMatchObject({
      valid: true,
      base_outcome: 'failed',
      ids: [expect.stringMatching(/^test_slugify \(utils_tests\.test_text\.TestUtilsText/)],
      files: [{ path: 'tests/utils_tests/test_text.py', change: 'changed' }],
      command: expect.stringContaining('utils_tests.test_text'),
    });
    expect(tests[1]).toMatchObject({ valid: true, files: [{ path: 'tests/utils_tests/test_slug.py', change: 'added' }] });
    expect(tests[2]).toMatchObject({ valid: true, ids: [expect.stringMatching(/^test_joined \(utils_tests\.test_slug_join\.JoinTests/)] });
    expect(tests[3]).toMatchObject({ valid: false, base_outcome: 'error' });
    expect(tests[3].discard_reason).toMatch(/errors at collection on the base commit: ImportError: cannot import name 'slugify_unicode'/);
    // A's and B's tests agree (both pass with A and B only): one cluster of weight 2; C's stands alone.
    expect(evidence.clusters).toEqual([
      { writers: [0, 1], passes: [0, 1], weight: 2 },
      { writers: [2], passes: [2], weight: 1 },
    ]);
    // Every candidate ran every valid test: 4 × 3 cells, the writers' own marked.
    expect(evidence.matrix).toHaveLength(12);
    expect(evidence.matrix.filter((cell: { own: boolean }) => cell.own).map((cell: { index: number }) => cell.index)).toEqual([0, 1, 2]);
    expect(evidence.sandbox_ms.map((row: { index: number }) => row.index)).toEqual([0, 1, 2, 3]);
    expect(evidence.sandbox_ms.every((row: { sandbox_ms: number }) => row.sandbox_ms > 0)).toBe(true);
    expect(stdout).toContain('pool tests: 3 valid of the 4 the candidates wrote');
    expect(stdout).toContain('4 candidate(s) ranked by the others');
  });

  it('--no-pool-tests: the check does not run', async () => {
    const out = join(dir, 'off', 'predictions.jsonl');
    const { code, stderr } = await rerank(out, '--verify', '--repos', repo.reposDir, '--no-given-tests', '--no-pool-tests');
    expect(code, stderr).toBe(0);
    expect(readJsonl(join(dir, 'off', 'predictions.checks.jsonl'))[0].checks.pool_tests).toBeNull();
    expect(readJsonl(join(dir, 'off', 'predictions.scores.jsonl')).every((line) => line.checks.pool === undefined)).toBe(true);
  });

  it('--no-regression: the tests from the pool alone still choose a fix; with --no-pool-tests too it is refused', async () => {
    const out = join(dir, 'pool-only', 'predictions.jsonl');
    const { code, stderr } = await rerank(out, '--verify', '--repos', repo.reposDir, '--no-given-tests', '--no-regression');
    expect(code, stderr).toBe(0);
    const evidence = readJsonl(join(dir, 'pool-only', 'predictions.checks.jsonl'))[0].checks;
    expect(evidence.regression).toBeNull();
    expect(evidence.pool_tests.tests.filter((test: { valid: boolean }) => test.valid)).toHaveLength(3);
    const chosen = readJsonl(join(dir, 'pool-only', 'predictions.scores.jsonl')).find((line) => line.chosen);
    expect(['agent-a', 'agent-b']).toContain(chosen.source);
    expect(chosen.checks.regressions).toBeNull();

    const none = await rerank(
      join(dir, 'none', 'predictions.jsonl'),
      '--verify',
      '--repos',
      repo.reposDir,
      '--no-regression',
      '--no-pool-tests',
    );
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('--no-regression with --no-pool-tests leaves no check');
    const budget = await rerank(
      join(dir, 'none', 'predictions.jsonl'),
      '--verify',
      '--repos',
      repo.reposDir,
      '--no-regression',
      '--regression-budget',
      '60',
    );
    expect(budget.code).toBe(2);
    expect(budget.stderr).toContain('--regression-budget shapes the regression check');
    const poolBudget = await rerank(
      join(dir, 'none', 'predictions.jsonl'),
      '--verify',
      '--repos',
      repo.reposDir,
      '--no-pool-tests',
      '--pool-tests-budget',
      '60',
    );
    expect(poolBudget.code).toBe(2);
    expect(poolBudget.stderr).toContain('--pool-tests-budget shapes the tests from the pool, which --no-pool-tests turns off');
  });

  it('refuses the checks budgets when every instance has given tests and --checks is not given: they would be ignored', async () => {
    const out = join(dir, 'unread', 'predictions.jsonl');
    const { code, stderr } = await rerank(
      out,
      '--verify',
      '--repos',
      repo.reposDir,
      '--regression-budget',
      '60',
      '--pool-tests-budget',
      '60',
    );
    expect(code, stderr).toBe(2);
    expect(stderr).toContain(
      '--regression-budget, --pool-tests-budget shape the checks without a test list, which run for no instance here',
    );
    expect(existsSync(out)).toBe(false);
  });

  it('refuses --no-pool-tests without --verify, naming it', async () => {
    const out = join(dir, 'refused', 'predictions.jsonl');
    const { code, stderr } = await rerank(out, '--no-pool-tests');
    expect(code).toBe(2);
    expect(stderr).toContain('--no-pool-tests applies only with --verify');
    expect(existsSync(out)).toBe(false);
  });
});
