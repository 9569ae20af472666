/**
 * The execution evidence of a solve job (regression check, reproduction tests, pass matrix, tests
 * from the pool), built from its events alone: the running job feeds it each event it emits, and
 * an interrupted job's partial result replays the stored events, so the two agree and nothing
 * recorded is lost.
 */
import type {
  CandidateChecks,
  CandidateRegressions,
  ChecksEvidence,
  GeneratedTest,
  MatrixCell,
  PoolCell,
  PoolTest,
  PoolTestsEvidence,
  RegressionBase,
} from '../types/checks.js';
import { type PoolWeighing, weighPoolTests } from '../verify/pool-test-weights.js';
import type { JobEventBody } from './events.js';

export class CheckEvidence {
  #base: RegressionBase | null = null;
  #regressionRan = false;
  readonly #candidates = new Map<number, CandidateRegressions>();
  #reproductionRan = false;
  readonly #tests = new Map<number, GeneratedTest>();
  readonly #cells: MatrixCell[] = [];
  #poolRan = false;
  #poolRunner: string | null = null;
  #poolError: string | undefined;
  readonly #poolTests = new Map<number, PoolTest>();
  readonly #poolCells: PoolCell[] = [];

  /** Marks the stages the job runs, so the evidence says `null` only for a check that was off. */
  constructor(stages: { regression: boolean; reproduction: boolean; poolTests?: boolean } = { regression: false, reproduction: false }) {
    this.#regressionRan = stages.regression;
    this.#reproductionRan = stages.reproduction;
    this.#poolRan = stages.poolTests ?? false;
  }

  /** Takes what an event says; events other than the checks' are ignored. */
  apply(event: JobEventBody | ({ type: string } & Record<string, unknown>)): void {
    const body = event as JobEventBody;
    switch (body.type) {
      case 'regression-finish':
        this.#regressionRan = true;
        if (body.base) this.#base = body.base;
        if (body.candidate) this.#candidates.set(body.candidate.index, body.candidate);
        return;
      case 'repro-test-finish':
        this.#reproductionRan = true;
        this.#tests.set(body.writer, body.test);
        return;
      case 'matrix-cell-finish':
        this.#reproductionRan = true;
        this.#cells.push(body.cell);
        return;
      case 'pool-tests-start':
        this.#poolRan = true;
        this.#poolRunner = body.runner;
        if (body.error) this.#poolError = body.error;
        return;
      case 'pool-test-finish':
        this.#poolRan = true;
        this.#poolTests.set(body.writer, body.test);
        return;
      case 'pool-cell-finish':
        this.#poolRan = true;
        this.#poolCells.push(body.cell);
        return;
      default:
        return;
    }
  }

  /** Valid generated tests, by writer number. */
  validWriters(): number[] {
    return [...this.#tests.values()]
      .filter((test) => test.valid)
      .map((test) => test.writer)
      .sort((a, b) => a - b);
  }

  /** Writers whose test files failed on base for the reason, or all passed there (`keeps`), before the matrix says whether anyone passes them. */
  #poolValidOnBase(): number[] {
    return [...this.#poolTests.values()]
      .filter((test) => (test.base_outcome === 'failed' || test.keeps === true) && test.discard_reason === null)
      .map((test) => test.writer);
  }

  /** The pool matrix weighed (pool-test-weights.ts). */
  poolWeighing(): PoolWeighing {
    return weighPoolTests(this.#poolValidOnBase(), this.#poolCells);
  }

  /** What selection reads for candidate `index`; undefined when no check produced anything for it. */
  forCandidate(index: number, weighing = this.poolWeighing()): CandidateChecks | undefined {
    const regression = this.#candidates.get(index);
    const valid = new Set(this.validWriters());
    const cells = this.#cells.filter((cell) => cell.index === index && valid.has(cell.writer));
    const pool = weighing.valid.size > 0 ? weighing.scores.get(index) : undefined;
    if (!regression && cells.length === 0 && !pool) return undefined;
    return {
      regressions: regression && regression.status === 'checked' ? regression.regressions.length : null,
      repro_passed: cells.filter((cell) => cell.outcome === 'passed').length,
      repro_total: cells.length,
      ...(pool ? { pool: { ...pool } } : {}),
    };
  }

  /** The pool-test evidence: each test's final validity, the matrix, clusters, scores and sandbox time per candidate. */
  #poolView(): PoolTestsEvidence {
    const weighing = this.poolWeighing();
    const tests = [...this.#poolTests.values()]
      .sort((a, b) => a.writer - b.writer)
      .map((test): PoolTest => {
        if (weighing.valid.has(test.writer)) return { ...test, valid: true };
        if (weighing.unpassed.has(test.writer))
          return {
            ...test,
            valid: false,
            discard_reason: 'no candidate passes it (with its files over the candidate, every id it fails on base)',
          };
        return { ...test, valid: false };
      });
    const matrix = [...this.#poolCells].sort((a, b) => a.index - b.index || a.writer - b.writer);
    const spent = new Map<number, number>();
    for (const test of tests) spent.set(test.writer, (spent.get(test.writer) ?? 0) + test.sandbox_ms);
    for (const cell of matrix) spent.set(cell.index, (spent.get(cell.index) ?? 0) + cell.duration_ms);
    return {
      runner: this.#poolRunner,
      ...(this.#poolError ? { error: this.#poolError } : {}),
      tests,
      matrix,
      clusters: weighing.clusters,
      scores: [...weighing.scores].sort(([a], [b]) => a - b).map(([index, score]) => ({ index, ...score })),
      sandbox_ms: [...spent].sort(([a], [b]) => a - b).map(([index, sandbox_ms]) => ({ index, sandbox_ms })),
    };
  }

  /** The writers whose test already has a cell for candidate `index`. */
  cellsOf(index: number): number[] {
    return this.#cells.filter((cell) => cell.index === index).map((cell) => cell.writer);
  }

  /** The matrix rows: per candidate, valid tests passed / run. */
  matrixRows(): Array<{ index: number; passed: number; total: number }> {
    const indexes = [...new Set(this.#cells.map((cell) => cell.index))].sort((a, b) => a - b);
    return indexes.map((index) => {
      const checks = this.forCandidate(index)!;
      return { index, passed: checks.repro_passed, total: checks.repro_total };
    });
  }

  view(): ChecksEvidence {
    const tests = [...this.#tests.values()].sort((a, b) => a.writer - b.writer);
    const candidates = [...this.#candidates.values()].sort((a, b) => a.index - b.index);
    const sandboxMs =
      (this.#base?.duration_ms ?? 0) +
      // sandbox_ms: the sandbox time; events stored before it existed carry only the wall time.
      candidates.reduce((sum, c) => sum + (c.sandbox_ms ?? c.duration_ms), 0) +
      tests.reduce((sum, t) => sum + t.sandbox_ms, 0) +
      this.#cells.reduce((sum, cell) => sum + cell.duration_ms, 0) +
      [...this.#poolTests.values()].reduce((sum, t) => sum + t.sandbox_ms, 0) +
      this.#poolCells.reduce((sum, cell) => sum + cell.duration_ms, 0);
    return {
      regression: this.#regressionRan ? { base: this.#base, candidates } : null,
      reproduction: this.#reproductionRan
        ? { tests, matrix: [...this.#cells].sort((a, b) => a.index - b.index || a.writer - b.writer) }
        : null,
      pool_tests: this.#poolRan ? this.#poolView() : null,
      cost: {
        sandbox_ms: sandboxMs,
        policy_tokens: tests.reduce((sum, t) => sum + t.tokens, 0),
        policy_calls: tests.reduce((sum, t) => sum + t.policy_calls, 0),
      },
    };
  }
}
