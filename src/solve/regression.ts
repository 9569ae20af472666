/**
 * Stage: the regression check (verify.regression). Starts with the job: the repository's test
 * suite is found and run twice on the base commit in two sandboxes (flaky tests: different
 * outcomes), while the rollouts run. Then each finished candidate's patch runs the same suite in
 * its own sandbox (an overlay of the shared base snapshot plus the patch, never a fresh clone);
 * tests that passed on base and fail with it are its regressions. When the whole suite does not
 * fit `budget_s` on base, each candidate runs only the tests related to the files it changes,
 * against base runs of those same tests. A candidate that compared no test is `not_compared`,
 * never "breaks no test"; tests its own patch deleted are listed as removed, not as regressions.
 */
import { toWinnowerError } from '../errors.js';
import { patchViolation } from '../sandbox/patch-rules.js';
import type { Sandbox } from '../sandbox/types.js';
import type { CandidateRegressions, RegressionBase } from '../types/checks.js';
import { compareBaseRuns, findRegressions, type BaseOutcomes } from '../verify/regression.js';
import { patchRemovals } from '../verify/removed-tests.js';
import { exitCodeTests, runSuite, type SuiteRun } from '../verify/run-suite.js';
import { patchedFiles } from '../verify/test-command.js';
import { findTestSuite, relatedTestFiles, type TestSuite } from '../verify/test-suite.js';
import type { SolveContext, Slot } from './solve-context.js';

interface BaseState {
  suite: TestSuite;
  scope: 'full' | 'related';
  /** Base outcomes by command (the full suite's, or related subsets' as they are asked for), with the sandbox time of their runs. */
  outcomes: Map<string, Promise<BaseOutcomes & { sandbox_ms: number }>>;
}

export interface RegressionStage {
  /** Checks one finished candidate (after the base runs); records and emits its regressions. */
  check(slot: Slot): Promise<void>;
}

/** Whether the check runs for this job: verification on and the check not turned off. */
export function regressionEnabled(context: SolveContext): boolean {
  return context.verifying && context.request.verify.regression.enabled;
}

/** Opens a sandbox at the base commit within the budget, runs `work` in it, closes it; `held` gets the time it was open. */
async function inSandbox<T>(context: SolveContext, work: (sandbox: Sandbox) => Promise<T>, held?: (ms: number) => void): Promise<T> {
  return context.budget.hold(async () => {
    const opened = Date.now();
    const sandbox = await context.sandboxes.open({ signal: context.checksSignal });
    try {
      return await work(sandbox);
    } finally {
      await sandbox.close().catch(() => undefined);
      held?.(Date.now() - opened);
    }
  });
}

/** How many of the base run's first output lines a "passed no test" error quotes. */
const QUOTED_LINES = 5;
const QUOTED_CHARS = 600;

/**
 * The base error for a suite that passed no test: runner, command, exit code and the log's first
 * lines. A command graded by its exit code is one test: it failed on the base commit, which its
 * log's own "OK" lines do not contradict (a `tests && check` command whose check fails there).
 */
export function noPassError(suite: Pick<TestSuite, 'runner' | 'command' | 'parser'>, run: Pick<SuiteRun, 'exit_code' | 'log'>): string {
  const lines = run.log
    .split('\n')
    .map((line) => line.trimEnd())
    .filter((line) => line.trim() !== '')
    .slice(0, QUOTED_LINES);
  const quoted = lines.join(' | ').slice(0, QUOTED_CHARS);
  const exit = run.exit_code ?? 'killed';
  if (suite.parser === 'exit-code')
    return (
      `the base commit fails the test command (runner ${suite.runner}, command \`${suite.command}\`, exit ${exit}; graded by its exit code, ` +
      `the whole command is one test), so it cannot show a candidate breaking anything; give verify.regression.test_command ` +
      `a command that passes on the base: ${quoted || '(no output)'}`
    );
  return (
    `the base suite passed no test (runner ${suite.runner}, command \`${suite.command}\`, exit ${exit}), ` +
    `so no candidate can be checked against it: ${quoted || '(no output)'}`
  );
}

export function startRegression(context: SolveContext): RegressionStage {
  const options = context.request.verify.regression;
  const timeoutMs = options.budget_s * 1000;
  // Related subsets are small by construction: they get the per-run test limit, not the suite's budget.
  const relatedTimeoutMs = context.request.verify.timeout_s * 1000;
  const signal = context.checksSignal;
  const given = options.test_command ?? context.request.verify.test_command;
  // verify.parser reads verify.test_command's log: it applies here when that is the suite's command.
  const givenParser = options.test_command === undefined ? context.request.verify.parser : undefined;

  const twoRuns = async (suite: TestSuite, command: string, limitMs: number, first?: Promise<SuiteRun>): Promise<[SuiteRun, SuiteRun]> =>
    Promise.all([
      first ?? inSandbox(context, (sandbox) => runSuite(sandbox, command, suite.parser, { timeoutMs: limitMs, signal })),
      inSandbox(context, (sandbox) => runSuite(sandbox, command, suite.parser, { timeoutMs: limitMs, signal })),
    ]);

  const base: Promise<BaseState | undefined> = (async () => {
    const started = Date.now();
    let detectedSuite: TestSuite | undefined;
    const record = (fields: Omit<RegressionBase, 'duration_ms'>, sandboxMs: number): void => {
      context.emit({ type: 'regression-finish', index: null, base: { ...fields, duration_ms: sandboxMs } });
    };
    try {
      // The first run shares the probe's sandbox; the second starts as soon as the suite is known.
      let resolveSuite!: (suite: TestSuite | undefined) => void;
      const suiteKnown = new Promise<TestSuite | undefined>((resolve) => (resolveSuite = resolve));
      const first: Promise<SuiteRun | undefined> = inSandbox(context, async (sandbox) => {
        const suite = await findTestSuite(sandbox, given, { signal, ...(givenParser ? { parser: givenParser } : {}) }).catch(
          (error: unknown) => {
            resolveSuite(undefined);
            throw error;
          },
        );
        resolveSuite(suite);
        return suite ? runSuite(sandbox, suite.command, suite.parser, { timeoutMs, signal }) : undefined;
      });
      // A sandbox that cannot be created: the suite is unknown, and `await first` below says why.
      first.catch(() => resolveSuite(undefined));
      detectedSuite = await suiteKnown;
      if (!detectedSuite) {
        await first;
        record(
          {
            runner: 'none',
            command: '',
            scope: 'full',
            passed: 0,
            flaky: [],
            error: 'no test suite found (set verify.regression.test_command)',
          },
          Date.now() - started,
        );
        return undefined;
      }
      let suite = detectedSuite;
      const [a, b] = await twoRuns(
        suite,
        suite.command,
        timeoutMs,
        first.then((run) => run!),
      );
      const fits = !a.timed_out && !b.timed_out;
      let gradingReason: string | undefined;
      // A given command whose log its parser finds no test in (`make check`, `go test ./...`, a
      // shell script read as pytest) is graded by exit code: the whole command is one test, as for
      // verification (docs/verify.md "Choosing a parser"), so that breaking it is a regression.
      const started126 = a.exit_code === 126 || a.exit_code === 127;
      if (suite.runner === 'given' && suite.parser !== 'exit-code' && fits && !started126 && a.tests.size === 0 && b.tests.size === 0) {
        gradingReason = `the ${suite.parser} parser found no test in the log of \`${suite.command}\`; the whole command is one test, graded by its exit code`;
        a.tests = exitCodeTests(suite.command, a.exit_code);
        b.tests = exitCodeTests(suite.command, b.exit_code);
        suite = { ...suite, parser: 'exit-code' };
      } else if (suite.parser === 'exit-code') {
        gradingReason =
          suite.runner === 'given'
            ? 'the exit-code parser was asked for'
            : `the ${suite.runner} runner is read by exit code: the whole command is one test`;
      }
      const how = { parser: suite.parser, ...(gradingReason ? { grading_reason: gradingReason } : {}) };
      if (fits && a.tests.size === 0 && (a.exit_code === 126 || a.exit_code === 127)) {
        record(
          {
            runner: suite.runner,
            command: suite.command,
            ...how,
            scope: 'full',
            passed: 0,
            flaky: [],
            error: `the test command could not be started (exit ${a.exit_code})`,
          },
          a.duration_ms + b.duration_ms,
        );
        return undefined;
      }
      const outcomes = compareBaseRuns(a.tests, b.tests);
      // A base that passes no test (wrong runner, collection error, package not importable) gives a
      // candidate nothing to break: saying "breaks no test" would be a comparison of nothing.
      if (fits && outcomes.passed.size === 0) {
        record(
          {
            runner: suite.runner,
            command: suite.command,
            ...how,
            scope: 'full',
            passed: 0,
            flaky: outcomes.flaky,
            error: noPassError(suite, a),
          },
          a.duration_ms + b.duration_ms,
        );
        return undefined;
      }
      const state: BaseState = { suite, scope: fits ? 'full' : 'related', outcomes: new Map() };
      // The full base's runs are the base's own cost (base.duration_ms), not a candidate's.
      if (fits) state.outcomes.set(suite.command, Promise.resolve({ ...outcomes, sandbox_ms: 0 }));
      record(
        {
          runner: suite.runner,
          command: suite.command,
          ...how,
          scope: state.scope,
          passed: fits ? outcomes.passed.size : 0,
          flaky: fits ? outcomes.flaky : [],
        },
        a.duration_ms + b.duration_ms,
      );
      return state;
    } catch (error) {
      if (signal.aborted) throw error;
      const failure = toWinnowerError(error);
      record(
        {
          runner: detectedSuite?.runner ?? 'none',
          command: detectedSuite?.command ?? '',
          scope: 'full',
          passed: 0,
          flaky: [],
          error: `${failure.code}: ${failure.message}`,
        },
        Date.now() - started,
      );
      return undefined;
    }
  })();
  // Awaited by the candidates; a job cancelled before any candidate finished must not leave it unhandled.
  base.catch(() => undefined);
  context.background.push(base);

  /** Base outcomes of `command`; `first`: this call started its two base runs (their sandbox time is its cost). */
  const baseFor = (state: BaseState, command: string): { outcomes: Promise<BaseOutcomes & { sandbox_ms: number }>; first: boolean } => {
    const known = state.outcomes.get(command);
    if (known) return { outcomes: known, first: false };
    const outcomes = twoRuns(state.suite, command, relatedTimeoutMs).then(([a, b]) => ({
      ...compareBaseRuns(a.tests, b.tests),
      sandbox_ms: a.duration_ms + b.duration_ms,
    }));
    state.outcomes.set(command, outcomes);
    return { outcomes, first: true };
  };

  return {
    async check(slot) {
      const trajectory = slot.trajectory;
      // An empty patch changes nothing: there is nothing to check (and it cannot be chosen).
      if (!trajectory || trajectory.patch.trim() === '' || signal.aborted) return;
      const state = await base;
      if (!state) return;
      const started = Date.now();
      const result: CandidateRegressions = {
        index: slot.index,
        trajectory_id: trajectory.id,
        status: 'checked',
        regressions: [],
        removed: [],
        compared: 0,
        flaky: [],
        scope: state.scope,
        timed_out: false,
        duration_ms: 0,
        sandbox_ms: 0,
      };
      const held = (ms: number) => {
        result.sandbox_ms = (result.sandbox_ms ?? 0) + ms;
      };
      let candidateRun: { command: string; run: SuiteRun } | undefined;
      try {
        // The patch rules (src/sandbox/patch-rules.ts) refuse a patch that would leave the repository, as verification does.
        const violation = patchViolation(trajectory.patch);
        if (violation) throw Object.assign(new Error(`refused by the patch rules: the patch ${violation.what}`), { refused: true });
        await inSandbox(
          context,
          async (sandbox) => {
            try {
              await sandbox.applyPatch(trajectory.patch, { signal });
            } catch (error) {
              if (signal.aborted) throw error;
              result.status = 'apply_failed';
              result.error = toWinnowerError(error).message;
              return;
            }
            let command = state.suite.command;
            if (state.scope === 'related') {
              const { forFiles } = state.suite;
              if (!forFiles) {
                result.status = 'not_compared';
                result.error =
                  `the whole suite (\`${state.suite.command}\`) does not fit verify.regression.budget_s, and no subset could be chosen: ` +
                  `its runner cannot run chosen test files (pytest, Django runtests.py, SymPy bin/test and unittest can)`;
                return;
              }
              const related = await relatedTestFiles(sandbox, state.suite, patchedFiles(trajectory.patch), { signal });
              const subset = related.length ? forFiles(related) : undefined;
              if (!subset) {
                result.status = 'not_compared';
                result.error = 'the whole suite does not fit verify.regression.budget_s and no related tests were found';
                return;
              }
              command = subset;
            }
            candidateRun = {
              command,
              run: await runSuite(sandbox, command, state.suite.parser, {
                timeoutMs: state.scope === 'related' ? relatedTimeoutMs : timeoutMs,
                signal,
              }),
            };
          },
          held,
        );
        // Base runs of a related subset start only after the candidate's sandbox is closed: a
        // slot is never held while waiting for another (no deadlock under max_sandboxes).
        if (candidateRun) {
          const { command, run } = candidateRun;
          const { outcomes, first } = baseFor(state, command);
          const base = await outcomes;
          if (first) held(base.sandbox_ms);
          const found = findRegressions(base, run.tests, run.timed_out, patchRemovals(trajectory.patch));
          result.regressions = found.regressions;
          result.removed = found.removed;
          result.compared = found.compared;
          result.flaky = base.flaky;
          result.timed_out = run.timed_out;
          // Comparing nothing is no evidence that nothing broke: not "breaks no test" (docs/checks.md).
          if (found.compared === 0) {
            result.status = 'not_compared';
            result.error =
              base.passed.size === 0
                ? `no test of \`${command}\` passed in both base runs, so there was nothing to compare`
                : found.removed.length === base.passed.size
                  ? 'the patch removed every test that passed on base'
                  : run.timed_out
                    ? 'the run timed out before reaching any test that passed on base'
                    : 'no test that passed on base was compared';
          }
        }
      } catch (error) {
        if (signal.aborted) throw error;
        const failure = toWinnowerError(error);
        result.status = (error as { refused?: boolean }).refused ? 'apply_failed' : 'error';
        result.error = (error as { refused?: boolean }).refused ? failure.message : `${failure.code}: ${failure.message}`;
      }
      result.duration_ms = Date.now() - started;
      context.emit({ type: 'regression-finish', index: slot.index, candidate: result });
    },
  };
}
