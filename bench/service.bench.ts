/**
 * The service under autocannon (`winnower bench`'s own code, src/loadgen): /score and /rerank with
 * N = 8 candidates of ~4K tokens on the bundled model at 1, 16 and 64 connections, batching on
 * and off; then the overhead of winnower over direct calls to a fixed-latency scorer backend
 * (50 ms, vLLM protocol) in the same run, for 4K-token and 256-token candidates. Writes
 * bench/results/service.md.
 *
 * The bundled-model rows run a fixed number of requests per connection (`--rounds`), not a
 * duration: at 64 connections every request shares the CPU and they all finish late together,
 * so a short window could count none.
 *
 *   npx tsx bench/service.bench.ts [--rounds 6] [--duration 8] [--warmup 2] [--connections 1,16,64]
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { runBench, type BenchOptions, type BenchReport } from '../src/loadgen/run-bench.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '8' },
    warmup: { type: 'string', default: '2' },
    connections: { type: 'string', default: '1,16,64' },
    rounds: { type: 'string', default: '6' },
  },
});
const connections = values.connections.split(',').map(Number);
const base: BenchOptions = {
  scenario: 'score',
  connections,
  durationS: Number(values.duration),
  warmupS: Number(values.warmup),
  timeoutS: 120,
  candidates: 8,
  tokens: 4096,
  batching: true,
  compareBackend: false,
  backendLatencyMs: 50,
  n: 1,
  policyLatencyMs: 0,
  verify: false,
  progress: true,
  entry: join(root, 'src/cli/main.ts'),
};

const run = async (label: string, options: Partial<BenchOptions>): Promise<BenchReport> => {
  process.stderr.write(`${label}\n`);
  return runBench({ ...base, ...options });
};

const format = (n: number, digits = 1) =>
  Number.isFinite(n) ? n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits }) : '–';

const bundled: Array<{ scenario: 'score' | 'rerank'; on: BenchReport; off: BenchReport }> = [];
for (const scenario of ['score', 'rerank'] as const) {
  const perConnection = Number(values.rounds);
  const on = await run(`${scenario}, batching on`, { scenario, batching: true, perConnection });
  const off = await run(`${scenario}, batching off`, { scenario, batching: false, perConnection });
  bundled.push({ scenario, on, off });
}
const compared = [
  { tokens: 4096, report: await run('overhead, 4K tokens', { compareBackend: true, tokens: 4096 }) },
  { tokens: 256, report: await run('overhead, 256 tokens', { compareBackend: true, tokens: 256 }) },
];

const lines = [
  '# winnower service under load',
  '',
  `${new Date().toISOString().slice(0, 10)} · Node ${process.versions.node} · ${availableParallelism()} CPUs (${cpus()[0]?.model.trim() ?? 'unknown'}), shared with other work · ` +
    `autocannon in this process, winnower in a child process (\`winnower serve\`, score cache off, every request distinct) · bundled-model rows: ${values.rounds} requests per connection; overhead rows: ${base.durationS} s; each after ${base.warmupS} s of warm-up · load average ${loadavg()[0]!.toFixed(1)} at the end (other work on the machine).`,
  '',
  '`npx tsx bench/service.bench.ts` (the same runs as `winnower bench --scenario score|rerank -c 1,16,64 [--no-batching] [--compare-backend]`).',
  '',
  `## Bundled model: N = ${base.candidates} candidates, ~${base.tokens} tokens each`,
  '',
  '| route | connections | batching on req/s | p99 ms | batching off req/s | p99 ms | on ÷ off req/s | errors |',
  '|---|---:|---:|---:|---:|---:|---:|---:|',
  ...bundled.flatMap(({ scenario, on, off }) =>
    on.runs.map((runOn, index) => {
      const runOff = off.runs[index]!;
      const errors = runOn.winnower.errors + runOn.winnower.non_2xx + runOff.winnower.errors + runOff.winnower.non_2xx;
      return `| /${scenario} | ${runOn.connections} | ${format(runOn.winnower.requests_per_s)} | ${runOn.winnower.latency_ms.p99} | ${format(runOff.winnower.requests_per_s)} | ${runOff.winnower.latency_ms.p99} | ${format(runOn.winnower.requests_per_s / runOff.winnower.requests_per_s, 2)} | ${errors} |`;
    }),
  ),
  '',
  `Tokens per candidate as the server counted them: ${bundled.map(({ scenario, on }) => `/${scenario} ${String(on.request.input_tokens_per_candidate)}`).join(', ')}.`,
  '',
  `## Overhead over direct backend calls (fixed ${base.backendLatencyMs} ms backend, /score, N = ${base.candidates}, batching on)`,
  '',
  'Each row pair runs in the same process and minute: first the exact `/classify` body winnower sent the backend, straight to it; then `/score` through winnower.',
  '',
  '| tokens / candidate | connections | direct req/s | direct p50 / p99 ms | winnower req/s | winnower p50 / p99 ms | mean latency × | winnower adds | throughput × |',
  '|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ...compared.flatMap(({ tokens, report }) =>
    report.runs.map((each) => {
      const direct = each.backend!;
      const through = each.winnower;
      const overhead = each.overhead!;
      return `| ${tokens} | ${each.connections} | ${format(direct.requests_per_s)} | ${direct.latency_ms.p50} / ${direct.latency_ms.p99} | ${format(through.requests_per_s)} | ${through.latency_ms.p50} / ${through.latency_ms.p99} | ${format(overhead.latency_mean_ratio, 2)} | ${overhead.added_latency_percent}% | ${format(overhead.throughput_ratio, 2)} |`;
    }),
  ),
  '',
];
const table = lines.join('\n');
console.log(table);
mkdirSync(join(root, 'bench/results'), { recursive: true });
writeFileSync(join(root, 'bench/results/service.md'), table);
