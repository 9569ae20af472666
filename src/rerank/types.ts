/** What the stages of batch reranking (rerank-batch.ts) take and hand on. */
import type { ImportIssue, Labels } from '../formats/index.js';
import type { computeMetrics } from '../metrics/ranking.js';
import type { ValueModel } from '../scoring/value-model.js';
import type { Judge } from '../judge/judge-client.js';
import type { CandidateChecks, JudgeReport, Score, Strategy, TamperFlag, VerifyResult } from '../types/index.js';
import type { CandidateSpool } from './candidate-spool.js';
import type { RerankExecution } from './execute-instance.js';

export interface RerankBatchOptions {
  candidates: string[];
  tasks?: string[];
  labels?: string[];
  format?: string;
  /** `file`: each candidate file is one source (default when several files are given, globs counted as the files they match). */
  sourceFrom?: 'record' | 'file';
  valueModel: ValueModel;
  template?: string;
  budgetTokens?: number;
  strategy: Strategy;
  /** The pairwise judge and its opponents per candidate, for the `judge` and `hybrid` strategies (src/judge). */
  judge?: { judge: Judge; k: number };
  out: string;
  scores: string;
  report?: string;
  /** The inspector's index page for this run, relative to the report (the report links to it). */
  inspector?: string;
  onInvalid?: 'skip' | 'fail';
  /** Stop on what is otherwise a warning: candidates of an instance that has no task record. */
  strict?: boolean;
  /** Instances scored at once (their inputs are batched together by the scorer). */
  concurrency?: number;
  signal?: AbortSignal;
  /** `--verify`: run each instance's code (execute-instance.ts); its evidence goes to `checksFile`. */
  execution?: RerankExecution;
  /** One line per instance of what running its code found (default: beside --out). */
  checksFile?: string;
  onIssue?: (issue: ImportIssue) => void;
  onProgress?: (done: number, total: number, instanceId: string) => void;
}

/** One line of scores.jsonl: a candidate's score (or why it has none) and whether it was chosen. */
export interface ScoreLine {
  instance_id: string;
  trajectory_id: string;
  source: string;
  chosen: boolean;
  resolved: boolean | null;
  score: Score | null;
  error: { code: string; message: string } | null;
  /** With --verify: the given tests' verdict (null: not verified, e.g. the instance could not run). */
  verify?: VerifyResult | null;
  /** With --verify: the checks without a test list that selection read (null: not checked). */
  checks?: CandidateChecks | null;
  /** The candidate's tamper flags (docs/checks.md#tamper-checks), `[]` when clean; absent when its patch is unusable, and in files written before it existed. */
  tamper?: TamperFlag[];
  /** The pairwise judge's games for this candidate, when it was judged: a resumed run selects as this one did. */
  judge?: { model: string; wins: number; games: number };
}

/**
 * What the summary reads of a score line, kept for every candidate until the run ends: the value
 * alone, and the whole score only when a report is written (it reads templates and cuts). A
 * 50,000-candidate run then holds a third of the memory full lines would take
 * (bench/results/rerank-scale.md).
 */
export type SummaryLine = Pick<ScoreLine, 'instance_id' | 'trajectory_id' | 'chosen' | 'resolved' | 'error' | 'verify' | 'checks'> & {
  /** The score's value; null when the candidate has none. */
  value: number | null;
  score?: Score;
};

export interface RerankBatchResult {
  instances: number;
  resumed: number;
  candidates: number;
  predictions: string;
  scores: string;
  report?: { markdown: string; html: string };
  metrics?: ReturnType<typeof computeMetrics>;
  issues: ImportIssue[];
  /** Things the run went on despite (candidates scored without their task record). */
  warnings: RerankWarning[];
  /** Candidates of this run that have no score, and why. */
  unscored: Unscored;
  /** Instances of this run none of whose candidates is usable (empty model_patch), with the selection's reason. */
  noneUsable: Array<{ instance_id: string; reason: string }>;
  timings: Record<string, number>;
  /** The judge's report summed over the instances judged in this run (resumed instances are not judged again). */
  judge?: JudgeReport;
  /** With --verify: what running the code found over the run (summarize.ts). */
  execution?: ExecutionSummary;
}

export interface ExecutionSummary {
  /** The checks file: one line per instance (execute-instance.ts `InstanceExecution`). */
  file: string;
  instances: number;
  /** Instances none of whose candidates could be graded, and why. */
  couldNotRun: Array<{ instance_id: string; reason: string }>;
  /** Instances whose base run fails PASS_TO_PASS tests here (the environment differs). */
  environment: string[];
  /** Candidates graded by the given tests, and how many of them resolved. */
  verified: number;
  resolved: number;
  /** Over labelled candidates graded by the given tests: how often the verdict is the label. */
  agreement: {
    agree: number;
    total: number;
    disagreements: Array<{ instance_id: string; trajectory_id: string; verdict: string; label: boolean }>;
  } | null;
  /** Candidates the regression check compared, and how many of them broke a test. */
  regressionChecked: number;
  regressed: number;
  /** Tests from the pool: tests written (one per candidate that adds or changes a test file), valid, and candidates ranked by them. */
  poolTests: { written: number; valid: number; ranked: number };
  sandboxMs: number;
}

export interface RerankWarning {
  code: string;
  message: string;
  instances: string[];
}

export interface Unscored {
  /** Candidates without a score. */
  candidates: number;
  /** Instances none of whose candidates could be scored (their prediction is not a scored pick). */
  instances: string[];
  /** The first few failures, in instance order. */
  reasons: Array<{ instance_id: string; trajectory_id: string; code: string; message: string }>;
}

/** The run's inputs, read once (load-inputs.ts). */
export interface RerankInputs {
  /** Every candidate and task record imported, read back one instance at a time; closed by the run. */
  spool: CandidateSpool;
  labels: Labels;
  issues: ImportIssue[];
  warnings: RerankWarning[];
}
