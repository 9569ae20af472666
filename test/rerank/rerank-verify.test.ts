/**
 * `winnower rerank --repos --verify` runs the code, end to end through the CLI on the local
 * provider, over a Django-shaped repository (django-shaped-repo.ts): the built-in recipe runs its
 * `tests/runtests.py`; with the given tests the only correct candidate is chosen and the verdicts
 * equal the labels; an instance whose repository is missing, or whose base run names none of its
 * listed tests, "could not run" (no candidate unresolved); `--no-given-tests` runs the regression
 * check instead; `--harness-compat` grades with the harness's procedure; a rerun resumes with the
 * evidence kept; --verify-only flags are refused without it.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { type DjangoShapedRepo, makeDjangoShapedRepo } from './django-shaped-repo.js';

const jsonl = (rows: unknown[]) => rows.map((row) => JSON.stringify(row)).join('\n') + '\n';
const readJsonl = (file: string) =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line));

const F2P = 'test_slugify (utils_tests.test_text.TestUtilsText)';
const P2P = 'test_capfirst (utils_tests.test_text.TestUtilsText)';

describe('winnower rerank --repos --verify', () => {
  let repo: DjangoShapedRepo;
  let dir: string;
  let files: { candidates: string; tasks: string; labels: string };

  beforeAll(() => {
    repo = makeDjangoShapedRepo();
    dir = mkdtempSync(join(tmpdir(), 'wnw-rerank-verify-'));
    const task = (instance_id: string, fields: Record<string, unknown>) => ({
      instance_id,
      repo: instance_id.startsWith('sympy') ? 'sympy/sympy' : 'django/django',
      base_commit: repo.baseCommit,
      problem_statement: 'slugify() should join words with hyphens, not underscores.',
      version: '4.2',
      ...fields,
    });
    const candidate = (instance_id: string, source: string, patch: string) => ({
      instance_id,
      model_name_or_path: source,
      model_patch: patch,
    });
    files = { candidates: join(dir, 'candidates.jsonl'), tasks: join(dir, 'tasks.jsonl'), labels: join(dir, 'labels.jsonl') };
    const instances = ['django__django-1', 'django__django-2', 'sympy__sympy-1'];
    writeFileSync(
      files.tasks,
      jsonl([
        task('django__django-1', { test_patch: repo.testPatch, FAIL_TO_PASS: [F2P], PASS_TO_PASS: [P2P] }),
        // Lists a test no file defines: the base run can name none of them.
        task('django__django-2', { FAIL_TO_PASS: ['test_gone (utils_tests.test_missing.Gone)'], PASS_TO_PASS: [] }),
        task('sympy__sympy-1', { FAIL_TO_PASS: ['test_x'], PASS_TO_PASS: [] }),
      ]),
    );
    writeFileSync(
      files.candidates,
      jsonl(
        instances.flatMap((id) => [
          candidate(id, 'agent-a', repo.patches.correct),
          candidate(id, 'agent-b', repo.patches.wrong),
          candidate(id, 'agent-c', repo.patches.breaks),
        ]),
      ),
    );
    writeFileSync(
      files.labels,
      jsonl([
        { instance_id: 'django__django-1', source: 'agent-a', resolved: true },
        { instance_id: 'django__django-1', source: 'agent-b', resolved: false },
        { instance_id: 'django__django-1', source: 'agent-c', resolved: false },
      ]),
    );
  });
  afterAll(() => {
    repo?.cleanup();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const rerank = (out: string, ...extra: string[]) =>
    runCli(
      [
        'rerank',
        '--candidates',
        files.candidates,
        '--tasks',
        files.tasks,
        '--labels',
        files.labels,
        '--out',
        out,
        '--no-progress',
        ...extra,
      ],
      { timeoutMs: 300_000 },
    );

  it('grades every candidate with the given tests, chooses the resolved one, and says what could not run', async () => {
    const out = join(dir, 'given', 'predictions.jsonl');
    const { code, stdout, stderr } = await rerank(out, '--verify', '--repos', repo.reposDir);
    expect(code, stderr).toBe(0);
    const predictions = new Map(readJsonl(out).map((row) => [row.instance_id, row]));
    expect(predictions.get('django__django-1').model_patch).toBe(repo.patches.correct);

    const scores = readJsonl(join(dir, 'given', 'predictions.scores.jsonl'));
    const verdict = (instance: string, source: string) =>
      scores.find((line) => line.instance_id === instance && line.source === source)?.verify;
    expect(verdict('django__django-1', 'agent-a')).toMatchObject({ status: 'resolved', parser: 'django' });
    expect(verdict('django__django-1', 'agent-b')).toMatchObject({ status: 'unresolved', fail_to_pass: { passed: 0, failed: 1 } });
    expect(verdict('django__django-1', 'agent-c')).toMatchObject({
      status: 'unresolved',
      fail_to_pass: { passed: 1 },
      pass_to_pass: { failed: 1 },
    });
    // Could not run: no verdict at all, never "unresolved".
    for (const instance of ['django__django-2', 'sympy__sympy-1'])
      for (const source of ['agent-a', 'agent-b', 'agent-c']) expect(verdict(instance, source)).toBeNull();

    const evidence = new Map(readJsonl(join(dir, 'given', 'predictions.checks.jsonl')).map((row) => [row.instance_id, row]));
    expect(evidence.get('django__django-1')).toMatchObject({
      could_not_run: null,
      base: { fail_to_pass: { failed: 1 }, pass_to_pass: { passed: 1 } },
      environment_failures: [],
    });
    expect(evidence.get('django__django-1').sandbox_ms).toBeGreaterThan(0);
    expect(evidence.get('django__django-2').could_not_run).toMatch(/named none of the listed tests \(parser django/);
    expect(evidence.get('sympy__sympy-1').could_not_run).toMatch(/sympy\/sympy: none of sympy__sympy\.git/);
    expect(stdout).toContain('verification agrees with the labels on 3/3 graded candidates (100.0%)');
    expect(stdout).toContain('2 instance(s) could not run');

    // A rerun keeps what is done: nothing runs again, the evidence stays.
    const again = await rerank(out, '--verify', '--repos', repo.reposDir);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain('(3 resumed)');
    expect(readJsonl(join(dir, 'given', 'predictions.checks.jsonl'))).toHaveLength(3);
    expect(again.stdout).toContain('verification agrees with the labels on 3/3');
  });

  it('--no-given-tests: the regression check over the whole suite demotes the candidate that breaks a test', async () => {
    const out = join(dir, 'no-tests', 'predictions.jsonl');
    const { code, stdout, stderr } = await rerank(out, '--verify', '--repos', repo.reposDir, '--no-given-tests');
    expect(code, stderr).toBe(0);
    const scores = readJsonl(join(dir, 'no-tests', 'predictions.scores.jsonl')).filter((line) => line.instance_id === 'django__django-1');
    const checksOf = (source: string) => scores.find((line) => line.source === source)!.checks;
    expect(checksOf('agent-c')).toMatchObject({ regressions: 1 });
    expect(checksOf('agent-a')).toMatchObject({ regressions: 0 });
    expect(scores.every((line) => line.verify === null)).toBe(true);
    const chosen = scores.find((line) => line.chosen)!;
    expect(chosen.source).not.toBe('agent-c');
    const evidence = readJsonl(join(dir, 'no-tests', 'predictions.checks.jsonl')).find((row) => row.instance_id === 'django__django-1');
    expect(evidence.base).toBeNull();
    expect(evidence.checks.regression.base).toMatchObject({ scope: 'full', command: expect.stringContaining('tests/runtests.py') });
    expect(evidence.checks.regression.base.passed).toBeGreaterThan(0);
    // django__django-2 is checked too: its listed tests were hidden, its suite runs.
    expect(stdout).toMatch(/6 by the regression check \(2 broke a test\)/);
  });

  it('--no-given-tests --verify-parser: the regression check reads the suite with that parser', async () => {
    const out = join(dir, 'no-tests-parser', 'predictions.jsonl');
    const { code, stderr } = await rerank(out, '--verify', '--repos', repo.reposDir, '--no-given-tests', '--verify-parser', 'exit-code');
    expect(code, stderr).toBe(0);
    const evidence = readJsonl(join(dir, 'no-tests-parser', 'predictions.checks.jsonl')).find(
      (row) => row.instance_id === 'django__django-1',
    );
    expect(evidence.checks.regression.base).toMatchObject({
      parser: 'exit-code',
      grading_reason: 'the exit-code parser was asked for',
      command: expect.stringContaining('tests/runtests.py'),
    });
    const scores = readJsonl(join(dir, 'no-tests-parser', 'predictions.scores.jsonl')).filter(
      (line) => line.instance_id === 'django__django-1',
    );
    // The whole suite is one test: the candidate that breaks capfirst fails it.
    expect(scores.find((line) => line.source === 'agent-c')!.checks).toMatchObject({ regressions: 1 });
  });

  it('refuses --verify-only flags without --verify, naming them', async () => {
    const out = join(dir, 'refused', 'predictions.jsonl');
    const { code, stderr } = await rerank(out, '--repos', repo.reposDir, '--no-given-tests');
    expect(code).toBe(2);
    expect(stderr).toContain('--repos, --no-given-tests apply only with --verify');
    expect(existsSync(out)).toBe(false);
  });

  it('--harness-compat: the given tests are put in place as the SWE-bench harness does, and the verdicts say so', async () => {
    const out = join(dir, 'harness', 'predictions.jsonl');
    const { code, stderr } = await rerank(out, '--verify', '--repos', repo.reposDir, '--harness-compat');
    expect(code, stderr).toBe(0);
    const scores = readJsonl(join(dir, 'harness', 'predictions.scores.jsonl')).filter((line) => line.instance_id === 'django__django-1');
    const verdict = (source: string) => scores.find((line) => line.source === source)?.verify;
    expect(verdict('agent-a')).toMatchObject({ status: 'resolved', procedure: 'harness' });
    expect(verdict('agent-b')).toMatchObject({ status: 'unresolved', procedure: 'harness' });
  });

  it('refuses --harness-compat without --verify, and with --no-given-tests, naming it', async () => {
    const alone = await rerank(join(dir, 'refused-hc', 'p.jsonl'), '--harness-compat');
    expect(alone.code).toBe(2);
    expect(alone.stderr).toContain('--harness-compat applies only with --verify');
    const hidden = await rerank(
      join(dir, 'refused-hc2', 'p.jsonl'),
      '--verify',
      '--repos',
      repo.reposDir,
      '--no-given-tests',
      '--harness-compat',
    );
    expect(hidden.code).toBe(2);
    expect(hidden.stderr).toContain('--harness-compat needs the given tests');
  });

  it('--recipes: a bad entry is refused naming the file and the entry', async () => {
    const recipes = join(dir, 'recipes.json');
    writeFileSync(recipes, JSON.stringify({ 'django/django': { parser: 'nose' } }));
    const { code, stderr } = await rerank(join(dir, 'bad-recipes', 'p.jsonl'), '--verify', '--repos', repo.reposDir, '--recipes', recipes);
    expect(code).toBe(2);
    expect(stderr).toContain(`--recipes: ${recipes}: django/django.parser`);
  });
});
