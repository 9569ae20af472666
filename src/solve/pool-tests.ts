/**
 * Stage: tests from the pool (verify.pool_tests; docs/checks.md#tests-from-the-pool). Once every
 * candidate is finished: the test files each candidate's patch adds or changes are put, in the
 * writer's version, on the base commit and run with the repository's runner narrowed to them (the
 * regression check's detection, test-suite.ts); the ids that fail there are the writer's pool
 * test, unless the files fail to collect with an import or syntax error. Then every candidate runs
 * every such test in its prepared workspace (its patch committed, the writer's files put over it,
 * a reset after each run): the pool matrix. Its own test is run too and counted apart. The whole
 * check spends at most `budget_s` of sandbox time; cells past it are `not_run`. One writer's
 * validation and one candidate's row are in pool-matrix.ts.
 */
import { toWinnowerError } from '../errors.js';
import { patchViolation } from '../sandbox/patch-rules.js';
import type { Sandbox } from '../sandbox/types.js';
import { poolTestSections } from '../verify/pool-test-extract.js';
import { findTestSuite, type TestSuite } from '../verify/test-suite.js';
import { type PoolRun, type RunnableTest, runPoolRow, validateOnBase } from './pool-matrix.js';
import type { SolveContext, Slot } from './solve-context.js';
import { poolTestsOn } from './solve-request.js';

export interface PoolTestStage {
  /** Extracts, validates and runs the pool tests of `slots` (all finished); emits `pool-matrix-finish`. */
  run(slots: readonly Slot[]): Promise<void>;
}

/** Whether the check runs for this job (solve-request.ts `poolTestsOn`). */
export function poolTestsEnabled(context: SolveContext): boolean {
  return poolTestsOn(context.request);
}

const usable = (slot: Slot): boolean =>
  slot.trajectory !== undefined && slot.trajectory.patch.trim() !== '' && patchViolation(slot.trajectory.patch) === undefined;

export function startPoolTests(context: SolveContext): PoolTestStage {
  const options = context.request.verify.pool_tests;
  const signal = context.checksSignal;
  const timeoutMs = options.timeout_s * 1000;
  const budgetMs = options.budget_s * 1000;
  let spentMs = 0;
  const given = context.request.verify.regression.test_command ?? context.request.verify.test_command;
  const givenParser = context.request.verify.regression.test_command === undefined ? context.request.verify.parser : undefined;

  const inSandbox = async <T>(work: (sandbox: Sandbox) => Promise<T>): Promise<{ value: T; ms: number }> =>
    context.budget.hold(async () => {
      const opened = Date.now();
      const sandbox = await context.sandboxes.open({ signal });
      try {
        const value = await work(sandbox);
        return { value, ms: Date.now() - opened };
      } finally {
        await sandbox.close().catch(() => undefined);
        spentMs += Date.now() - opened;
      }
    });

  return {
    async run(slots) {
      if (signal.aborted) return;
      const candidates = slots.filter(usable);
      const writers = candidates
        .map((slot) => ({ slot, sources: poolTestSections(slot.trajectory!.patch) }))
        .filter((entry) => entry.sources.files.length > 0);
      let suite: TestSuite | undefined;
      try {
        suite = writers.length
          ? (await inSandbox((sandbox) => findTestSuite(sandbox, given, { signal, ...(givenParser ? { parser: givenParser } : {}) }))).value
          : undefined;
      } catch (error) {
        if (signal.aborted) throw error;
        const failure = toWinnowerError(error);
        context.emit({ type: 'pool-tests-start', runner: null, error: `the runner probe failed: ${failure.code}: ${failure.message}` });
        return;
      }
      if (writers.length === 0) {
        context.emit({ type: 'pool-tests-start', runner: null, error: 'no candidate adds or changes a test file' });
        return;
      }
      if (!suite?.forFiles) {
        context.emit({
          type: 'pool-tests-start',
          runner: suite?.runner ?? null,
          error: suite
            ? `the ${suite.runner} runner cannot run chosen test files (pytest, Django runtests.py, SymPy bin/test and unittest can)`
            : 'no test suite found (set verify.regression.test_command)',
        });
        return;
      }
      const found = suite;
      const pool: PoolRun = {
        context,
        suite: found,
        signal,
        timeoutMs,
        overBudget: (openMs = 0) => spentMs + openMs >= budgetMs,
        inSandbox,
      };
      context.emit({ type: 'pool-tests-start', runner: found.runner });
      const considered = writers.slice(0, options.max_tests);
      for (const { slot, sources } of writers.slice(options.max_tests))
        context.emit({
          type: 'pool-test-finish',
          writer: slot.index,
          test: {
            writer: slot.index,
            trajectory_id: slot.trajectory!.id,
            files: sources.files.map((file) => ({ ...file, bytes: 0 })),
            command: null,
            ids: [],
            base_outcome: null,
            valid: false,
            discard_reason: `not run: over verify.pool_tests.max_tests (${options.max_tests})`,
            base_log_tail: '',
            sandbox_ms: 0,
          },
        });
      const runnable = (await Promise.all(considered.map(({ slot, sources }) => validateOnBase(pool, slot, sources)))).filter(
        (test): test is RunnableTest => test !== undefined,
      );
      if (runnable.length > 0) await Promise.all(candidates.map((slot) => runPoolRow(pool, slot, runnable)));
      const weighing = context.evidence.poolWeighing();
      context.emit({
        type: 'pool-matrix-finish',
        tests: [...weighing.valid].sort((a, b) => a - b),
        clusters: weighing.clusters,
        scores: [...weighing.scores].sort(([a], [b]) => a - b).map(([index, score]) => ({ index, ...score })),
      });
    },
  };
}
