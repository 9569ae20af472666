/**
 * `winnower train` budgets: training time on all of ../shared/data/train (and on its permissive
 * rows), and the CPU cost of scoring one 4K-token candidate with the trained model, against the
 * untrained tiny model on the same inputs in the same run (this machine is noisy: ratios, not
 * absolute limits).
 *
 *   npx tsx bench/train.bench.ts [--candidates 64] [--skip-train]
 *
 * Prints a markdown report and writes it to bench/results/train.md.
 */
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { DEFAULT_MODEL_DIR, TINY_MODEL_DIR } from '../src/config.js';
import { createOnnxScorer, type OnnxScorer } from '../src/scoring/onnx/onnx.js';
import { serializeTrajectory } from '../src/serialize/index.js';
import { train } from '../src/train/train.js';
import { syntheticTrajectory } from '../src/loadgen/synthetic-trajectory.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const { values: args } = parseArgs({
  options: { candidates: { type: 'string', default: '64' }, 'skip-train': { type: 'boolean', default: false } },
});
const CANDIDATES = Number(args.candidates);
const data = join(root, '..', 'shared', 'data', 'train');
const lines: string[] = [
  `# winnower train`,
  '',
  `Command: \`npx tsx bench/train.bench.ts ${process.argv.slice(2).join(' ')}\``,
  `Host: ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, load ${loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')} at start`,
  '',
];

if (!args['skip-train']) {
  if (!existsSync(join(data, 'candidates.jsonl'))) {
    lines.push(`Training: skipped, ${data} is missing.`, '');
  } else {
    lines.push('## Training time', '', '| rows | candidates | wall s | CPU s (process) |', '|---|---|---|---|');
    for (const permissiveOnly of [false, true]) {
      const out = mkdtempSync(join(tmpdir(), 'winnower-train-bench-'));
      const cpu = process.cpuUsage();
      const started = Date.now();
      const result = await train({
        rollouts: [join(data, 'candidates.jsonl')],
        tasks: [join(data, 'tasks.jsonl')],
        permissiveOnly,
        onInvalid: 'skip',
        out,
        baselineModel: null,
        bootstrap: 200,
      });
      const used = process.cpuUsage(cpu);
      lines.push(
        `| ${permissiveOnly ? 'permissive' : 'all'} | ${result.trainCandidates + result.validationCandidates} | ${((Date.now() - started) / 1000).toFixed(1)} | ${((used.user + used.system) / 1e6).toFixed(1)} |`,
      );
    }
    lines.push(
      '',
      'Budget: ≤ 600 s on all rows on this 2-core machine (wall time includes encoding, cross-fitting, export and validation through the ONNX scorer).',
      '',
    );
  }
}

/** CPU microseconds per candidate for `scorer` on `texts` (one candidate per call, after a warm-up). */
async function cpuPerCandidate(
  scorer: OnnxScorer,
  inputs: Array<{ key: string; text: string; inputIds?: number[] }>,
): Promise<{ cpuMs: number; wallMs: number }> {
  await scorer.score(inputs.slice(0, 4));
  const cpu = process.cpuUsage();
  const started = performance.now();
  for (const input of inputs) await scorer.score([input]);
  const used = process.cpuUsage(cpu);
  return { cpuMs: (used.user + used.system) / 1000 / inputs.length, wallMs: (performance.now() - started) / inputs.length };
}

lines.push(
  '## Scoring one 4K-token candidate',
  '',
  '| model | tokens (mean) | CPU ms / candidate | wall ms / candidate | CPU ratio vs untrained |',
  '|---|---|---|---|---|',
);
let baseline = 0;
for (const [name, dir] of [
  ['untrained tiny (baseline)', TINY_MODEL_DIR()],
  ['trained (models/winnower-value)', DEFAULT_MODEL_DIR()],
] as const) {
  const scorer = await createOnnxScorer({ modelDir: dir, workers: 1, intraOpThreads: 1, maxInputTokens: 4096 });
  try {
    const inputs = [];
    for (let i = 0; i < CANDIDATES; i++) {
      const { task, trajectory } = syntheticTrajectory(60, 1000 + i);
      const serialized = await serializeTrajectory(task, trajectory, {
        template: 'judge-v1',
        budgetTokens: 4096,
        tokenizer: scorer.tokenizer,
      });
      inputs.push({ key: `${name}-${i}`, text: serialized.text, inputIds: serialized.inputIds });
    }
    const tokens = inputs.reduce((sum, input) => sum + (input.inputIds?.length ?? 0), 0) / inputs.length;
    const { cpuMs, wallMs } = await cpuPerCandidate(scorer, inputs);
    if (!baseline) baseline = cpuMs;
    lines.push(`| ${name} | ${tokens.toFixed(0)} | ${cpuMs.toFixed(2)} | ${wallMs.toFixed(2)} | ${(cpuMs / baseline).toFixed(2)} |`);
  } finally {
    await scorer.close();
  }
}
lines.push(
  '',
  'CPU time is the whole process (main thread and the ONNX worker), serialization excluded; budget ≤ 5 ms per 4K-token candidate.',
  '',
);
const report = lines.join('\n');
console.log(report);
mkdirSync(join(root, 'bench', 'results'), { recursive: true });
writeFileSync(join(root, 'bench', 'results', 'train.md'), report);
