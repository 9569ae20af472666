/** Number and text formatting shared by the Markdown and HTML renders. */
import type { RankingMetrics } from '../../metrics/ranking.js';
import type { ReportInput, RunInfo, SelectionSummary } from './types.js';

export const DASH = '—';

/** 0.4 → "40.0%"; null → "—". */
export function percent(value: number | null | undefined): string {
  return value === null || value === undefined ? DASH : `${(value * 100).toFixed(1)}%`;
}

/** 0.7 → "0.700"; null → "—". */
export function fixed(value: number | null | undefined, digits = 3): string {
  return value === null || value === undefined ? DASH : value.toFixed(digits);
}

/** 850 → "850 ms", 5400 → "5.4 s", 192000 → "3 min 12 s". */
export function duration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const seconds = Math.round(ms / 1000);
  return `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
}

/** Yes / no / — for a nullable label. */
export function yesNo(value: boolean | null): string {
  return value === null ? DASH : value ? 'yes' : 'no';
}

/** `scored_by` in one line: model name and short hash, selector strategy (its default, short hash), backend; null without one. */
export function scoredByText(scoredBy: RunInfo['scored_by']): string | null {
  if (!scoredBy) return null;
  const short = (hash: string | null) => (hash ? hash.replace(/^sha256:/, '').slice(0, 12) : null);
  const { model, selector, scorer } = scoredBy;
  const selectorText = selector.path
    ? `selector ${selector.strategy ?? DASH}${selector.default_strategy && selector.default_strategy !== selector.strategy ? ` (default ${selector.default_strategy})` : ''}${short(selector.hash) ? ` (selector.json ${short(selector.hash)})` : ''}`
    : `strategy ${selector.strategy ?? DASH} (no selector.json)`;
  return [`${model.name}${short(model.hash) ? ` (${short(model.hash)})` : ''}`, selectorText, `backend ${scorer.backend}`].join(' · ');
}

export function title(input: ReportInput): string {
  return input.title ?? 'winnower rerank report';
}

/** Instances where some candidate resolved the issue but the chosen one did not. */
export function missed(selections: SelectionSummary[]): SelectionSummary[] {
  return selections.filter((selection) => selection.any_resolved === true && selection.resolved !== true);
}

/** One row per flagged candidate of every instance, for the "Tamper flags" table. */
export function tamperRows(
  selections: SelectionSummary[],
): Array<{ instance_id: string; trajectory_id: string; chosen: boolean; flags: string }> {
  return selections.flatMap((selection) => (selection.flagged ?? []).map((f) => ({ instance_id: selection.instance_id, ...f })));
}

/** Column headers and cells of the metrics table, shared by both renders. */
export const METRIC_COLUMNS = [
  'instances',
  'candidates',
  'resolved',
  'mean@1',
  'pass@N',
  'selected@1',
  'headroom closed',
  'AUC',
  'ECE',
  'Brier',
];

export function metricCells(metrics: RankingMetrics): string[] {
  return [
    String(metrics.instances),
    String(metrics.candidates),
    String(metrics.resolved_candidates),
    percent(metrics.mean_at_1),
    percent(metrics.pass_at_n),
    percent(metrics.selected_at_1),
    percent(metrics.headroom_closed),
    fixed(metrics.auc),
    fixed(metrics.ece),
    fixed(metrics.brier),
  ];
}

/** "12 of 40 inputs (30.0%) were cut: ..." */
export function truncationSentence(input: ReportInput): string {
  const { inputs, truncated, thoughts, observations, steps_dropped: steps, patches_cut: patches } = input.truncation;
  const share = inputs ? ` (${percent(truncated / inputs)})` : '';
  const parts = [
    thoughts ? `${thoughts} thoughts elided` : '',
    observations ? `${observations} observations shortened` : '',
    steps ? `${steps} steps dropped` : '',
    patches ? `${patches} patches cut` : '',
  ].filter(Boolean);
  return `${truncated} of ${inputs} scorer inputs${share} were cut to fit the token budget${parts.length ? `: ${parts.join(', ')}` : ''}.`;
}

/** Escapes text for HTML content and attribute values (also valid inside inline SVG). */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/**
 * Escapes text for a Markdown table cell: no formatting, no HTML, no column breaks. Underscores
 * inside a word (`django__django-11099`) stay as they are: they cannot start emphasis there.
 */
export function escapeMarkdown(text: string): string {
  return text
    .replace(/[\r\n]+/g, ' ')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/([\\`*[\]|#~])/g, '\\$1')
    .replace(/_/g, (underscore, offset: number, whole: string) =>
      /[A-Za-z0-9_]/.test(whole[offset - 1] ?? '') && /[A-Za-z0-9_]/.test(whole[offset + 1] ?? '') ? underscore : '\\_',
    );
}
