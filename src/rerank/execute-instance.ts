/**
 * Stage 3b of batch reranking with `--verify`: the instance's code is run. Its repository is found
 * in `--repos` and checked out at the base commit in sandboxes; then, in order:
 * 1. the base run: the task's listed tests on the unfixed code with the test patch. A base run
 *    that names none of the listed tests (nothing collected, an import error, the wrong runner)
 *    makes the instance "could not run": no candidate is graded, so none is called unresolved;
 * 2. verification of every candidate with the given tests (FAIL_TO_PASS, PASS_TO_PASS, test patch);
 * 3. the checks that need no test list (the regression check and the tests from the pool,
 *    src/solve/pool-checks.ts), when the
 *    task has no given tests, when `--no-given-tests` hides them, or always with `--checks`.
 * docs/rerank.md#running-the-code says what each piece of evidence means.
 */
import { wnwError } from '../errors.js';
import type { SandboxProvider } from '../sandbox/types.js';
import { checkPool, type PoolChecks } from '../solve/pool-checks.js';
import type { SolveDeps } from '../solve/solve-deps.js';
import type { Task, Trajectory, VerifyResult } from '../types/index.js';
import type { ParserName } from '../verify/detect.js';
import { type Recipe, type RecipeTable, recipeFor } from '../verify/recipes.js';
import { verifyMany } from '../verify/verify-candidate.js';
import { findRepository } from './repositories.js';

export interface RerankExecution {
  sandboxes: SandboxProvider;
  /** What the checks without a test list run on (src/solve's stages; no job is stored). */
  deps: SolveDeps;
  /** The folder of repositories (src/rerank/repositories.ts); absent: the tasks' own url or image. */
  reposDir?: string;
  recipes: RecipeTable;
  /** false (`--no-given-tests`): FAIL_TO_PASS, PASS_TO_PASS and the test patch are ignored. */
  givenTests: boolean;
  /** `always` (`--checks`): the checks without a test list run even when the task has tests. */
  checks: 'auto' | 'always';
  /** Sandboxes at once for one instance. */
  concurrency: number;
  testTimeoutMs: number;
  regressionBudgetS: number;
  /** false (`--no-regression`): the checks without a test list are the tests from the pool alone. */
  regression: boolean;
  /** The tests from the pool with their sandbox budget, or false (`--no-pool-tests`). */
  poolTests: { budget_s: number } | false;
  parser?: ParserName;
  /** `--harness-compat`: the given tests are put in place as the SWE-bench harness does (src/verify/test-setup.ts). */
  harnessCompat?: boolean;
  /**
   * The flags given that shape only the checks without a test list (`--regression-budget`,
   * `--no-pool-tests`, ...): refused when those checks run for no instance (refuseUnreadCheckFlags).
   */
  checkFlags?: string[];
}

/** What running an instance's code found (a line of `<out>.checks.jsonl`). */
export interface InstanceExecution {
  instance_id: string;
  /** Where the code came from: a path, a URL or an image. */
  source: string | null;
  /** Why no candidate could be graded, or null. */
  could_not_run: string | null;
  /** The given tests on the base commit with the test patch; null without given tests. */
  base: VerifyResult | null;
  /** PASS_TO_PASS tests that fail on the base here: the environment differs from the harness's. */
  environment_failures: string[];
  /** The regression check and the tests from the pool, with their evidence; null when they did not run. */
  checks: PoolChecks['evidence'] | null;
  /** Summed sandbox time of the base run, the verifications and the checks. */
  sandbox_ms: number;
}

export interface ExecutedInstance {
  evidence: InstanceExecution;
  verify: Map<string, VerifyResult>;
  checks: PoolChecks['checks'];
}

/** The task as the sandboxes run it: its repository from --repos, its recipe, its tests unless hidden. */
export function taskForExecution(task: Task, execution: RerankExecution): { task: Task; recipe?: Recipe; missing?: string } {
  const recipe = recipeFor(execution.recipes, task);
  const shaped: Task = {
    ...task,
    ...(execution.givenTests ? {} : { fail_to_pass: [], pass_to_pass: [], test_patch: undefined }),
    ...(task.test_command === undefined && recipe?.test_command && execution.givenTests ? { test_command: recipe.test_command } : {}),
  };
  if (execution.reposDir === undefined) {
    if (task.image === undefined && task.repo?.url === undefined && task.repo?.path === undefined)
      return { task: shaped, recipe, missing: `${task.instance_id}: no --repos folder, and the task has no image or repository URL` };
    return { task: shaped, recipe };
  }
  const found = findRepository(execution.reposDir, task);
  if ('missing' in found) return { task: shaped, recipe, missing: found.missing };
  // The repository replaces any image: a SWE-bench image_name names an image this host may not have.
  const { image: _image, ...rest } = shaped;
  return { task: { ...rest, repo: found.repo }, recipe };
}

const hasGivenTests = (task: Task) => task.fail_to_pass.length + task.pass_to_pass.length > 0;

/** Whether the checks without a test list run for `task` (undefined: no task record, so no given tests). */
export function checksRunFor(execution: Pick<RerankExecution, 'checks' | 'givenTests'>, task: Task | undefined): boolean {
  return execution.checks === 'always' || !execution.givenTests || task === undefined || !hasGivenTests(task);
}

/**
 * Refuses, naming them, the flags that shape the checks without a test list when those checks
 * run for none of `instances`: every one has given tests and neither `--checks` nor
 * `--no-given-tests` was given, so the flags would be accepted and ignored.
 */
export function refuseUnreadCheckFlags(
  execution: Pick<RerankExecution, 'checks' | 'givenTests' | 'checkFlags'>,
  instances: Iterable<string>,
  taskOf: (instanceId: string) => Task | undefined,
): void {
  const flags = execution.checkFlags ?? [];
  if (flags.length === 0) return;
  for (const id of instances) if (checksRunFor(execution, taskOf(id))) return;
  throw wnwError(
    'WNW_ERR_INPUT_INVALID',
    `${flags.join(', ')} ${flags.length === 1 ? 'shapes' : 'shape'} the checks without a test list, which run for no instance here: every task has given tests (FAIL_TO_PASS, PASS_TO_PASS); add --checks to run them beside the given tests, or --no-given-tests`,
    { details: { field: flags[0]!.replace(/^--(no-)?/, '').replaceAll('-', '_'), refused: flags } },
  );
}

/** Why a base run means the listed tests cannot be graded here (with the log's last lines), or undefined when they can. */
export function baseFailure(base: VerifyResult): string | undefined {
  if (base.status === 'error') return `the base run failed: ${base.error ?? base.apply_error ?? 'error'}`;
  if (base.status === 'timeout' || base.timed_out) return 'the base run timed out';
  const named = base.fail_to_pass.passed + base.fail_to_pass.failed + base.pass_to_pass.passed + base.pass_to_pass.failed;
  if (named === 0 && base.grading !== 'exit-code')
    return `the base run named none of the listed tests (parser ${base.parser}, exit code ${base.exit_code ?? 'none'}): ${lastLines(base.log_tail)}`;
  return undefined;
}

function lastLines(log: string, count = 3): string {
  const lines = log
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);
  return lines.slice(-count).join(' | ').slice(0, 400) || '(no output)';
}

/** Stage 3b for one instance. */
export async function executeInstance(
  execution: RerankExecution,
  task: Task,
  candidates: readonly Trajectory[],
  signal?: AbortSignal,
): Promise<ExecutedInstance> {
  const shaped = taskForExecution(task, execution);
  const { task: run, recipe } = shaped;
  const source = run.repo?.path ?? run.repo?.url ?? run.image ?? null;
  const evidence: InstanceExecution = {
    instance_id: task.instance_id,
    source,
    could_not_run: shaped.missing ?? null,
    base: null,
    environment_failures: [],
    checks: null,
    sandbox_ms: 0,
  };
  const verify = new Map<string, VerifyResult>();
  let checks: PoolChecks['checks'] = new Map();
  if (shaped.missing) return { evidence, verify, checks };
  const parser = execution.parser ?? recipe?.parser;
  const verifyOptions = {
    concurrency: execution.concurrency,
    testTimeoutMs: execution.testTimeoutMs,
    ...(parser ? { parser } : {}),
    ...(execution.harnessCompat ? { harnessCompat: true } : {}),
    ...(signal ? { signal } : {}),
  };

  if (hasGivenTests(run)) {
    const [base] = await verifyMany(execution.sandboxes, run, [{ id: 'base', patch: '' }], { ...verifyOptions, baseline: true });
    evidence.base = base!;
    evidence.sandbox_ms += base!.duration_ms;
    const failure = baseFailure(base!);
    if (failure) {
      evidence.could_not_run = failure;
      return { evidence, verify, checks };
    }
    evidence.environment_failures = run.pass_to_pass.filter((id) => {
      const status = base!.tests[id];
      return status !== undefined && status !== 'passed' && status !== 'skipped';
    });
    const results = await verifyMany(
      execution.sandboxes,
      run,
      candidates.map((trajectory) => ({ id: trajectory.id, patch: trajectory.patch })),
      verifyOptions,
    );
    for (const result of results) {
      verify.set(result.trajectory_id, result);
      evidence.sandbox_ms += result.duration_ms;
    }
  }

  if (checksRunFor(execution, run)) {
    const suite = recipe?.suite_command;
    // --verify-parser reads the suite's log too: given with it, the suite is the checks' test command,
    // the one a parser applies to (src/solve/regression.ts, pool-tests.ts); else the suite's runner is detected.
    const explicit = execution.parser;
    const pool = await checkPool(execution.deps, explicit && suite ? { ...run, test_command: suite } : run, candidates, {
      regression: {
        enabled: execution.regression,
        budget_s: execution.regressionBudgetS,
        ...(suite && !explicit ? { test_command: suite } : {}),
      },
      ...(explicit ? { parser: explicit } : {}),
      poolTests: execution.poolTests
        ? { enabled: true, budget_s: execution.poolTests.budget_s, timeout_s: Math.min(execution.testTimeoutMs / 1000, 86_400) }
        : { enabled: false },
      concurrency: execution.concurrency,
      signal: signal ?? new AbortController().signal,
    });
    evidence.checks = pool.evidence;
    evidence.sandbox_ms += pool.evidence.cost?.sandbox_ms ?? 0;
    checks = pool.checks;
  }
  return { evidence, verify, checks };
}
