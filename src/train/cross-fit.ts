/**
 * `winnower rerank --cross-fit K`: what training on your own labelled runs would give you. The
 * instances are split into K folds; for each fold, own-history priors per agent configuration
 * (priors.ts) are learned from the other folds' labels only, and the fold's pools are ranked by
 * the `robust` strategy with those priors (and with trajectory weights fitted on the other folds,
 * when their candidates carry trajectories). No pool is ever ranked with its own labels. The table
 * puts the trivial selectors beside it (bootstrap intervals over pools), and each run's own
 * resolve rate (picking that run every time) beside the overall figure.
 */
import { computeSignals, robustScore, SELECTOR_FORMAT } from '../select/index.js';
import { prepare } from '../select/prepare.js';
import { fitPriors } from '../select/priors.js';
import { rankRobust } from '../select/strategies/robust.js';
import { groupBy } from '../util/group-by.js';
import { loadDataset, type DatasetOptions, type LabelledCandidate } from './dataset.js';
import { evaluateScope, formatTables, TRIVIAL_SELECTORS, type EvalPool, type ScopeTable } from './evaluate.js';
import { wnwError } from '../errors.js';
import { foldOf, matchesSource } from './split.js';
import { fitTrajectoryWeights, unscoredSelectorPools } from './fit-trajectory.js';

export const CROSS_FITTED = 'cross-fitted own history';
export const ZERO_SHOT = 'robust (no history)';

export interface CrossFitOptions extends Omit<DatasetOptions, 'permissiveOnly'> {
  folds: number;
  seed?: number;
  bootstrap?: number;
  /** Only these runs or source families (`matchesSource`). */
  sources?: string[];
}

export interface RunFigure {
  source: string;
  candidates: number;
  /** Share resolved when always taking this run's candidate (over its own candidates). */
  resolved: number;
}

/** One pool's out-of-fold pick: ranked with priors learned on the other folds only. */
export interface CrossFitChoice {
  instance_id: string;
  pool: string;
  fold: number;
  /** The chosen trajectory, or null when no candidate was usable. */
  chosen: string | null;
  /** The chosen candidate's patch ('' when none was chosen). */
  patch: string;
  /** Every candidate with its out-of-fold rank (1 = first) and label. */
  candidates: Array<{ trajectory_id: string; source: string; rank: number | null; resolved: boolean; usable: boolean }>;
}

export interface CrossFitResult {
  folds: number;
  choices: CrossFitChoice[];
  table: ScopeTable;
  mixed: ScopeTable;
  runs: RunFigure[];
  markdown: string;
  seconds: number;
}

/** Cross-fits priors over instance folds of already loaded candidates. */
export function crossFitCandidates(
  candidates: LabelledCandidate[],
  options: { folds: number; seed?: number; bootstrap?: number },
): Omit<CrossFitResult, 'seconds'> {
  const seed = options.seed ?? 1;
  const foldOfPool = (c: LabelledCandidate) => foldOf(c.trajectory.instance_id, options.folds, seed);
  const pools: EvalPool[] = [];
  const choices: CrossFitChoice[] = [];
  for (let k = 0; k < options.folds; k++) {
    const history = candidates.filter((c) => foldOfPool(c) !== k);
    const priors = fitPriors(history);
    // Patch-only history has no trajectory signal to fit: skip computing its signals.
    const trajectory = history.some((c) => c.trajectory.messages.length > 0)
      ? fitTrajectoryWeights(unscoredSelectorPools(history), { format: SELECTOR_FORMAT, signals: [] })
      : undefined;
    for (const members of groupBy(
      candidates.filter((c) => foldOfPool(c) === k),
      (c) => c.pool,
    ).values()) {
      const prepared = prepare(
        members.map((c) => ({ trajectory: c.trajectory })),
        members[0]!.trajectory.instance_id,
      );
      const task = members[0]!.task;
      const withHistory = rankRobust(prepared, task, priors, trajectory);
      const zeroShot = rankRobust(prepared, task);
      const signals = computeSignals(prepared, task);
      pools.push({
        pool: members[0]!.pool,
        benchmark: members[0]!.benchmark,
        candidates: prepared.candidates.map((p, i) => ({
          id: p.id,
          resolved: members[i]!.resolved,
          usable: p.usable,
          changedLines: p.changedLines,
          clusterKey: p.normalized?.key ?? null,
        })),
        values: {
          [CROSS_FITTED]: withHistory.ranking.reduce<Array<number | null>>((values, entry) => {
            // The ranking's own order as a score: first place highest.
            values[prepared.candidates.findIndex((p) => p.id === entry.trajectory_id)] = -entry.rank;
            return values;
          }, new Array<number | null>(members.length).fill(null)),
          [ZERO_SHOT]: signals.map((s, i) => robustScore(s) - 1e-6 * Math.log1p(prepared.candidates[i]!.changedLines)),
        },
        chosen: { [CROSS_FITTED]: withHistory.chosen, [ZERO_SHOT]: zeroShot.chosen },
      });
      const rankOf = new Map(withHistory.ranking.map((entry) => [entry.trajectory_id, entry.rank]));
      choices.push({
        instance_id: members[0]!.trajectory.instance_id,
        pool: members[0]!.pool,
        fold: k,
        chosen: withHistory.chosen,
        patch: members.find((c) => c.trajectory.id === withHistory.chosen)?.trajectory.patch ?? '',
        candidates: members.map((c, i) => ({
          trajectory_id: c.trajectory.id,
          source: c.trajectory.source,
          rank: rankOf.get(prepared.candidates[i]!.id) ?? null,
          resolved: c.resolved,
          usable: prepared.candidates[i]!.usable,
        })),
      });
    }
  }
  const evaluateOptions = {
    selectors: [...TRIVIAL_SELECTORS, ZERO_SHOT, CROSS_FITTED],
    probabilistic: [],
    bootstrap: options.bootstrap ?? 1000,
    seed,
  };
  const table = evaluateScope(`cross-fitted over ${options.folds} instance folds: all`, pools, evaluateOptions);
  const mixed = evaluateScope(
    `cross-fitted over ${options.folds} instance folds: mixed-label`,
    pools.filter((pool) => pool.candidates.some((c) => c.resolved) && pool.candidates.some((c) => !c.resolved)),
    evaluateOptions,
  );
  const runs = [...groupBy(candidates, (c) => c.trajectory.source).entries()]
    .map(([source, members]) => ({
      source,
      candidates: members.length,
      resolved: members.filter((c) => c.resolved).length / members.length,
    }))
    .sort((a, b) => (a.source < b.source ? -1 : 1));
  const runLines = runs.map((run) => `| ${run.source} | ${run.candidates} | ${(100 * run.resolved).toFixed(1)} |`).join('\n');
  const markdown = `${formatTables([table, mixed])}\n### each run alone\n\n| run | candidates | resolved % |\n|---|---|---|\n${runLines}\n`;
  return { folds: options.folds, choices, table, mixed, runs, markdown };
}

/** Loads labelled candidates as `winnower train` does and cross-fits them. */
export async function crossFit(options: CrossFitOptions): Promise<CrossFitResult> {
  const started = Date.now();
  const dataset = await loadDataset(options);
  const kept = options.sources?.length
    ? dataset.candidates.filter((c) => matchesSource(c.trajectory.source, options.sources!))
    : dataset.candidates;
  if (kept.length === 0)
    throw wnwError('WNW_ERR_INPUT_INVALID', `no labelled candidate comes from ${options.sources!.join(', ')}`, {
      details: { field: 'sources' },
    });
  const result = crossFitCandidates(kept, options);
  return { ...result, seconds: (Date.now() - started) / 1000 };
}
