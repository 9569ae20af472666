/**
 * The tests from the pool, one writer and one row at a time (pool-tests.ts runs them): a writer's
 * test files validated on the base commit, and a candidate's row of the pool matrix in its
 * prepared workspace (its patch committed, each writer's files put over it, a reset after each run).
 */
import { toWinnowerError } from '../errors.js';
import type { Sandbox } from '../sandbox/types.js';
import type { PoolCell, PoolTest } from '../types/checks.js';
import type { PoolTestSections } from '../verify/pool-test-extract.js';
import { readPoolBase, readPoolCell } from '../verify/pool-test-outcome.js';
import { runSuite } from '../verify/run-suite.js';
import { shellWord } from '../verify/test-command.js';
import type { TestSuite } from '../verify/test-suite.js';
import { tailOf } from '../verify/verify-candidate.js';
import type { SolveContext, Slot } from './solve-context.js';

/** Bytes of one writer's test file kept and run; a larger file makes its test invalid. */
export const MAX_POOL_FILE_BYTES = 256 * 1024;

/** A pool test that failed on base: what each matrix cell runs. */
export interface RunnableTest {
  writer: number;
  files: Array<{ path: string; content: string }>;
  command: string;
  ids: string[];
}

/** What one run of the stage shares: the job, the runner found, the limits and the sandbox-time budget. */
export interface PoolRun {
  context: SolveContext;
  suite: TestSuite;
  signal: AbortSignal;
  timeoutMs: number;
  /** Whether verify.pool_tests.budget_s is spent, with `openMs` of a sandbox still open counted. */
  overBudget(openMs?: number): boolean;
  /** A sandbox at the base commit within the job's sandbox budget; its open time counts against budget_s. */
  inSandbox<T>(work: (sandbox: Sandbox) => Promise<T>): Promise<{ value: T; ms: number }>;
}

/** Puts the writer's files over the workspace (the writer's version wins) and runs its narrowed command. */
async function runTest(pool: PoolRun, sandbox: Sandbox, test: RunnableTest) {
  const { suite, signal, timeoutMs } = pool;
  const folders = [
    ...new Set(test.files.filter((file) => file.path.includes('/')).map((file) => file.path.slice(0, file.path.lastIndexOf('/')))),
  ];
  if (folders.length) await sandbox.exec(`mkdir -p -- ${folders.map(shellWord).join(' ')}`, { timeoutMs: 30_000, signal });
  for (const file of test.files) await sandbox.writeFile(file.path, file.content, { signal });
  return runSuite(sandbox, test.command, suite.parser, { timeoutMs, signal });
}

/** The writer's test files on base: their content (after its patch) and the ids that fail there. */
/**
 * The ids of the changed files' tests that fail on base before the writer's changes (a test that
 * was already broken there is no reproduction of the issue, and no candidate would pass it).
 */
async function alreadyFailing(pool: PoolRun, sandbox: Sandbox, sources: PoolTestSections): Promise<Set<string>> {
  const changed = sources.files.filter((file) => file.change === 'changed').map((file) => file.path);
  const command = changed.length ? pool.suite.forFiles?.(changed) : undefined;
  if (!command) return new Set();
  const result = await runSuite(sandbox, command, pool.suite.parser, { timeoutMs: pool.timeoutMs, signal: pool.signal });
  return new Set([...result.tests].filter(([, status]) => status === 'failed' || status === 'error').map(([id]) => id));
}

export async function validateOnBase(pool: PoolRun, slot: Slot, sources: PoolTestSections): Promise<RunnableTest | undefined> {
  const { context, suite, signal, timeoutMs } = pool;
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
    else if (pool.overBudget()) record.discard_reason = 'not run: verify.pool_tests.budget_s was spent';
    else {
      const command = record.command;
      const { ms } = await pool.inSandbox(async (sandbox) => {
        const before = await alreadyFailing(pool, sandbox, sources);
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
        const result = await runSuite(sandbox, command, suite.parser, { timeoutMs, signal });
        const reading = readPoolBase(result);
        record.base_outcome = reading.outcome;
        record.base_log_tail = tailOf(result.log_tail, 2048);
        const ids = reading.ids.filter((id) => !before.has(id));
        if (ids.length < reading.ids.length) record.already_failing = reading.ids.filter((id) => before.has(id));
        if (reading.outcome === 'failed' && ids.length > 0) {
          record.ids = ids;
          runnable = { writer: slot.index, files, command, ids };
        } else if (reading.outcome === 'failed')
          record.discard_reason = 'the only tests that fail on base already failed there before its changes';
        else if (reading.outcome === 'passed' && reading.kept?.length) {
          // Nothing reproduces the issue, but the tests assert behaviour a candidate may break.
          record.ids = reading.kept;
          record.keeps = true;
          runnable = { writer: slot.index, files, command, ids: reading.kept };
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
}

const emitCell = (context: SolveContext, slot: Slot, test: RunnableTest, outcome: PoolCell['outcome'], durationMs: number) =>
  context.emit({
    type: 'pool-cell-finish',
    cell: { index: slot.index, writer: test.writer, outcome, own: slot.index === test.writer, duration_ms: durationMs },
  });

/**
 * One candidate's row: one sandbox with its patch committed, each test from a reset to that
 * commit. Without a git checkout to reset with, each remaining cell gets a fresh sandbox.
 */
export async function runPoolRow(pool: PoolRun, slot: Slot, tests: RunnableTest[]): Promise<void> {
  const { context, signal } = pool;
  const patch = slot.trajectory!.patch;
  const done = new Set<number>();
  const cellIn = async (sandbox: Sandbox, test: RunnableTest): Promise<PoolCell['outcome']> =>
    runTest(pool, sandbox, test)
      .then((run) => readPoolCell(run, test.ids))
      .catch((error: unknown) => {
        if (signal.aborted) throw error;
        return 'error' as const;
      });
  const reusable = await pool
    .inSandbox(async (sandbox) => {
      const started = Date.now();
      try {
        await sandbox.applyPatch(patch, { signal });
      } catch (error) {
        if (signal.aborted) throw error;
        for (const test of tests) {
          emitCell(context, slot, test, 'apply_failed', Date.now() - started);
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
      // The row's setup (patch applied, committed) is counted in its first cell's time.
      let cellStarted = started;
      for (const test of tests) {
        if (pool.overBudget(Date.now() - started)) continue;
        if (done.size > 0) cellStarted = Date.now();
        const outcome = await cellIn(sandbox, test);
        const reset = await git('reset -q --hard && git clean -fdq');
        emitCell(context, slot, test, outcome, Date.now() - cellStarted);
        done.add(test.writer);
        if (reset.exitCode !== 0) return false;
      }
      return true;
    })
    .catch((error: unknown) => {
      if (signal.aborted) throw error;
      return { value: false, ms: 0 };
    });
  for (const test of tests.filter((t) => !done.has(t.writer))) {
    if (pool.overBudget()) {
      emitCell(context, slot, test, 'not_run', 0);
      continue;
    }
    if (reusable.value) continue;
    const { value, ms } = await pool
      .inSandbox(async (sandbox) => {
        try {
          await sandbox.applyPatch(patch, { signal });
        } catch (error) {
          if (signal.aborted) throw error;
          return 'apply_failed' as const;
        }
        return cellIn(sandbox, test);
      })
      .catch((error: unknown) => {
        if (signal.aborted) throw error;
        return { value: 'error' as const, ms: 0 };
      });
    emitCell(context, slot, test, value, ms);
  }
}
