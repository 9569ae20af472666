/** Progress events of a job, named noun-action; the server streams them as SSE. */
import type {
  CandidatePoolScore,
  CandidateRegressions,
  GeneratedTest,
  MatrixCell,
  PoolCell,
  PoolCluster,
  PoolTest,
  RegressionBase,
} from '../types/checks.js';

export type JobEventBody =
  /** `policies`: a mixed job's policies, each with its n, its waves and the configuration its candidates carry. */
  | {
      type: 'job-start';
      n: number;
      waves: number[];
      policies?: Array<{ index: number; n: number; waves: number[]; config: Record<string, unknown> }>;
    }
  /** A job with `setup`: whether it runs once and is forked (`fork`) or runs in each sandbox (`each`), and why. */
  | { type: 'setup-start'; mode: 'fork' | 'each'; reason: string; commands: number }
  /** The shared setup ran (fork mode): its time and the snapshot's size, or why it failed. */
  | { type: 'setup-finish'; mode: 'fork' | 'each'; duration_ms: number; snapshot_bytes?: number; error?: string }
  /** The built-in agent's shared prefix (agent-prefix.ts): started, and where it came to. */
  | { type: 'prefix-start'; at: 'first-edit' | number }
  | {
      type: 'prefix-finish';
      at: 'first-edit' | number;
      shared: boolean;
      reason: string;
      duration_ms: number;
      steps?: number;
      snapshot_bytes?: number;
      error?: string;
    }
  /** `policy`: which of the job's policies runs it (0 for a one-policy job); `config`: the configuration its candidate carries. */
  | { type: 'rollout-start'; index: number; wave: number; policy?: number; config?: Record<string, unknown> }
  | {
      type: 'rollout-finish';
      index: number;
      status: 'finished' | 'failed' | 'cancelled';
      exit: string;
      steps: number;
      patch_bytes: number;
      error?: string;
    }
  | { type: 'rollout-skip'; index: number; reason: string }
  /** A retry (`retry_of`): rollout `index` finished in the earlier job, whose candidate `from` is taken as it is, not run again. */
  | { type: 'rollout-reuse'; index: number; from: string }
  /** A finished candidate whose patch can never be chosen (no patch, unparseable, refused by the patch rules): not scored or tested. */
  | { type: 'candidate-unusable'; index: number; kind: string; reason: string }
  | { type: 'score-available'; index: number; value: number | null; error?: string }
  /** `other_failures`: set when tests the task does not name failed, or the command exited non-zero with every named test passed. */
  | { type: 'verify-finish'; index: number; status: string; resolved: boolean; exit_code?: number | null; other_failures?: string }
  | { type: 'stop-rule'; index: number; reason: string }
  /** The regression check: `index` null for the base commit's runs (with `base`), else a candidate's (with `candidate`). */
  | { type: 'regression-finish'; index: number | null; base?: RegressionBase; candidate?: CandidateRegressions }
  /** A test writer's test, validated on the base commit (valid or discarded, and why). */
  | { type: 'repro-test-finish'; writer: number; test: GeneratedTest }
  /** One candidate × valid test run of the pass matrix. */
  | { type: 'matrix-cell-finish'; cell: MatrixCell }
  /** The whole pass matrix: the valid tests (writer numbers) and per candidate how many it passes. */
  | { type: 'matrix-finish'; tests: number[]; rows: Array<{ index: number; passed: number; total: number }> }
  /** Tests from the pool: the runner their files run with, or why none runs. */
  | { type: 'pool-tests-start'; runner: string | null; error?: string }
  /** One candidate's test files, run on the base commit (`valid` stays false until the matrix is done). */
  | { type: 'pool-test-finish'; writer: number; test: PoolTest }
  /** One candidate × pool test run of the pool matrix. */
  | { type: 'pool-cell-finish'; cell: PoolCell }
  /** The whole pool matrix: the valid pool tests (writer indexes), their clusters and each candidate's score. */
  | { type: 'pool-matrix-finish'; tests: number[]; clusters: PoolCluster[]; scores: Array<{ index: number } & CandidatePoolScore> }
  | { type: 'selection'; chosen_index: number | null; trajectory_id: string | null; reason: string }
  /**
   * Shared queue: another replica took the job over (`from`'s lease lapsed, or it handed the job
   * back); `kept`: the candidates whose rollouts had ended, kept as they were; the others run again
   * with the same index (their seed).
   */
  | { type: 'taken-over'; from: string; to: string; kept: number[] }
  /** Shared queue: the replica running the job is shutting down and gave it back to the queue. */
  | { type: 'job-requeued'; replica: string; reason: string }
  /** `outcome`: a result's own (`none-usable` when a job that succeeded chose nothing; docs/api.md). */
  | { type: 'job-finish'; status: string; outcome?: string; error?: string };

export type JobEvent = JobEventBody & { seq: number; time: string };

export type JobEventListener = (event: JobEvent) => void;
