/**
 * How a run of a writer's test files reads (docs/checks.md#tests-from-the-pool): on the base
 * commit, the ids that fail there are the writer's candidate tests, unless the files fail to
 * collect with an import or syntax error (they then never reached the code under test); when
 * none fails, the ids that pass are a `keeps` test (behaviour the writer asserted, which a
 * candidate must not break); with a candidate, the cell passes when every one of those ids passes.
 */
import type { TestFileOutcome } from '../types/checks.js';
import type { SuiteRun } from './run-suite.js';

/** A test module that failed to load (pytest's collection errors, unittest's and Django's failed imports). */
const COLLECTION =
  /ERROR collecting|errors? during collection|Failed to import test module|unittest\.loader\._FailedTest|ImportError while importing test module/;
const LOAD_ERROR = /\b(ModuleNotFoundError|ImportError|SyntaxError|IndentationError)\b[^\n]*/g;
const FAILING = new Set(['failed', 'error']);
/** unittest's stand-in for a module it could not import, pytest's `ERROR <file>`: failed ids, but not tests. */
const FAILED_IMPORT = /_FailedTest|^[^:\s]+\.py$/;

export interface PoolBaseReading {
  outcome: TestFileOutcome;
  /** The ids that fail on base (for `failed`). */
  ids: string[];
  /** For `passed`: the ids that pass on base, the behaviour the writer's tests assert. */
  kept?: string[];
  reason?: string;
}

export function readPoolBase(run: Pick<SuiteRun, 'tests' | 'log' | 'timed_out' | 'exit_code'>): PoolBaseReading {
  if (run.timed_out) return { outcome: 'error', ids: [], reason: 'timed out on the base commit' };
  if (COLLECTION.test(run.log)) {
    // The last such line is the cause (unittest prints "Failed to import test module" first).
    const error = [...run.log.matchAll(LOAD_ERROR)].at(-1);
    if (error) return { outcome: 'error', ids: [], reason: `errors at collection on the base commit: ${error[0].trim().slice(0, 200)}` };
  }
  const ids = [...run.tests]
    .filter(([id, status]) => FAILING.has(status) && !FAILED_IMPORT.test(id))
    .map(([id]) => id)
    .sort();
  if (ids.length > 0) return { outcome: 'failed', ids };
  const kept = [...run.tests]
    .filter(([id, status]) => status === 'passed' && !FAILED_IMPORT.test(id))
    .map(([id]) => id)
    .sort();
  if (kept.length > 0) return { outcome: 'passed', ids: [], kept };
  return { outcome: 'error', ids: [], reason: `no test ran on the base commit (exit ${run.exit_code ?? 'killed'})` };
}

/** A cell: `passed` when every base-failing id passed (a missing id fails it), `error` when the run timed out. */
export function readPoolCell(run: Pick<SuiteRun, 'tests' | 'timed_out'>, ids: readonly string[]): 'passed' | 'failed' | 'error' {
  if (run.timed_out) return 'error';
  return ids.every((id) => run.tests.get(id) === 'passed') ? 'passed' : 'failed';
}
