/** `winnower bench` output: a table for people, or the report as one JSON object (`--json`). */
import type { BenchReport } from './run-bench.js';
import type { LoadResult } from './load.js';

const HEADER = [
  'target',
  'conn',
  'req/s',
  'p50 ms',
  'p90 ms',
  'p99 ms',
  'max ms',
  'errors',
  'timeouts',
  'non-2xx',
  'unscored',
  'in flight',
];

/** A row whose window closed with more requests running than finished is marked, and with none finished it has no figures at all (not zeros). */
function row(target: string, connections: number, result: LoadResult): string[] {
  const { latency_ms: latency } = result;
  const figure = (value: string) => (result.requests === 0 ? '-' : value);
  return [
    result.incomplete ? `${target} (incomplete)` : target,
    String(connections),
    figure(result.requests_per_s.toFixed(1)),
    ...[latency.p50, latency.p90, latency.p99, latency.max].map((value) => figure(String(value))),
    String(result.errors),
    String(result.timeouts),
    String(result.non_2xx),
    String(result.failed_answers),
    String(result.in_flight),
  ];
}

function table(rows: string[][]): string {
  const widths = HEADER.map((_, column) => Math.max(...[HEADER, ...rows].map((cells) => cells[column]!.length)));
  const line = (cells: string[]) =>
    cells.map((cell, column) => (column === 0 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!))).join('  ');
  return [line(HEADER), widths.map((width) => '-'.repeat(width)).join('  '), ...rows.map(line)].join('\n');
}

export function formatReport(report: BenchReport): string {
  const rows: string[][] = [];
  for (const run of report.runs) {
    if (run.backend) rows.push(row('backend direct', run.connections, run.backend));
    rows.push(row(`winnower /${report.scenario}`, run.connections, run.winnower));
  }
  const describe = (record: Record<string, unknown>) =>
    Object.entries(record)
      .map(([key, value]) => `${key} ${String(value)}`)
      .join(', ');
  const lines = [
    `winnower bench: ${report.scenario} against ${report.target} (${describe(report.server)})`,
    `request: ${describe(report.request)}; load: ${describe(report.load)}`,
    '',
    table(rows),
  ];
  const compared = report.runs.filter((run) => run.overhead);
  if (report.direct) {
    const { path, body_bytes: bytes, numbered, captured } = report.direct;
    lines.push(
      `backend direct: POST ${path}, ${bytes} bytes, ${numbered ? 'each with its own request number, as winnower would send it' : 'the same body every time (no request number found in it)'}; ${captured}`,
    );
  }
  if (compared.length) {
    lines.push('', 'overhead of winnower over direct backend calls (same run):');
    for (const run of compared) {
      const o = run.overhead!;
      lines.push(
        `  c=${run.connections}: mean latency x${o.latency_mean_ratio} (${o.added_latency_percent >= 0 ? '+' : ''}${o.added_latency_percent}%), p99 x${o.latency_p99_ratio}, throughput x${o.throughput_ratio}`,
      );
    }
  }
  const incomplete = report.runs.flatMap((run) =>
    [run.backend, run.winnower]
      .filter((result) => result?.incomplete)
      .map((result) => `c=${run.connections}: ${result!.requests} finished, ${result!.in_flight} still in flight`),
  );
  if (incomplete.length) {
    lines.push(
      '',
      `incomplete rows (${incomplete.join('; ')}): more requests were still running than had finished when the window closed, so their figures describe only the fastest requests; run longer (--duration, or --amount) or with fewer connections`,
    );
  }
  const failures = report.runs.reduce((sum, run) => sum + run.winnower.errors + run.winnower.non_2xx + run.winnower.failed_answers, 0);
  if (failures > 0)
    lines.push('', `${failures} requests failed (errors, non-2xx, or 2xx with a candidate unscored): see status codes with --json`);
  return lines.join('\n');
}
