/** The judge's reports summed over a batch, and one line that says what it did. */
import type { JudgeReport } from '../types/index.js';

/** Counts added up, tie rates over all the usable candidates, the first error kept; undefined for none. */
export function sumJudgeReports(reports: readonly JudgeReport[]): JudgeReport | undefined {
  const first = reports[0];
  if (!first) return undefined;
  const total = (key: 'comparisons' | 'pairs' | 'prompt_tokens' | 'completion_tokens' | 'usable' | 'tied_before' | 'tied_after') =>
    reports.reduce((sum, report) => sum + report[key], 0);
  const usable = total('usable');
  return {
    model: first.model,
    strategy: first.strategy,
    comparisons: total('comparisons'),
    pairs: total('pairs'),
    prompt_tokens: total('prompt_tokens'),
    completion_tokens: total('completion_tokens'),
    usable,
    tied_before: total('tied_before'),
    tied_after: total('tied_after'),
    tie_rate_before: usable === 0 ? 0 : total('tied_before') / usable,
    tie_rate_after: usable === 0 ? 0 : total('tied_after') / usable,
    error: reports.find((report) => report.error !== null)?.error ?? null,
  };
}

const percent = (rate: number) => `${Math.round(rate * 1000) / 10}%`;

/** "judge m: 12 comparisons (6 pairs), 3400 prompt tokens; tie rate 40% before, 10% after". */
export function describeJudgeReport(report: JudgeReport): string {
  const cost = `${report.comparisons} comparisons (${report.pairs} pairs), ${report.prompt_tokens} prompt and ${report.completion_tokens} completion tokens`;
  const ties = `tie rate ${percent(report.tie_rate_before)} before, ${percent(report.tie_rate_after)} after`;
  const failed = report.error ? `; failed, selection went on without it: ${report.error.code}: ${report.error.message}` : '';
  return `judge ${report.model} (${report.strategy}): ${cost}; ${ties}${failed}`;
}
