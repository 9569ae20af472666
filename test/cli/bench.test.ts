/** `winnower bench` as a user runs it: a server started here, --json prints one JSON object, bad flags name themselves. */
import { describe, expect, it } from 'vitest';
import { runBench } from '../../src/bench/run-bench.js';
import { runCli } from '../support/cli.js';

describe('winnower bench', () => {
  it('benchmarks /score against its own server and a fixed-latency backend, and prints one JSON object', async () => {
    const run = await runCli(['bench', '--scenario', 'score', '-c', '1,2', '-a', '6', '--warmup', '0', '--candidates', '2', '--tokens', '300', '--compare-backend', '--backend-latency', '5', '--json', '--no-progress'], { timeoutMs: 120_000 });
    expect(run.code, run.stderr).toBe(0);
    const lines = run.stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    const report = JSON.parse(lines[0]!);
    expect(report).toMatchObject({ scenario: 'score', target: 'self-started', request: { candidates: 2, trajectory_tokens: 300 } });
    expect(report.request.input_tokens_per_candidate).toBeGreaterThan(0);
    expect(report.runs.map((run: { connections: number }) => run.connections)).toEqual([1, 2]);
    for (const each of report.runs) {
      expect(each.winnower).toMatchObject({ requests: 6, errors: 0, timeouts: 0, non_2xx: 0 });
      expect(each.backend).toMatchObject({ requests: 6, errors: 0, non_2xx: 0 });
      // The stub answers after 5 ms, so neither path can be faster than that.
      expect(each.backend.latency_ms.p50).toBeGreaterThanOrEqual(5);
      expect(each.overhead.latency_mean_ratio).toBeGreaterThan(0);
    }
  }, 150_000);

  it('refuses an unknown scenario naming the flag and the valid ones', async () => {
    const run = await runCli(['bench', '--scenario', 'nope', '--no-progress']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--scenario');
    expect(run.stderr).toContain('score, rerank, solve');
  });

  it('refuses --compare-backend with --url, or for solve, before starting anything', async () => {
    const options = { connections: [1], durationS: 1, warmupS: 0, timeoutS: 5, candidates: 1, tokens: 10, batching: true, compareBackend: true, backendLatencyMs: 5, n: 1, policyLatencyMs: 0, verify: false, progress: false };
    await expect(runBench({ ...options, scenario: 'score', url: 'http://127.0.0.1:9' })).rejects.toThrow(/leave out --url/);
    await expect(runBench({ ...options, scenario: 'solve' })).rejects.toThrow(/score or rerank/);
  });
});
