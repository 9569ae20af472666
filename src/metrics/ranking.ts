/**
 * Ranking metrics for labelled best-of-N runs: how much of the oracle's headroom a selector
 * recovers (mean@1, pass@N, selected@1, headroom closed) and how good the value model's scores
 * are as probabilities (ROC AUC, expected calibration error, Brier score). Pure functions over
 * plain rows; definitions in docs/metrics.md.
 */
import { z } from 'zod';
import { wnwError } from '../errors.js';

/** One labelled candidate. */
export const MetricRow = z.object({
  instance_id: z.string().min(1),
  /** `owner/name`, for the per-repository split. */
  repo: z.string(),
  trajectory_id: z.string().min(1),
  /** The value model's score in [0, 1], null when the candidate was not scored. */
  value: z.number().nullable(),
  /** The label: did this candidate's patch resolve the instance. */
  resolved: z.boolean(),
  /** Whether the selector chose this candidate (at most one per instance). */
  selected: z.boolean(),
});
export type MetricRow = z.infer<typeof MetricRow>;

/** A scored, labelled point: what AUC, ECE and Brier read. */
export interface LabelledScore {
  value: number;
  resolved: boolean;
}

export interface RankingMetrics {
  instances: number;
  candidates: number;
  resolved_candidates: number;
  /** Candidates with a value (AUC, ECE and Brier use only these). */
  scored_candidates: number;
  /** Instances where a candidate was selected. */
  selected_instances: number;
  /** Mean over instances of (resolved candidates / candidates): a uniformly random pick. */
  mean_at_1: number | null;
  /** Share of instances with at least one resolved candidate: the oracle. */
  pass_at_n: number | null;
  /** Share of instances whose selected candidate is resolved (no selection counts as 0). */
  selected_at_1: number | null;
  /** (selected@1 − mean@1) / (pass@N − mean@1); null when pass@N = mean@1. */
  headroom_closed: number | null;
  auc: number | null;
  ece: number | null;
  brier: number | null;
}

export interface CalibrationBin {
  /** Bin edges; a bin holds lower ≤ value < upper, the last one also value = 1. */
  lower: number;
  upper: number;
  count: number;
  /** Mean predicted value in the bin, null when empty. */
  mean_value: number | null;
  /** Fraction resolved in the bin, null when empty. */
  observed: number | null;
}

export interface HistogramBin {
  lower: number;
  upper: number;
  resolved: number;
  unresolved: number;
}

export interface MetricsReport {
  overall: RankingMetrics;
  /** Keyed by repository, keys sorted. */
  by_repo: Record<string, RankingMetrics>;
  /** Reliability diagram data over all scored rows (10 bins unless asked otherwise). */
  calibration: CalibrationBin[];
  /** Score distribution by label over all scored rows (20 bins unless asked otherwise). */
  histogram: HistogramBin[];
}

export interface MetricsOptions {
  /** Calibration bins for ECE and the reliability diagram; default 10. */
  calibrationBins?: number;
  /** Histogram bins; default 20. */
  histogramBins?: number;
}

/** Every metric, overall and per repository. Throws WNW_ERR_INPUT_INVALID on inconsistent rows. */
export function computeMetrics(rows: MetricRow[], options: MetricsOptions = {}): MetricsReport {
  const bins = options.calibrationBins ?? 10;
  const byRepo = new Map<string, MetricRow[]>();
  for (const [, instanceRows] of groupByInstance(rows)) {
    const repo = instanceRows[0]!.repo;
    byRepo.set(repo, [...(byRepo.get(repo) ?? []), ...instanceRows]);
  }
  const repos = [...byRepo.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const points = scoredPoints(rows);
  return {
    overall: rankingMetrics(rows, bins),
    by_repo: Object.fromEntries(repos.map((repo) => [repo, rankingMetrics(byRepo.get(repo)!, bins)])),
    calibration: calibrationBins(points, bins),
    histogram: scoreHistogram(points, options.histogramBins ?? 20),
  };
}

/** All metrics of one set of rows (one repository, or everything). */
export function rankingMetrics(rows: MetricRow[], bins = 10): RankingMetrics {
  const instances = groupByInstance(rows);
  const points = scoredPoints(rows);
  const mean = meanAt1(rows);
  const pass = passAtN(rows);
  const selected = selectedAt1(rows);
  return {
    instances: instances.size,
    candidates: rows.length,
    resolved_candidates: rows.filter((row) => row.resolved).length,
    scored_candidates: points.length,
    selected_instances: [...instances.values()].filter((group) => group.some((row) => row.selected)).length,
    mean_at_1: mean,
    pass_at_n: pass,
    selected_at_1: selected,
    headroom_closed: headroomClosed(selected, mean, pass),
    auc: rocAuc(points),
    ece: expectedCalibrationError(points, bins),
    brier: brierScore(points),
  };
}

/**
 * Rows grouped by instance, in first-seen order. Throws when an instance names two repositories
 * or selects more than one candidate.
 */
export function groupByInstance(rows: MetricRow[]): Map<string, MetricRow[]> {
  const groups = new Map<string, MetricRow[]>();
  for (const row of rows) {
    const group = groups.get(row.instance_id);
    if (!group) {
      groups.set(row.instance_id, [row]);
      continue;
    }
    if (group[0]!.repo !== row.repo) {
      throw wnwError(
        'WNW_ERR_INPUT_INVALID',
        `instance ${row.instance_id} is listed under two repositories (${group[0]!.repo}, ${row.repo})`,
        {
          details: { field: 'repo', instance_id: row.instance_id },
        },
      );
    }
    group.push(row);
  }
  for (const [instance, group] of groups) {
    if (group.filter((row) => row.selected).length > 1) {
      throw wnwError('WNW_ERR_INPUT_INVALID', `instance ${instance} has more than one selected candidate`, {
        details: { field: 'selected', instance_id: instance },
      });
    }
  }
  return groups;
}

/** Mean over instances of the share of resolved candidates; null without rows. */
export function meanAt1(rows: MetricRow[]): number | null {
  return meanOverInstances(rows, (group) => group.filter((row) => row.resolved).length / group.length);
}

/** Share of instances with any resolved candidate; null without rows. */
export function passAtN(rows: MetricRow[]): number | null {
  return meanOverInstances(rows, (group) => Number(group.some((row) => row.resolved)));
}

/** Share of instances whose selected candidate is resolved; an instance with no selection counts 0. */
export function selectedAt1(rows: MetricRow[]): number | null {
  return meanOverInstances(rows, (group) => Number(group.some((row) => row.selected && row.resolved)));
}

/** (selected − mean) / (pass − mean); null when any input is null or pass = mean. */
export function headroomClosed(selected: number | null, mean: number | null, pass: number | null): number | null {
  if (selected === null || mean === null || pass === null) return null;
  const headroom = pass - mean;
  if (Math.abs(headroom) < 1e-12) return null;
  return (selected - mean) / headroom;
}

/**
 * Area under the ROC curve as the Mann-Whitney statistic: the probability that a random resolved
 * candidate scores above a random unresolved one, a tie counting 1/2. Null if a class is empty.
 */
export function rocAuc(points: LabelledScore[]): number | null {
  const positives = points.filter((point) => point.resolved).length;
  const negatives = points.length - positives;
  if (positives === 0 || negatives === 0) return null;
  const sorted = [...points].sort((a, b) => a.value - b.value);
  let positiveRankSum = 0;
  for (let start = 0; start < sorted.length; ) {
    let end = start;
    while (end + 1 < sorted.length && sorted[end + 1]!.value === sorted[start]!.value) end++;
    const averageRank = (start + end) / 2 + 1;
    for (let index = start; index <= end; index++) if (sorted[index]!.resolved) positiveRankSum += averageRank;
    start = end + 1;
  }
  return (positiveRankSum - (positives * (positives + 1)) / 2) / (positives * negatives);
}

/** Equal-width bins over [0, 1]; values outside are clamped into the end bins. */
export function calibrationBins(points: LabelledScore[], bins = 10): CalibrationBin[] {
  const sums = Array.from({ length: bins }, () => ({ count: 0, value: 0, resolved: 0 }));
  for (const point of points) {
    const bin = sums[binIndex(point.value, bins)]!;
    bin.count++;
    bin.value += point.value;
    bin.resolved += Number(point.resolved);
  }
  return sums.map((bin, index) => ({
    lower: index / bins,
    upper: (index + 1) / bins,
    count: bin.count,
    mean_value: bin.count ? bin.value / bin.count : null,
    observed: bin.count ? bin.resolved / bin.count : null,
  }));
}

/** Σ over bins of (bin count / n) × |mean value − fraction resolved|; null without points. */
export function expectedCalibrationError(points: LabelledScore[], bins = 10): number | null {
  if (points.length === 0) return null;
  let total = 0;
  for (const bin of calibrationBins(points, bins)) {
    if (bin.count) total += (bin.count / points.length) * Math.abs(bin.mean_value! - bin.observed!);
  }
  return total;
}

/** Mean of (value − label)², label 1 for resolved; null without points. */
export function brierScore(points: LabelledScore[]): number | null {
  if (points.length === 0) return null;
  return points.reduce((total, point) => total + (point.value - Number(point.resolved)) ** 2, 0) / points.length;
}

/** Counts of resolved and unresolved candidates per equal-width value bin. */
export function scoreHistogram(points: LabelledScore[], bins = 20): HistogramBin[] {
  const histogram = Array.from({ length: bins }, (_, index) => ({
    lower: index / bins,
    upper: (index + 1) / bins,
    resolved: 0,
    unresolved: 0,
  }));
  for (const point of points) {
    const bin = histogram[binIndex(point.value, bins)]!;
    if (point.resolved) bin.resolved++;
    else bin.unresolved++;
  }
  return histogram;
}

/** The rows with a finite value, as labelled points. */
export function scoredPoints(rows: MetricRow[]): LabelledScore[] {
  return rows
    .filter((row) => row.value !== null && Number.isFinite(row.value))
    .map((row) => ({ value: row.value!, resolved: row.resolved }));
}

/** The bin with lower ≤ value < upper, lower = index / bins as reported (value × bins can round across an edge). */
function binIndex(value: number, bins: number): number {
  let index = Math.floor(value * bins);
  if ((index + 1) / bins <= value) index += 1;
  else if (index / bins > value) index -= 1;
  return Math.min(bins - 1, Math.max(0, index));
}

function meanOverInstances(rows: MetricRow[], perInstance: (group: MetricRow[]) => number): number | null {
  const groups = groupByInstance(rows);
  if (groups.size === 0) return null;
  let total = 0;
  for (const group of groups.values()) total += perInstance(group);
  return total / groups.size;
}
