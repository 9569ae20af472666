/**
 * Issue 19's scoring budget on the serializer: a huge candidate (the 300,000-line, 2.3 MB patch of
 * issue 18) and a normal ~4K-token candidate, serialized under a 4K budget by this checkout
 * ("after") and by a git ref ("before", the serializer that tokenized every piece whole), beside
 * a baseline measured in the same run: one native count of the same text (the whole patch; the
 * 4K candidate's serialized text). Wall and CPU (process.cpuUsage: the tokenizer's threads too) per
 * serialization, p50 over the repetitions; ratios are before / after and case / baseline.
 *
 *   npx tsx bench/serialize-large.bench.ts [--reps 5] [--ref 180641a~1] [--cases patch,4k]
 *
 * The 4K candidate's three measurements (baseline, before, after) alternate within each
 * repetition, so a shared machine's load changes weigh on all three alike.
 *
 * Prints a markdown table and writes it to bench/results/serialize-large.md (WINNOWER_BENCH_OUT=path
 * writes there instead).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { serializeTrajectory as serializeAfter } from '../src/serialize/serialize-trajectory.js';
import { loadTokenizer, type Tokenizer } from '../src/serialize/tokenizer.js';
import { syntheticTrajectory } from '../src/loadgen/synthetic-trajectory.js';
import { Task, Trajectory } from '../src/types/index.js';
import { largeAddedFilePatch } from '../test/support/large-patch.js';
import { budgetLine } from './budget-line.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const { values: args } = parseArgs({
  options: {
    reps: { type: 'string', default: '5' },
    ref: { type: 'string', default: '180641a~1' },
    cases: { type: 'string', default: 'patch,4k' },
  },
});
const CASES = new Set(args.cases.split(','));
const REPS = Number(args.reps);
const BUDGET = 4096;

// The serializer at `ref`, from a copy of its src/ (node_modules shared with this checkout).
const before = mkdtempSync(join(tmpdir(), 'winnower-serialize-before-'));
execFileSync('sh', ['-c', `git -C "${root}" archive "${args.ref}" src | tar -x -C "${before}"`]);
symlinkSync(join(root, 'node_modules'), join(before, 'node_modules'));
const { serializeTrajectory: serializeBefore } = (await import(join(before, 'src/serialize/serialize-trajectory.ts'))) as {
  serializeTrajectory: typeof serializeAfter;
};

interface Row {
  name: string;
  wall: number;
  cpu: number;
  note: string;
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function measure(name: string, reps: number, body: () => Promise<string>): Promise<Row> {
  let note = await body();
  const walls: number[] = [];
  const cpus: number[] = [];
  for (let i = 0; i < reps; i += 1) {
    const cpu = process.cpuUsage();
    const start = performance.now();
    note = await body();
    walls.push(performance.now() - start);
    const used = process.cpuUsage(cpu);
    cpus.push((used.user + used.system) / 1000);
  }
  return { name, wall: median(walls), cpu: median(cpus), note };
}

const patch = largeAddedFilePatch();
const bigTask = Task.parse({ instance_id: 'o__r-1', problem_statement: 'calc adds wrongly' });
const big = Trajectory.parse({ id: 'big', instance_id: bigTask.instance_id, source: 'bench', patch });
// About 4K tokens uncut with judge-v1: the candidate a value model usually sees.
const normal = syntheticTrajectory(9);

const rows: Row[] = [];
const ratios: string[] = [];
const budgets: string[] = [];
const loadStart = loadavg()[0]!;
const fmt = (value: number, digits = 1): string => value.toFixed(digits);
for (const [label, dir] of CASES.has('patch')
  ? ([
      ['winnower-value', 'models/winnower-value'],
      ['tiny-value', 'models/tiny-value'],
    ] as const)
  : []) {
  const tokenizer: Tokenizer = await loadTokenizer(join(root, dir));
  const baseline = await measure(
    `baseline: count the whole patch once (${label})`,
    REPS,
    async () => `${(await tokenizer.countTokens([patch]))[0]} tokens`,
  );
  const run = (serialize: typeof serializeAfter) => async () => {
    const serialized = await serialize(bigTask, big, { template: 'patch-v1', budgetTokens: BUDGET, tokenizer });
    return `${serialized.inputTokens} tokens, tokens_before ${serialized.cut.tokens_before}`;
  };
  const old = await measure(`300k-line patch, patch-v1, before (${label})`, Math.min(REPS, 3), run(serializeBefore));
  const now = await measure(`300k-line patch, patch-v1, after (${label})`, REPS, run(serializeAfter));
  rows.push(baseline, old, now);
  ratios.push(
    `- 300k-line patch (${label}): before / after ${fmt(old.wall / now.wall)}× wall, ${fmt(old.cpu / now.cpu)}× CPU; after / baseline ${fmt(now.wall / baseline.wall, 3)}× wall; before / baseline ${fmt(old.wall / baseline.wall, 2)}× wall`,
  );
}

const tokenizer = await loadTokenizer(join(root, 'models/winnower-value'));
const text = (await serializeAfter(normal.task, normal.trajectory, { template: 'judge-v1', budgetTokens: 1_000_000, tokenizer })).text;
const encodeOnce = async () => `${(await tokenizer.encode([text]))[0]!.length} tokens, ${text.length} chars`;
const runNormal = (serialize: typeof serializeAfter) => async () => {
  const serialized = await serialize(normal.task, normal.trajectory, { template: 'judge-v1', budgetTokens: BUDGET, tokenizer });
  return `${serialized.inputTokens} tokens, truncated: ${serialized.truncated}`;
};
if (CASES.has('4k')) {
  // Interleaved: one repetition of each in turn, so the three share the machine's load alike.
  const bodies = [encodeOnce, runNormal(serializeBefore), runNormal(serializeAfter)];
  const samples = bodies.map(() => ({ walls: [] as number[], cpus: [] as number[], note: '' }));
  for (const [index, body] of bodies.entries()) samples[index]!.note = await body();
  for (let rep = 0; rep < REPS * 20; rep += 1) {
    for (const [index, body] of bodies.entries()) {
      const cpu = process.cpuUsage();
      const start = performance.now();
      await body();
      samples[index]!.walls.push(performance.now() - start);
      const used = process.cpuUsage(cpu);
      samples[index]!.cpus.push((used.user + used.system) / 1000);
    }
  }
  const [baseline, old, now] = samples.map((sample, index) => ({
    name: ["baseline: encode the 4K candidate's text once", '4K candidate, judge-v1, before', '4K candidate, judge-v1, after'][index]!,
    wall: median(sample.walls),
    cpu: median(sample.cpus),
    note: sample.note,
  })) as [Row, Row, Row];
  rows.push(baseline, old, now);
  budgets.push(
    budgetLine({
      name: 'serializing a ~4K-token candidate (judge-v1, 4K budget) ÷ one native encode of its text, CPU (p50, interleaved)',
      budget: '≤ 1.3×',
      measured: `${fmt(now.cpu / baseline.cpu, 2)}× (${fmt(now.cpu, 1)} ms against ${fmt(baseline.cpu, 1)} ms)`,
      met: now.cpu / baseline.cpu <= 1.3,
      load: `${fmt(loadStart, 1)}–${fmt(loadavg()[0]!, 1)}`,
    }),
  );
  ratios.push(
    `- 4K candidate: before / after ${fmt(old.wall / now.wall, 2)}× wall, ${fmt(old.cpu / now.cpu, 2)}× CPU; after / baseline ${fmt(now.wall / baseline.wall, 2)}× wall, ${fmt(now.cpu / baseline.cpu, 2)}× CPU; before / baseline ${fmt(old.cpu / baseline.cpu, 2)}× CPU`,
  );
}
rmSync(before, { recursive: true, force: true });

const report = `# Serializing a huge candidate (issue 19's scoring budget)

\`npx tsx bench/serialize-large.bench.ts --reps ${REPS} --ref ${args.ref} --cases ${args.cases}\` — ${new Date().toISOString().slice(0, 10)}, Node ${process.version},
${cpus()[0]?.model ?? 'cpu'} × ${availableParallelism()}, load average at the end ${loadavg()
  .map((value) => fmt(value, 2))
  .join(' / ')}.

Budget ${BUDGET} tokens. "before" is the serializer at \`${args.ref}\` (every piece counted whole), "after" this checkout
(a piece over max(64K characters, 2 × budget × chars_per_token) counted on its head + tail first). p50 of ${REPS}
repetitions (before on the patch: ${Math.min(REPS, 3)}; the 4K candidate: ${REPS * 20}, interleaved); CPU is the process's user + system time,
the tokenizer's threads included. This machine is shared: compare ratios, not absolute figures.

| case | wall ms (p50) | CPU ms (p50) | note |
|---|---:|---:|---|
${rows.map((row) => `| ${row.name} | ${fmt(row.wall)} | ${fmt(row.cpu)} | ${row.note} |`).join('\n')}

${ratios.join('\n')}
${budgets.length > 0 ? `\n${budgets.join('\n')}\n` : ''}`;
console.log(report);
mkdirSync(join(root, 'bench/results'), { recursive: true });
writeFileSync(process.env.WINNOWER_BENCH_OUT ?? join(root, 'bench/results/serialize-large.md'), report);
