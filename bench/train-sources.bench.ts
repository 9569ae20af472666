/**
 * Selection on agents it never saw, on ../shared/data/train (all rows: an experiment, nothing is
 * shipped from it): the zero-shot `robust` default beside the trivial selectors, leave-one-source-
 * out over every source family with a mixed held-out pool and with each permissive source held
 * out; then own history, `--cross-fit 5` on the ACR/SWE-agent Lite runs (8 configurations over 231
 * instances) and on 1,000 of their candidates for the time budget. `robust` needs no training, so
 * its held-out figures do not depend on a fitted model; the learned selector's leave-one-source-out
 * figures come from `winnower train` (the command in bench/results/train-sources.md).
 *
 *   npx tsx bench/train-sources.bench.ts [--bootstrap 1000]
 *
 * Prints a markdown report and writes it to bench/results/train-sources.md.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { loadDataset, type LabelledCandidate } from '../src/train/dataset.js';
import { crossFitCandidates } from '../src/train/cross-fit.js';
import { evalPool, ROBUST } from '../src/train/eval-pools.js';
import { evaluateScope, formatTables, TRIVIAL_SELECTORS, type EvalPool, type ScopeTable } from '../src/train/evaluate.js';
import { matchesSource, rotatingSources, splitBySource } from '../src/train/split.js';
import { groupBy } from '../src/util/group-by.js';
import { SELECTOR_FORMAT, type LearnedSelector } from '../src/select/index.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const { values: args } = parseArgs({ options: { bootstrap: { type: 'string', default: '1000' } } });
const bootstrap = Number(args.bootstrap);
const data = join(root, '..', 'shared', 'data', 'train');
const lines: string[] = [
  '# Selection on sources held out of training',
  '',
  `Command: \`npx tsx bench/train-sources.bench.ts ${process.argv.slice(2).join(' ')}\``,
  `Host: ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, load ${loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')} at start`,
  '',
];

if (!existsSync(join(data, 'candidates.jsonl'))) {
  lines.push(`Skipped: ${data} is missing.`);
} else {
  const started = Date.now();
  const dataset = await loadDataset({ rollouts: [join(data, 'candidates.jsonl')], tasks: [join(data, 'tasks.jsonl')], onInvalid: 'skip' });
  // robust reads no weights: an empty selector (no priors) gives it nothing from training.
  const empty: LearnedSelector = { format: SELECTOR_FORMAT, signals: [] };
  const poolsOf = (validation: LabelledCandidate[]): EvalPool[] =>
    [...groupBy(validation, (c) => c.pool).values()].map((members) =>
      evalPool(
        members,
        members.map(() => undefined),
        empty,
      ),
    );
  const options = { selectors: [...TRIVIAL_SELECTORS, ROBUST], probabilistic: [], bootstrap, seed: 1 };
  const families = rotatingSources(dataset.candidates);
  const folds = families.map((family) => ({ family, pools: poolsOf(splitBySource(dataset.candidates, [family], 1).validation) }));
  const pooled = folds.flatMap((fold) => fold.pools);
  const mixed = (pools: EvalPool[]) =>
    pools.filter((pool) => pool.candidates.some((c) => c.resolved) && pool.candidates.some((c) => !c.resolved));
  const tables: ScopeTable[] = [
    evaluateScope(
      `leave-one-source-out, ${folds.length} folds (${families.join(', ')}; a pool counts once per fold that holds it out): all`,
      pooled,
      options,
    ),
    evaluateScope(`leave-one-source-out, ${folds.length} folds: mixed-label`, mixed(pooled), options),
    ...folds.map((fold) => evaluateScope(`held out ${fold.family}: all`, fold.pools, options)),
  ];
  const seconds = (Date.now() - started) / 1000;
  lines.push(
    '## Zero-shot: `robust` beside the trivial selectors (all rows)',
    '',
    `Each fold validates on every pool a held-out source family touched and sees nothing of it (\`splitBySource\`). ${dataset.candidates.length} candidates; ${seconds.toFixed(1)} s wall for the whole evaluation (robust needs no training).`,
    '',
    formatTables(tables),
  );

  const lite = dataset.candidates.filter((c) => matchesSource(c.trajectory.source, ['acr', 'swe-agent-gpt4']));
  const cfStarted = Date.now();
  const cpu = process.cpuUsage();
  const crossFitted = crossFitCandidates(lite, { folds: 5, bootstrap, seed: 1 });
  const used = process.cpuUsage(cpu);
  lines.push(
    '## Own history: `winnower rerank --cross-fit 5` on the ACR/SWE-agent Lite runs',
    '',
    'Same as `npx tsx src/cli/main.ts rerank --cross-fit 5 --candidates ../shared/data/train/candidates.jsonl --tasks ../shared/data/train/tasks.jsonl --sources acr,swe-agent-gpt4 --skip-invalid` (which also loads and parses the file).',
    `${lite.length} candidates; cross-fitting ${((Date.now() - cfStarted) / 1000).toFixed(1)} s wall, ${((used.user + used.system) / 1e6).toFixed(1)} s CPU.`,
    '',
    crossFitted.markdown,
  );
  const thousand = [...groupBy(lite, (c) => c.pool).values()].flat().slice(0, 1000);
  const t0 = Date.now();
  crossFitCandidates(thousand, { folds: 5, bootstrap, seed: 1 });
  lines.push(
    `Budget: \`--cross-fit 5\` over the first 1,000 of these candidates: ${((Date.now() - t0) / 1000).toFixed(1)} s wall (budget ≤ 300 s).`,
    '',
  );
}

const report = lines.join('\n');
console.log(report);
mkdirSync(join(root, 'bench', 'results'), { recursive: true });
writeFileSync(join(root, 'bench', 'results', 'train-sources.md'), `${report}\n`);
