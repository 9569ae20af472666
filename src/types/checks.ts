/**
 * Execution evidence a solve job gathers without a test list (issue 20) and the tests from the pool, as it appears in the job
 * JSON (`result.checks`, the `regression-finish` / `repro-test-finish` / `matrix-cell-finish` /
 * `matrix-finish` events) and as selection reads it. docs/checks.md documents every field. Type
 * aliases, not interfaces: the API's response schemas are loose objects, which need index signatures.
 */
import type { TestStatus } from './verify.js';

/** The repository's own test suite on the base commit, run twice to find flaky tests. */
export type RegressionBase = {
  /** The runner found (pytest, unittest, django, sympy, npm, go, cargo, or `given` for verify.regression.test_command). */
  runner: string;
  command: string;
  /** `full`: the whole suite fit verify.regression.budget_s; `related`: only tests related to each patch's files. */
  scope: 'full' | 'related';
  /**
   * How the runs were read: a parser name, or `exit-code` when the whole command is one test
   * named by the command (Go, Rust and Node runners, or a given command whose output no parser
   * understands); `grading_reason` says why.
   */
  parser?: string;
  grading_reason?: string;
  /** Tests that passed in both base runs: the ones a candidate can break. */
  passed: number;
  /** Tests with different outcomes in the two base runs: ignored, listed here. */
  flaky: string[];
  duration_ms: number;
  /** Set when the base suite could not be run (no runner found, the command failed to start) or passed no test: no regressions are checked. */
  error?: string;
};

/** One test that passed on base and does not with the candidate. */
export type Regression = {
  test: string;
  base: 'passed';
  candidate: TestStatus;
};

/** A test that passed on base and is gone with the candidate because its own patch deleted or renamed it. */
export type RemovedTest = {
  test: string;
  /** The test file the patch deleted, renamed or removed the test from. */
  file: string;
};

export type CandidateRegressions = {
  index: number;
  trajectory_id: string;
  /**
   * `checked`: the suite ran with the patch and compared at least one test; `not_compared`: it
   * compared none (no related tests, a run that reached no base-passing test), `error` says why;
   * `apply_failed`/`error`: it did not run. Only `checked` counts for selection.
   */
  status: 'checked' | 'not_compared' | 'apply_failed' | 'error';
  regressions: Regression[];
  /** Base-passing tests the candidate's patch deleted or renamed: not regressions (the tamper check's business). */
  removed?: RemovedTest[];
  /** Tests compared (passed on base, not flaky, run with the candidate). */
  compared: number;
  /** Tests ignored because their two base runs differed (the base's list, or a related subset's). */
  flaky?: string[];
  scope: 'full' | 'related';
  timed_out: boolean;
  /** Wall time of the candidate's check, waits for a sandbox included. */
  duration_ms: number;
  /** Sandbox time it cost: its own run, plus the two base runs of a related subset it was first to need. */
  sandbox_ms?: number;
  error?: string;
};

/** The outcome of a test file run: `error` is a failure for an unrelated reason (import, syntax, no test collected). */
export type TestFileOutcome = 'passed' | 'failed' | 'error';

/** One test written by a test-writer rollout (verify.reproduction). */
export type GeneratedTest = {
  /** The test writer's number, 0..n-1; the matrix's column key. */
  writer: number;
  trajectory_id: string;
  /** The new test file's path in the repository, or null when the writer produced none. */
  file: string | null;
  /** Its content (capped), for the record. */
  content: string | null;
  /** How it ran on the base commit; null when it never ran. */
  base_outcome: TestFileOutcome | null;
  /** Counts in the matrix only when it fails on base for the reason. */
  valid: boolean;
  /** Why it does not count (passes on base, errors on base, no test file, the writer failed...). */
  discard_reason: string | null;
  /** A short excerpt of the base run's log. */
  base_log_tail: string;
  tokens: number;
  policy_calls: number;
  /** Sandbox time of the writer's rollout and of the base run. */
  sandbox_ms: number;
};

/** One cell of the pass matrix: candidate `index` × generated test `writer`. */
export type MatrixCell = {
  index: number;
  writer: number;
  /** `conflict`: the candidate's patch creates the test's path; the test was not run (it never overwrites a file). */
  outcome: TestFileOutcome | 'apply_failed' | 'conflict';
  duration_ms: number;
};

/** Per candidate, what selection reads. */
export type CandidateChecks = {
  /** Regressions found; null when the regression check did not run for the candidate. */
  regressions: number | null;
  /** Valid reproduction tests this candidate passes / valid tests run against it; total 0 when there are none. */
  repro_passed: number;
  repro_total: number;
  /** Tests from the pool (verify.pool_tests), when a valid one ran against this candidate. */
  pool?: CandidatePoolScore;
};

/**
 * A candidate's tests-from-the-pool score: the weights of the valid pool tests written by other
 * candidates that it passes, and of those it fails; its own tests are counted apart (they are not
 * evidence for it).
 */
export type CandidatePoolScore = {
  /** Sum of the weights of the others' valid pool tests it passes. */
  score: number;
  /** Others' valid pool tests it passes / that ran against it. */
  passed: number;
  total: number;
  /** Its own valid pool tests it passes / that it wrote (not in the score). */
  own_passed: number;
  own_total: number;
  /**
   * Sum of the weights of the others' valid pool tests it fails (failed, error or apply_failed
   * cells; not_run cells do not count): what selection ranks by, fewest first. Absent in evidence
   * written before it existed.
   */
  failed_weight?: number;
};

/** One test file a candidate's patch adds or changes, in the writer's version (the file after its patch). */
export type PoolTestFile = {
  path: string;
  /** `added` or `changed` by the writer's patch. */
  change: 'added' | 'changed';
  bytes: number;
};

/** The tests one candidate's patch adds or changes (verify.pool_tests): one pool test per writer. */
export type PoolTest = {
  /** The writing candidate's index: the pool matrix's column key. */
  writer: number;
  trajectory_id: string;
  files: PoolTestFile[];
  /** The narrowed command that ran the files (on base and with each candidate). */
  command: string | null;
  /** The ids that fail on the base commit (for a `keeps` test: the ids that pass there): what a candidate must pass. */
  ids: string[];
  /**
   * True when every test of the files passes on base: they reproduce nothing, but assert behaviour
   * the base has, and a candidate that fails one breaks what the writer checked (a regression
   * test written by the pool). Absent otherwise.
   */
  keeps?: boolean;
  /** Ids of the changed files that fail on base before the writer's changes too: left out of `ids`. */
  already_failing?: string[];
  /** How the files ran on the base commit; null when they never ran. */
  base_outcome: TestFileOutcome | null;
  /**
   * Counts in the ranking: fails on base for a reason other than an import or syntax error (or is
   * a `keeps` test), and at least one candidate passes it. Known once the matrix is done (false until then).
   */
  valid: boolean;
  /** Why it does not count (passes on base, errors at collection, no candidate passes it, ...). */
  discard_reason: string | null;
  base_log_tail: string;
  /** Sandbox time of the base run. */
  sandbox_ms: number;
};

/** One cell of the pool matrix: candidate `index` × the pool test of `writer`. */
export type PoolCell = {
  index: number;
  writer: number;
  /** `passed`: every one of the writer's base-failing ids passed; `not_run`: over verify.pool_tests.budget_s. */
  outcome: 'passed' | 'failed' | 'error' | 'apply_failed' | 'not_run';
  /** The candidate is the test's writer: shown, not counted in its score. */
  own: boolean;
  duration_ms: number;
};

/** Valid pool tests grouped by the candidates that pass them; each test of a cluster weighs its distinct writers. */
export type PoolCluster = {
  writers: number[];
  /** The candidates that pass every test of the cluster. */
  passes: number[];
  weight: number;
};

export type PoolTestsEvidence = {
  /** The runner the files ran with (the regression check's detection), or null when none was found. */
  runner: string | null;
  /** Why no pool test ran (no runner that can run chosen files, ...). */
  error?: string;
  tests: PoolTest[];
  matrix: PoolCell[];
  clusters: PoolCluster[];
  scores: Array<{ index: number } & CandidatePoolScore>;
  /** Sandbox time per candidate: its row of the matrix (and its own base run when it wrote tests). */
  sandbox_ms: Array<{ index: number; sandbox_ms: number }>;
};

export type ChecksCost = {
  /** Sandbox time of the checks (base runs, candidate runs, test writers, matrix cells), summed. */
  sandbox_ms: number;
  /** Policy tokens and calls of the test writers. */
  policy_tokens: number;
  policy_calls: number;
};

export type ChecksEvidence = {
  regression: { base: RegressionBase | null; candidates: CandidateRegressions[] } | null;
  reproduction: { tests: GeneratedTest[]; matrix: MatrixCell[] } | null;
  /** Tests from the pool (docs/checks.md#tests-from-the-pool); null when the check was off. */
  pool_tests: PoolTestsEvidence | null;
  cost: ChecksCost;
};
