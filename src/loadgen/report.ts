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

/** Fewer finished requests than this, or fewer rounds per connection than ROUNDS, and a row's figures are mostly noise. */
export const MIN_REQUESTS = 30;
export const MIN_ROUNDS = 3;

/**
 * Why a finished row is too short to mean anything, and the duration (s) that would do: enough
 * time for MIN_REQUESTS at the rate seen and for MIN_ROUNDS of the p50 latency per connection.
 * Rows with none finished are the incomplete ones, reported apart.
 */
export function shortRow(result: LoadResult): { why: string; durationS: number } | undefined {
  if (result.requests === 0) return undefined;
  const few = result.requests < MIN_REQUESTS;
  const slow = result.duration_s * 1000 < MIN_ROUNDS * result.latency_ms.p50;
  if (!few && !slow) return undefined;
  const needed = Math.max(MIN_REQUESTS / Math.max(result.requests_per_s, 1e-9), (MIN_ROUNDS * result.latency_ms.p50) / 1000);
  const why = few
    ? `${result.requests} requests finished (under ${MIN_REQUESTS})`
    : `${result.duration_s} s is under ${MIN_ROUNDS} × the p50 of ${result.latency_ms.p50} ms`;
  return { why, durationS: Math.ceil(needed * 1.2) };
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
  const short = report.runs.flatMap((run) =>
    [run.backend, run.winnower].flatMap((result) => {
      const found = result && !result.incomplete ? shortRow(result) : undefined;
      return found ? [{ connections: run.connections, ...found }] : [];
    }),
  );
  if (short.length) {
    // The advice speaks the measure the run was made with.
    const most = Math.max(...short.map((each) => each.connections));
    const advice =
      report.load.amount !== undefined
        ? `--amount ${Math.max(MIN_REQUESTS, MIN_ROUNDS * most) * 2} or more`
        : report.load.requests_per_connection !== undefined
          ? `--per-connection ${Math.max(MIN_ROUNDS * 2, Math.ceil((MIN_REQUESTS * 2) / most))} or more`
          : `--duration ${Math.max(...short.map((each) => each.durationS))} or more (or --per-connection ${MIN_ROUNDS * 2})`;
    lines.push(
      '',
      `too short to mean anything (${short.map((each) => `c=${each.connections}: ${each.why}`).join('; ')}): run with ${advice}, and compare ratios of runs made back to back`,
    );
  }
  const failures = report.runs.reduce((sum, run) => sum + run.winnower.errors + run.winnower.non_2xx + run.winnower.failed_answers, 0);
  if (failures > 0)
    lines.push('', `${failures} requests failed (errors, non-2xx, or 2xx with a candidate unscored): see status codes with --json`);
  return lines.join('\n');
}
