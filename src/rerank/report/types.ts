/** What a rerank report shows: the run, the metrics, every instance's choice, truncation. */
import type { Strategy } from '../../types/index.js';
import type { MetricsReport } from '../../metrics/ranking.js';
import type { ScoredBy } from '../../scoring/scorer-identity.js';

export interface RunInfo {
  strategy: Strategy;
  /** Scorer backend: onnx | sglang | vllm | openai. */
  scorer: string;
  /** Value model name or folder. */
  model: string;
  /** Serialization template. */
  template: string;
  /** Input files read (predictions, trajectories, tasks, labels). */
  files: string[];
  /** Phase durations in milliseconds, in display order, e.g. `{ import: 120, score: 5400 }`. */
  timings: Record<string, number>;
  /** Free-form notes shown under the run table: degradations, skipped inputs. */
  notes?: string[];
  /** The web inspector's pages for this run (`winnower inspect`), relative to the report. */
  inspector?: string;
  /** Which model (folder hash) and selector scored the run, as the summary JSON's `scored_by`. */
  scored_by?: ScoredBy | null;
}

/** One instance's outcome. */
export interface SelectionSummary {
  instance_id: string;
  repo: string;
  /** Chosen trajectory id, null when no candidate had a usable patch. */
  chosen: string | null;
  /** The chosen candidate's value, null when unscored or nothing chosen. */
  value: number | null;
  /** Whether the chosen candidate resolved the instance; null without labels or choice. */
  resolved: boolean | null;
  /** Whether any candidate resolved the instance; null without labels. */
  any_resolved: boolean | null;
  /** Number of candidates. */
  candidates: number;
  /** Selection.reason. */
  reason?: string;
  /** Candidates with tamper flags ("skips-test in tests/test_x.py", docs/checks.md#tamper-checks); absent when none. */
  flagged?: Array<{ trajectory_id: string; chosen: boolean; flags: string }>;
}

/** How many scorer inputs serialization had to cut to fit the token budget. */
export interface TruncationStats {
  /** Inputs serialized for scoring. */
  inputs: number;
  /** Inputs cut in any way. */
  truncated: number;
  /** Totals over all inputs (from Score.cut). */
  thoughts?: number;
  observations?: number;
  steps_dropped?: number;
  /** Inputs whose patch itself had to be cut. */
  patches_cut?: number;
}

export interface ReportInput {
  /** Defaults to "winnower rerank report". */
  title?: string;
  /** ISO 8601 time shown in the header; omitted when absent (keeps renders reproducible). */
  generated_at?: string;
  run: RunInfo;
  metrics: MetricsReport;
  selections: SelectionSummary[];
  truncation: TruncationStats;
}
