import { describe, expect, it } from 'vitest';
import type { LoadResult } from '../../src/loadgen/load.js';
import { formatReport, shortRow } from '../../src/loadgen/report.js';
import type { BenchReport } from '../../src/loadgen/run-bench.js';

const result = (overrides: Partial<LoadResult>): LoadResult => ({
  connections: 16,
  duration_s: 10,
  requests: 200,
  requests_per_s: 20,
  latency_ms: { p50: 800, p90: 1200, p99: 1500, max: 1600, mean: 820 },
  errors: 0,
  timeouts: 0,
  in_flight: 16,
  incomplete: false,
  non_2xx: 0,
  failed_answers: 0,
  status_codes: { '200': 200 },
  ...overrides,
});

const report = (winnower: LoadResult): BenchReport => ({
  scenario: 'rerank',
  target: 'self-started',
  server: {},
  request: {},
  load: { duration_s: winnower.duration_s, warmup_s: 0, timeout_s: 120 },
  runs: [{ connections: winnower.connections, winnower }],
});

describe('bench report: rows too short to mean anything', () => {
  it('leaves a row of enough requests and rounds alone', () => {
    expect(shortRow(result({}))).toBeUndefined();
    expect(formatReport(report(result({})))).not.toContain('too short');
  });

  it('flags a row with fewer than 30 requests and suggests a duration that would give them', () => {
    const few = result({
      duration_s: 3,
      requests: 12,
      requests_per_s: 4,
      latency_ms: { p50: 900, p90: 1000, p99: 1100, max: 1200, mean: 950 },
    });
    // 30 requests at 4 req/s is 7.5 s; with a fifth more, 9 s.
    expect(shortRow(few)).toEqual({ why: '12 requests finished (under 30)', durationS: 9 });
    expect(formatReport(report(few))).toContain(
      'too short to mean anything (c=16: 12 requests finished (under 30)): run with --duration 9 or more',
    );
  });

  it('speaks the measure the run was made with: --amount or --per-connection, not --duration', () => {
    const few = result({ duration_s: 3, requests: 12, requests_per_s: 4 });
    const made = (load: BenchReport['load']) => formatReport({ ...report(few), load });
    const byAmount = made({ amount: 12, warmup_s: 0, timeout_s: 120 });
    expect(byAmount).toContain('run with --amount 96 or more,');
    expect(byAmount).not.toContain('--duration');
    const byRounds = made({ requests_per_connection: 1, warmup_s: 0, timeout_s: 120 });
    expect(byRounds).toContain('run with --per-connection 6 or more,');
    expect(byRounds).not.toContain('--duration');
  });

  it('flags a row shorter than 3 × its p50 even with many requests', () => {
    const slow = result({
      connections: 64,
      duration_s: 10,
      requests: 64,
      requests_per_s: 6.4,
      latency_ms: { p50: 9000, p90: 9500, p99: 9900, max: 9990, mean: 9100 },
    });
    expect(shortRow(slow)).toEqual({ why: '10 s is under 3 × the p50 of 9000 ms', durationS: 33 });
    expect(formatReport(report(slow))).toContain('--duration 33');
  });

  it('leaves a row with nothing finished to the incomplete note', () => {
    const none = result({ requests: 0, requests_per_s: 0, in_flight: 64, incomplete: true });
    expect(shortRow(none)).toBeUndefined();
    const text = formatReport(report(none));
    expect(text).toContain('incomplete rows');
    expect(text).not.toContain('too short');
  });
});
