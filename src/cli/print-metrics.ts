/** A compact terminal table of ranking metrics. */
import type { MetricsReport, RankingMetrics } from '../metrics/ranking.js';

const pct = (value: number | null) => (value === null ? '—' : `${(value * 100).toFixed(1)}%`);
const num = (value: number | null) => (value === null ? '—' : value.toFixed(3));

function row(name: string, m: RankingMetrics): string[] {
  return [
    name,
    String(m.instances),
    String(m.candidates),
    pct(m.mean_at_1),
    pct(m.pass_at_n),
    pct(m.selected_at_1),
    pct(m.headroom_closed),
    num(m.auc),
    num(m.ece),
  ];
}

export function printMetrics(metrics: MetricsReport, out: (line: string) => void = console.log): void {
  const rows = [
    ['', 'instances', 'candidates', 'mean@1', 'pass@N', 'selected@1', 'headroom', 'AUC', 'ECE'],
    row('overall', metrics.overall),
    ...Object.entries(metrics.by_repo).map(([repo, m]) => row(repo, m)),
  ];
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((r) => r[column]!.length)));
  for (const r of rows)
    out(r.map((cell, column) => (column === 0 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!))).join('  '));
}
