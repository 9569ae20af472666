/**
 * Trajectory-signal weights learned from labelled history (src/train/fit-trajectory.ts), checked
 * on sources held out of the fit: per source family with a mixed held-out pool, the weights are
 * fitted on the pools that family never touched and `robust` ranks the held-out pools with them,
 * beside `robust` with its fixed trajectory prior and the trivial selectors (bootstrap intervals
 * over pools). Only rows that carry a trajectory (messages) feed the fit; a fold whose held-out
 * pools have none is skipped and named. `learned` needs a value model per fold: `winnower train`
 * runs that check itself (its leave-one-source-out table has both strategies with and without the
 * weights, and it keeps the weights in use only when they are at least as good).
 *
 *   npx tsx bench/train-trajectory.bench.ts [--rollouts more.jsonl ...] [--tasks tasks.jsonl ...] [--bootstrap 1000]
 *
 * Default data: ../shared/data/train. Prints a markdown report and writes it to
 * bench/results/train-trajectory.md.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { SELECTOR_FORMAT, type LearnedSelector } from '../src/select/index.js';
import { loadDataset, type LabelledCandidate } from '../src/train/dataset.js';
import { evalPool, ROBUST, ROBUST_FIXED } from '../src/train/eval-pools.js';
import { evaluateScope, formatTables, TRIVIAL_SELECTORS, type EvalPool, type ScopeTable } from '../src/train/evaluate.js';
import { fitTrajectoryWeights, unscoredSelectorPools } from '../src/train/fit-trajectory.js';
import { rotatingSources, sourceFamily, splitBySource } from '../src/train/split.js';
import { groupBy } from '../src/util/group-by.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const { values: args } = parseArgs({
  options: {
    bootstrap: { type: 'string', default: '1000' },
    rollouts: { type: 'string', multiple: true },
    tasks: { type: 'string', multiple: true },
  },
});
const bootstrap = Number(args.bootstrap);
const data = join(root, '..', 'shared', 'data', 'train');
const rollouts = args.rollouts ?? [join(data, 'candidates.jsonl')];
const tasks = args.tasks ?? (args.rollouts ? [] : [join(data, 'tasks.jsonl')]);
const lines: string[] = [
  '# Trajectory-signal weights on sources held out of the fit',
  '',
  `Command: \`npx tsx bench/train-trajectory.bench.ts ${process.argv.slice(2).join(' ')}\``,
  `Data: ${rollouts.join(', ')}`,
  `Host: ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, load ${loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')} at start`,
  '',
];

const hasTrajectory = (c: LabelledCandidate) => c.trajectory.messages.length > 0;
const mixed = (members: LabelledCandidate[]) => members.some((c) => c.resolved) && members.some((c) => !c.resolved);

if (!rollouts.every((path) => existsSync(path))) {
  lines.push(`Skipped: ${rollouts.filter((path) => !existsSync(path)).join(', ')} missing.`);
} else {
  const started = Date.now();
  const dataset = await loadDataset({ rollouts, tasks, onInvalid: 'skip' });
  const candidates = dataset.candidates;
  const byFamily = [...groupBy(candidates, (c) => sourceFamily(c.trajectory.source))].sort(([a], [b]) => (a < b ? -1 : 1));
  lines.push(
    '## Rows with trajectories',
    '',
    '| source family | candidates | with a trajectory | pools with both outcomes (its own candidates) | the same among its candidates with a trajectory |',
    '|---|---|---|---|---|',
    ...byFamily.map(([family, members]) => {
      const pools = [...groupBy(members, (c) => c.pool).values()];
      const usable = pools.filter((pool) => mixed(pool.filter(hasTrajectory)));
      return `| ${family} | ${members.length} | ${members.filter(hasTrajectory).length} | ${pools.filter(mixed).length} | ${usable.length} |`;
    }),
    '',
  );
  const withTrajectories = candidates.filter(hasTrajectory).length;
  const empty: LearnedSelector = { format: SELECTOR_FORMAT, signals: [] };
  if (withTrajectories === 0) {
    // Still run the fit on every row, to show what `winnower train` does with such data.
    const fitted = fitTrajectoryWeights(unscoredSelectorPools(candidates), empty);
    lines.push(
      `Skipped: none of the ${candidates.length} labelled rows carries a trajectory (patch-only predictions: \`traj_path\` names a log in its source repository, which is not in this folder), so there is nothing to fit or validate the trajectory weights on.`,
      `The fit over all rows returns ${fitted ? 'weights (unexpected)' : 'nothing'}: \`winnower train\` on these rows writes no \`trajectory\` section into selector.json, and \`robust\` and \`learned\` keep their fixed trajectory priors (robust: +0.25 × last test run passed; learned: the stated \`learned: false\` weights). The shipped model folder (models/winnower-value, trained on the permissive rows of this folder) therefore keeps the fixed priors: no learned weight overrides them in the shipped default.`,
      `${((Date.now() - started) / 1000).toFixed(1)} s wall (loading, signals of every pool, the fit).`,
      '',
    );
  } else {
    const families = rotatingSources(candidates);
    const options = { selectors: [...TRIVIAL_SELECTORS, ROBUST_FIXED, ROBUST], probabilistic: [], bootstrap, seed: 1 };
    const folds: Array<{ family: string; pools: EvalPool[]; note: string }> = [];
    const skipped: string[] = [];
    for (const family of families) {
      const { train, validation } = splitBySource(candidates, [family], 1);
      const groups = [...groupBy(validation, (c) => c.pool).values()];
      if (!groups.some((members) => members.some(hasTrajectory))) {
        skipped.push(`${family} (no held-out candidate has a trajectory)`);
        continue;
      }
      const trajectory = fitTrajectoryWeights(unscoredSelectorPools(train), empty);
      if (!trajectory) {
        skipped.push(`${family} (no training pool with both outcomes has trajectories)`);
        continue;
      }
      const selector: LearnedSelector = { ...empty, trajectory };
      const weights = Object.entries(trajectory.robust)
        .map(([name, w]) => `${name} ${w.toFixed(3)}`)
        .join(', ');
      folds.push({
        family,
        pools: groups.map((members) =>
          evalPool(
            members,
            members.map(() => undefined),
            selector,
          ),
        ),
        note: `held out ${family}: robust weights ${weights} (fitted on ${trajectory.rows} candidates in ${trajectory.pools} pools)`,
      });
    }
    if (folds.length === 0) {
      lines.push(
        `Skipped: no fold held out candidates with trajectories and had trajectories to fit on (${skipped.join('; ') || 'no source family with a mixed pool'}).`,
        '',
      );
    } else {
      const pooled = folds.flatMap((fold) => fold.pools);
      const tables: ScopeTable[] = [
        evaluateScope(`leave-one-source-out, ${folds.length} folds (${folds.map((f) => f.family).join(', ')}): all`, pooled, options),
        evaluateScope(
          `leave-one-source-out, ${folds.length} folds: mixed-label`,
          pooled.filter((pool) => pool.candidates.some((c) => c.resolved) && pool.candidates.some((c) => !c.resolved)),
          options,
        ),
        ...folds.map((fold) => evaluateScope(`held out ${fold.family}: all`, fold.pools, options)),
      ];
      lines.push(
        '## `robust` with fitted trajectory weights beside its fixed prior and the trivial selectors',
        '',
        ...folds.map((fold) => `- ${fold.note}`),
        ...(skipped.length ? [`- skipped: ${skipped.join('; ')}`] : []),
        '',
        `${((Date.now() - started) / 1000).toFixed(1)} s wall.`,
        '',
        formatTables(tables),
      );
    }
  }
}

const report = lines.join('\n');
console.log(report);
mkdirSync(join(root, 'bench', 'results'), { recursive: true });
writeFileSync(join(root, 'bench', 'results', 'train-trajectory.md'), `${report}\n`);
