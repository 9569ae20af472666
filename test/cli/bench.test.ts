/** `winnower bench` as a user runs it: a server started here, --json prints one JSON object, bad flags name themselves. */
import { describe, expect, it } from 'vitest';
import { runBench } from '../../src/loadgen/run-bench.js';
import { startFakeVllm } from '../fakes/fake-vllm.js';
import { runCli } from '../support/cli.js';

/** A /classify body with its bench request number taken out, and that number. */
function numbered(body: unknown): { shape: string; numbers: string[] } {
  const text = JSON.stringify(body);
  return {
    shape: text.replace(/bench request \d+/g, 'bench request #'),
    numbers: [...new Set([...text.matchAll(/bench request (\d+)/g)].map((match) => match[1]!))],
  };
}

describe('winnower bench', () => {
  it('benchmarks /score against its own server and a fixed-latency backend, and prints one JSON object', async () => {
    const run = await runCli(
      [
        'bench',
        '--scenario',
        'score',
        '-c',
        '1,2',
        '-a',
        '6',
        '--warmup',
        '0',
        '--candidates',
        '2',
        '--tokens',
        '300',
        '--compare-backend',
        '--backend-latency',
        '5',
        '--json',
        '--no-progress',
      ],
      { timeoutMs: 120_000 },
    );
    expect(run.code, run.stderr).toBe(0);
    const lines = run.stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    const report = JSON.parse(lines[0]!);
    expect(report).toMatchObject({ scenario: 'score', target: 'self-started', request: { candidates: 2, trajectory_tokens: 300 } });
    expect(report.request.input_tokens_per_candidate).toBeGreaterThan(0);
    expect(report.direct).toMatchObject({ path: '/classify', numbered: true, captured: 'recorded by the stub backend itself' });
    expect(report.runs.map((run: { connections: number }) => run.connections)).toEqual([1, 2]);
    for (const each of report.runs) {
      expect(each.winnower).toMatchObject({ requests: 6, errors: 0, timeouts: 0, non_2xx: 0 });
      expect(each.backend).toMatchObject({ requests: 6, errors: 0, non_2xx: 0 });
      // The stub answers after 5 ms, so neither path can be faster than that.
      expect(each.backend.latency_ms.p50).toBeGreaterThanOrEqual(5);
      expect(each.overhead.latency_mean_ratio).toBeGreaterThan(0);
    }
  }, 150_000);

  it("with --backend-url, measures the operator's vLLM server straight and through winnower with the very bodies winnower sends", async () => {
    const vllm = await startFakeVllm();
    try {
      const run = await runCli(
        [
          'bench',
          '--scenario',
          'score',
          '-c',
          '1,2',
          '-a',
          '4',
          '--warmup',
          '0',
          '--candidates',
          '2',
          '--tokens',
          '200',
          '--no-batching',
          '--compare-backend',
          '--backend-url',
          vllm.url,
          '--json',
          '--no-progress',
        ],
        { timeoutMs: 150_000 },
      );
      expect(run.code, run.stderr).toBe(0);
      const report = JSON.parse(run.stdout.trim());
      expect(report.server.scorer).toBe(`vllm at ${vllm.url}, model ${vllm.model}`);
      expect(report.direct).toMatchObject({ path: '/classify', numbered: true });
      for (const each of report.runs) {
        expect(each.winnower).toMatchObject({ requests: 4, errors: 0, timeouts: 0, non_2xx: 0 });
        expect(each.backend).toMatchObject({ requests: 4, errors: 0, timeouts: 0, non_2xx: 0 });
        expect(each.overhead.latency_mean_ratio).toBeGreaterThan(0);
      }
      // winnower's calls carry its request id; the bench's direct ones are sent as captured, without one.
      const calls = vllm.requests.filter(
        (request) => request.path === '/classify' && JSON.stringify(request.body).includes('bench request'),
      );
      const fromWinnower = calls
        .filter((request) => request.headers['x-request-id'] !== undefined)
        .map((request) => numbered(request.body));
      const direct = calls.filter((request) => request.headers['x-request-id'] === undefined).map((request) => numbered(request.body));
      expect(direct).toHaveLength(8);
      // Probes and the capture, then 4 + 4 measured requests.
      expect(fromWinnower.length).toBeGreaterThanOrEqual(8);
      // Every body has the shape winnower sent: the same model, inputs and fields, only the request number differs.
      expect(new Set([...fromWinnower, ...direct].map((call) => call.shape)).size).toBe(1);
      // Each direct body carries its own number (in each candidate's text), never one a winnower request used, so no cache answered either path.
      for (const call of direct) expect(call.numbers).toHaveLength(1);
      const directNumbers = direct.map((call) => call.numbers[0]!);
      expect(new Set(directNumbers).size).toBe(8);
      const winnowerNumbers = new Set(fromWinnower.flatMap((call) => call.numbers));
      expect(directNumbers.filter((value) => winnowerNumbers.has(value))).toEqual([]);
    } finally {
      await vllm.close();
    }
  }, 200_000);

  it("stops before measuring when winnower's scorer fails (its readiness probe found it down: /score answers 503 naming the scorer's error)", async () => {
    const vllm = await startFakeVllm();
    vllm.refuse = () => true;
    try {
      const run = await runCli(
        [
          'bench',
          '--scenario',
          'score',
          '-c',
          '1',
          '-a',
          '2',
          '--warmup',
          '0',
          '--candidates',
          '2',
          '--tokens',
          '200',
          '--compare-backend',
          '--backend-url',
          vllm.url,
          '--json',
          '--no-progress',
        ],
        { timeoutMs: 150_000 },
      );
      expect(run.code).not.toBe(0);
      expect(run.stderr).toMatch(/the probe request POST \/score answered 503: .*WNW_ERR_SCORE_UNAVAILABLE.*WNW_ERR_SCORE_UPSTREAM/);
      expect(run.stdout).toBe('');
    } finally {
      await vllm.close();
    }
  }, 200_000);

  it('refuses an unknown scenario naming the flag and the valid ones', async () => {
    const run = await runCli(['bench', '--scenario', 'nope', '--no-progress']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--scenario');
    expect(run.stderr).toContain('score, rerank, solve');
  });

  it('refuses two ways of measuring a run at once (one would be ignored), naming both', async () => {
    const run = await runCli(['bench', '--amount', '5', '--duration', '3', '--no-progress']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--duration and --amount: a run is measured by one of them');
  });

  it('refuses --compare-backend with --url, or for solve, before starting anything', async () => {
    const options = {
      connections: [1],
      durationS: 1,
      warmupS: 0,
      timeoutS: 5,
      candidates: 1,
      tokens: 10,
      batching: true,
      compareBackend: true,
      backendLatencyMs: 5,
      n: 1,
      policyLatencyMs: 0,
      verify: false,
      progress: false,
    };
    await expect(runBench({ ...options, scenario: 'score', url: 'http://127.0.0.1:9' })).rejects.toThrow(/leave out --url/);
    await expect(runBench({ ...options, scenario: 'solve' })).rejects.toThrow(/score or rerank/);
  });

  it('refuses --backend-url flag combinations that cannot mean what they say, naming the flag', async () => {
    const options = {
      scenario: 'score' as const,
      connections: [1],
      durationS: 1,
      warmupS: 0,
      timeoutS: 5,
      candidates: 1,
      tokens: 10,
      batching: true,
      compareBackend: true,
      n: 1,
      policyLatencyMs: 0,
      verify: false,
      progress: false,
    };
    const backendUrl = 'http://127.0.0.1:9';
    await expect(runBench({ ...options, url: 'http://127.0.0.1:9', backendUrl })).rejects.toThrow(
      /--backend-url with --url: .*config the bench cannot see/,
    );
    await expect(runBench({ ...options, compareBackend: false, backendUrl })).rejects.toThrow(/--backend-url .*add --compare-backend/);
    await expect(runBench({ ...options, backendUrl, backendLatencyMs: 5 })).rejects.toThrow(/--backend-latency/);
    await expect(runBench({ ...options, backendModel: 'm' })).rejects.toThrow(/--backend-model .*add --backend-url/);
    await expect(runBench({ ...options, backendUrl: 'gpu:8000' })).rejects.toThrow(/--backend-url: "gpu:8000" is not an http\(s\) URL/);
    const run = await runCli(['bench', '--compare-backend', '--backend-url', backendUrl, '--backend-kind', 'tgi', '--no-progress']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--backend-kind: "tgi" is not one of vllm, sglang');
  });
});
