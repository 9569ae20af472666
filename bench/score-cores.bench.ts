/**
 * Issue 31.1's scaling budget: the bundled model's `/score` throughput with the server on 2 CPUs
 * against the same server on 1 (≥ 1.7×). Each run is `winnower bench`'s own code (src/loadgen)
 * against a `winnower serve` it starts pinned with `taskset -c` (the server sizes its ONNX
 * workers and serialization by the CPUs it is given); 1 and 2 CPUs alternate, each pair run
 * back to back, every request distinct (score cache off). The load generator (autocannon, this
 * process) is not pinned: on 2 CPUs it shares them with the server, on 1 it has the other to
 * itself, so the ratio is if anything understated.
 *
 *   npx tsx bench/score-cores.bench.ts [--pairs 3] [--connections 16] [--rounds 6] [--warmup 2]
 *
 * Writes bench/results/score-cores.md (WINNOWER_BENCH_OUT=path writes there instead).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { runBench, type BenchRun } from '../src/loadgen/run-bench.js';
import { budgetLine } from './budget-line.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const { values } = parseArgs({
  options: {
    pairs: { type: 'string', default: '3' },
    connections: { type: 'string', default: '16' },
    rounds: { type: 'string', default: '6' },
    warmup: { type: 'string', default: '2' },
  },
});
if (availableParallelism() < 2) {
  console.error(`score-cores: this host has ${availableParallelism()} CPU; the comparison needs 2`);
  process.exit(2);
}
const connections = Number(values.connections);
const load = () => loadavg()[0]!.toFixed(1);

const measure = async (cpuList: string): Promise<{ run: BenchRun; load: string; tokens: number | undefined }> => {
  process.stderr.write(`/score, bundled model, server on CPUs ${cpuList}\n`);
  const report = await runBench({
    scenario: 'score',
    connections: [connections],
    durationS: 0,
    perConnection: Number(values.rounds),
    warmupS: Number(values.warmup),
    timeoutS: 300,
    candidates: 8,
    tokens: 4096,
    batching: true,
    compareBackend: false,
    n: 1,
    policyLatencyMs: 0,
    verify: false,
    progress: false,
    entry: join(root, 'src/cli/main.ts'),
    serverCpus: cpuList,
  });
  return { run: report.runs[0]!, load: load(), tokens: report.request.input_tokens_per_candidate as number | undefined };
};

const pairs: Array<{ one: Awaited<ReturnType<typeof measure>>; two: Awaited<ReturnType<typeof measure>> }> = [];
for (let pair = 0; pair < Number(values.pairs); pair += 1) {
  // Alternate which goes first, so a load trend does not favour one side.
  if (pair % 2 === 0) {
    const one = await measure('0');
    pairs.push({ one, two: await measure('0,1') });
  } else {
    const two = await measure('0,1');
    pairs.push({ two, one: await measure('0') });
  }
}

const format = (n: number, digits = 1) => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
const ratios = pairs.map(({ one, two }) => two.run.winnower.requests_per_s / one.run.winnower.requests_per_s);
const sorted = [...ratios].sort((a, b) => a - b);
const median = sorted.length % 2 ? sorted[(sorted.length - 1) / 2]! : (sorted[sorted.length / 2 - 1]! + sorted[sorted.length / 2]!) / 2;
const loads = pairs.flatMap(({ one, two }) => [Number(one.load), Number(two.load)]);
const loadRange = `${Math.min(...loads).toFixed(1)}–${Math.max(...loads).toFixed(1)}`;
const row = (label: string, pair: number, { run, load: rowLoad }: Awaited<ReturnType<typeof measure>>) =>
  `| ${pair} | ${label} | ${run.winnower.requests} | ${format(run.winnower.requests_per_s)} | ${run.winnower.latency_ms.p50} / ${run.winnower.latency_ms.p99} | ${run.winnower.errors + run.winnower.non_2xx} | ${rowLoad} |`;

const lines = [
  "# The bundled model's /score on 1 CPU and on 2 (issue 31.1)",
  '',
  `${new Date().toISOString().slice(0, 10)} · Node ${process.versions.node} · ${availableParallelism()} CPUs (${cpus()[0]?.model.trim() ?? 'unknown'}) · load average (1 min) per row, ${load()} at the end.`,
  '',
  `\`npx tsx bench/score-cores.bench.ts --pairs ${values.pairs} --connections ${values.connections} --rounds ${values.rounds} --warmup ${values.warmup}\`: \`winnower serve\` with the bundled ONNX model (score cache off, batching on) pinned with \`taskset -c 0\`, then \`-c 0,1\` (the order alternating by pair); /score with 8 candidates of ~4K tokens (${pairs[0]?.one.tokens ?? '?'} as the server counted them), ${connections} connections, ${values.rounds} requests per connection after ${values.warmup} s of warm-up. The load generator runs unpinned beside the server.`,
  '',
  '| pair | server CPUs | requests | req/s | p50 / p99 ms | errors | load |',
  '|---:|---|---:|---:|---:|---:|---|',
  ...pairs.flatMap(({ one, two }, index) => [row('0', index + 1, one), row('0,1', index + 1, two)]),
  '',
  `2 CPUs ÷ 1, each pair: ${ratios.map((ratio) => format(ratio, 2)).join(', ')}; median ${format(median, 2)}.`,
  '',
  budgetLine({
    name: `bundled model /score req/s, server on 2 CPUs ÷ on 1 (8 × ~4K tokens, ${connections} connections; median of ${pairs.length} pairs, each listed)`,
    budget: '≥ 1.7×',
    measured: `${format(median, 2)}× (${ratios.map((ratio) => format(ratio, 2)).join(', ')})`,
    met: median >= 1.7,
    load: loadRange,
  }),
  '',
];
const table = lines.join('\n');
console.log(table);
mkdirSync(join(root, 'bench/results'), { recursive: true });
writeFileSync(resolve(root, process.env.WINNOWER_BENCH_OUT ?? 'bench/results/score-cores.md'), table);
