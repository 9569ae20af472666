/**
 * Stage: tests from the pool (verify.pool_tests; docs/checks.md#tests-from-the-pool). Once every
 * candidate is finished: the test files each candidate's patch adds or changes are put, in the
 * writer's version, on the base commit and run with the repository's runner narrowed to them (the
 * regression check's detection, test-suite.ts); the ids that fail there are the writer's pool
 * test, unless the files fail to collect with an import or syntax error. Then every candidate runs
 * every such test in its prepared workspace (its patch committed, the writer's files put over it,
 * a reset after each run): the pool matrix. Its own test is run too and counted apart. The whole
 * check spends at most `budget_s` of sandbox time; cells past it are `not_run`.
 */
import { toWinnowerError } from '../errors.js';
import { patchViolation } from '../sandbox/patch-rules.js';
import type { Sandbox } from '../sandbox/types.js';
import type { PoolCell, PoolTest } from '../types/checks.js';
import { poolTestSections, type PoolTestSource } from '../verify/pool-test-extract.js';
import { readPoolBase, readPoolCell } from '../verify/pool-test-outcome.js';
import { runSuite } from '../verify/run-suite.js';
import { shellWord } from '../verify/test-command.js';
import { findTestSuite, type TestSuite } from '../verify/test-suite.js';
import { tailOf } from '../verify/verify-candidate.js';
import type { SolveContext, Slot } from './solve-context.js';
import { poolTestsOn } from './solve-request.js';

/** Bytes of one writer's test file kept and run; a larger file makes its test invalid. */
export const MAX_POOL_FILE_BYTES = 256 * 1024;

export interface PoolTestStage {
  /** Extracts, validates and runs the pool tests of `slots` (all finished); emits `pool-matrix-finish`. */
  run(slots: readonly Slot[]): Promise<void>;
}

/** A pool test that failed on base: what each matrix cell runs. */
interface RunnableTest {
  writer: number;
  files: Array<{ path: string; content: string }>;
  command: string;
  ids: string[];
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

  /** A sandbox at the base commit within the job's sandbox budget; its open time is counted against budget_s. */
  const inSandbox = async <T>(work: (sandbox: Sandbox) => Promise<T>): Promise<{ value: T; ms: number }> =>
    context.budget.hold(async () => {
      const opened = Date.now();
      const sandbox = await context.deps.sandboxes.create(context.spec, { signal });
      try {
        const value = await work(sandbox);
        return { value, ms: Date.now() - opened };
      } finally {
        await sandbox.close().catch(() => undefined);
        spentMs += Date.now() - opened;
      }
    });

  /** Puts the writer's files over the workspace (the writer's version wins) and runs its narrowed command. */
  const runTest = async (sandbox: Sandbox, suite: TestSuite, test: RunnableTest) => {
    const folders = [
      ...new Set(test.files.filter((file) => file.path.includes('/')).map((file) => file.path.slice(0, file.path.lastIndexOf('/')))),
    ];
    if (folders.length) await sandbox.exec(`mkdir -p -- ${folders.map(shellWord).join(' ')}`, { timeoutMs: 30_000, signal });
    for (const file of test.files) await sandbox.writeFile(file.path, file.content, { signal });
    return runSuite(sandbox, test.command, suite.parser, { timeoutMs, signal });
  };

  /** The writer's test files on base: their content (after its patch) and the ids that fail there. */
  const validate = async (
    suite: TestSuite,
    slot: Slot,
    sources: { files: PoolTestSource[]; patch: string },
  ): Promise<RunnableTest | undefined> => {
    const trajectory = slot.trajectory!;
    const record: PoolTest = {
      writer: slot.index,
      trajectory_id: trajectory.id,
      files: sources.files.map((file) => ({ ...file, bytes: 0 })),
      command: suite.forFiles?.(sources.files.map((file) => file.path)) ?? null,
      ids: [],
      base_outcome: null,
      valid: false,
      discard_reason: null,
      base_log_tail: '',
      sandbox_ms: 0,
    };
    let runnable: RunnableTest | undefined;
    try {
      if (!record.command) record.discard_reason = `the ${suite.runner} runner cannot run these files alone`;
      else if (spentMs >= budgetMs) record.discard_reason = 'not run: verify.pool_tests.budget_s was spent';
      else {
        const command = record.command;
        const { ms } = await inSandbox(async (sandbox) => {
          try {
            await sandbox.applyPatch(sources.patch, { signal });
          } catch (error) {
            if (signal.aborted) throw error;
            record.discard_reason = `its test files do not apply on the base commit: ${toWinnowerError(error).message}`;
            return;
          }
          const files: RunnableTest['files'] = [];
          for (const [i, file] of sources.files.entries()) {
            const bytes = await sandbox.readFile(file.path, { signal });
            record.files[i]!.bytes = bytes.byteLength;
            if (bytes.byteLength > MAX_POOL_FILE_BYTES) {
              record.discard_reason = `${file.path} is over ${MAX_POOL_FILE_BYTES} bytes`;
              return;
            }
            files.push({ path: file.path, content: new TextDecoder().decode(bytes) });
          }
          const run = await runSuite(sandbox, command, suite.parser, { timeoutMs, signal });
          const reading = readPoolBase(run);
          record.base_outcome = reading.outcome;
          record.base_log_tail = tailOf(run.log_tail, 2048);
          if (reading.outcome === 'failed') {
            record.ids = reading.ids;
            runnable = { writer: slot.index, files, command, ids: reading.ids };
          } else record.discard_reason = reading.reason ?? 'it does not fail on the base commit';
        });
        record.sandbox_ms = ms;
      }
    } catch (error) {
      if (signal.aborted) throw error;
      const failure = toWinnowerError(error);
      record.discard_reason = `the base run failed: ${failure.code}: ${failure.message}`;
      runnable = undefined;
    }
    context.emit({ type: 'pool-test-finish', writer: slot.index, test: record });
    return runnable;
  };

  const emitCell = (slot: Slot, test: RunnableTest, outcome: PoolCell['outcome'], durationMs: number) =>
    context.emit({
      type: 'pool-cell-finish',
      cell: { index: slot.index, writer: test.writer, outcome, own: slot.index === test.writer, duration_ms: durationMs },
    });

  /**
   * One candidate's row: one sandbox with its patch committed, each test from a reset to that
   * commit. Without a git checkout to reset with, each remaining cell gets a fresh sandbox.
   */
  const runRow = async (suite: TestSuite, slot: Slot, tests: RunnableTest[]): Promise<void> => {
    const patch = slot.trajectory!.patch;
    const done = new Set<number>();
    const cellIn = async (sandbox: Sandbox, test: RunnableTest): Promise<PoolCell['outcome']> =>
      runTest(sandbox, suite, test)
        .then((run) => readPoolCell(run, test.ids))
        .catch((error: unknown) => {
          if (signal.aborted) throw error;
          return 'error' as const;
        });
    const reusable = await inSandbox(async (sandbox) => {
      const started = Date.now();
      try {
        await sandbox.applyPatch(patch, { signal });
      } catch (error) {
        if (signal.aborted) throw error;
        for (const test of tests) {
          emitCell(slot, test, 'apply_failed', Date.now() - started);
          done.add(test.writer);
        }
        return true;
      }
      const git = (command: string) =>
        sandbox.exec(`git -c user.name=winnower -c user.email=winnower@localhost ${command}`, { timeoutMs: 120_000, signal });
      const committed = await git(
        'add -A && git -c user.name=winnower -c user.email=winnower@localhost commit -q --no-verify --allow-empty -m candidate',
      );
      if (committed.exitCode !== 0) return false;
      for (const test of tests) {
        if (spentMs + (Date.now() - started) >= budgetMs) continue;
        const cellStarted = Date.now();
        const outcome = await cellIn(sandbox, test);
        const reset = await git('reset -q --hard && git clean -fdq');
        emitCell(slot, test, outcome, Date.now() - cellStarted);
        done.add(test.writer);
        if (reset.exitCode !== 0) return false;
      }
      return true;
    }).catch((error: unknown) => {
      if (signal.aborted) throw error;
      return { value: false, ms: 0 };
    });
    for (const test of tests.filter((t) => !done.has(t.writer))) {
      if (spentMs >= budgetMs) {
        emitCell(slot, test, 'not_run', 0);
        continue;
      }
      if (reusable.value) continue;
      const { value, ms } = await inSandbox(async (sandbox) => {
        try {
          await sandbox.applyPatch(patch, { signal });
        } catch (error) {
          if (signal.aborted) throw error;
          return 'apply_failed' as const;
        }
        return cellIn(sandbox, test);
      }).catch((error: unknown) => {
        if (signal.aborted) throw error;
        return { value: 'error' as const, ms: 0 };
      });
      emitCell(slot, test, value, ms);
    }
  };

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
      const runnable = (await Promise.all(considered.map(({ slot, sources }) => validate(found, slot, sources)))).filter(
        (test): test is RunnableTest => test !== undefined,
      );
      if (runnable.length > 0) await Promise.all(candidates.map((slot) => runRow(found, slot, runnable)));
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
