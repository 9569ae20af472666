/**
 * `winnower train` end to end: load labelled rollouts, split by instance, learn the tokenizer,
 * cross-fit the value model (its out-of-fold predictions calibrate it and train the selector),
 * fit the final model on the whole training side, export the model folder, and evaluate every
 * selector on the validation side through the real ONNX scorer.
 */
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { wnwError } from '../errors.js';
import { scoreCandidates } from '../scoring/score-candidates.js';
import { createOnnxScorer } from '../scoring/onnx/onnx.js';
import { SELECTOR_FILE, type LearnedSelector } from '../select/index.js';
import { loadDataset, type LabelledCandidate } from './dataset.js';
import { evalPool, LEARNED, LEARNED_FIXED, ROBUST, ROBUST_FIXED, TRAINED, UNTRAINED } from './eval-pools.js';
import {
  beatsTrivial,
  bestTrivial,
  evaluateAll,
  evaluateScope,
  formatTables,
  TRIVIAL_SELECTORS,
  type EvalPool,
  type ScopeTable,
} from './evaluate.js';
import { fitSide, type FitSideOptions } from './fit-side.js';
import { writeModelCard, type DataSource, type SplitVerdict } from './model-card.js';
import { exportValueModel, type Calibration } from './onnx-export.js';
import { evaluateHeldOutSources, type HeldOutFold } from './source-holdout.js';
import { matchesSource, rotatingSources, splitByInstance, splitBySource } from './split.js';
import type { TrajectoryWeights } from '../select/trajectory-weights.js';
import { labelledFromStore } from './store-rows.js';
import { predictLogit } from './value-model.js';
import { TRAIN_DEFAULTS } from './defaults.js';
import { groupBy } from '../util/group-by.js';
import { PAD_ID } from './vocabulary.js';

export { TRAIN_DEFAULTS };

export interface TrainOptions {
  rollouts: string[];
  /** Also (or only, with no rollouts) the verified candidates of past jobs in this server data dir (store-rows.ts). */
  fromStore?: string;
  /** How plain rollout paths name their source, as `rerank --source-from` (default: `file` when they are several files). */
  sourceFrom?: 'record' | 'file';
  labels?: string[];
  tasks?: string[];
  out: string;
  seed?: number;
  validationFraction?: number;
  holdoutRepos?: string[];
  /** Validate on the pools of these sources (run names, or families such as `acr`) instead. */
  holdoutSources?: string[];
  /**
   * The source-held-out check that decides the folder's default strategy: leave-one-source-out
   * over every source family with a mixed held-out pool (default, when no --holdout-sources), or
   * none (the default is then `robust`, unchecked).
   */
  sourceCheck?: 'loso' | 'none';
  /** Learn own-history priors per agent configuration into selector.json (default true). */
  priors?: boolean;
  permissiveOnly?: boolean;
  onInvalid?: 'skip' | 'fail';
  vocabSize?: number;
  bigramBuckets?: number;
  dims?: number;
  hidden?: number;
  maxEpochs?: number;
  learningRate?: number;
  folds?: number;
  budgetTokens?: number;
  /** An untrained model folder scored beside the trained one (null: none). */
  baselineModel?: string | null;
  bootstrap?: number;
  /** The command line, for the model card. */
  command?: string;
  signal?: AbortSignal;
  onProgress?: (stage: string, done: number, total: number) => void;
  onLog?: (line: string) => void;
}

export interface TrainResult {
  outDir: string;
  trainCandidates: number;
  validationCandidates: number;
  epochs: number;
  calibration: Calibration;
  selector: LearnedSelector;
  tables: ScopeTable[];
  table: string;
  seconds: number;
  /** Largest |ONNX logit − TypeScript logit| over the validation candidates. */
  exportMaxDiff: number | null;
  /** Per split: whether the learned selector and the robust default reach the best trivial selector. */
  verdicts: SplitVerdict[];
}

export async function train(options: TrainOptions): Promise<TrainResult> {
  const started = Date.now();
  const seed = options.seed ?? TRAIN_DEFAULTS.seed;
  const log = options.onLog ?? (() => {});
  const outDir = resolve(options.out);
  const folds = options.folds ?? TRAIN_DEFAULTS.folds;
  const budgetTokens = options.budgetTokens ?? TRAIN_DEFAULTS.budgetTokens;
  if (folds < 2) throw wnwError('WNW_ERR_INPUT_INVALID', 'folds must be at least 2', { details: { field: 'folds' } });
  if (options.holdoutSources?.length && options.holdoutRepos?.length) {
    throw wnwError('WNW_ERR_INPUT_INVALID', 'give --holdout-sources or --holdout-repos, not both', {
      details: { field: 'holdout_sources' },
    });
  }

  const dataset = await loadTrainingRows(options);
  const bySource = Boolean(options.holdoutSources?.length);
  const { train: trainSide, validation } = bySource
    ? splitBySource(dataset.candidates, options.holdoutSources!, seed)
    : splitByInstance(dataset.candidates, {
        seed,
        validationFraction: options.validationFraction ?? TRAIN_DEFAULTS.validationFraction,
        holdoutRepos: options.holdoutRepos,
      });
  if (trainSide.length === 0) {
    throw wnwError('WNW_ERR_INPUT_INVALID', 'the split left no candidates to train on', {
      details: { field: bySource ? 'holdout_sources' : options.holdoutRepos?.length ? 'holdout_repos' : 'validation_fraction' },
    });
  }
  if (bySource && validation.length === 0) {
    throw wnwError('WNW_ERR_INPUT_INVALID', `no candidate comes from ${options.holdoutSources!.join(', ')}`, {
      details: { field: 'holdout_sources' },
    });
  }
  log(
    `data: ${dataset.candidates.length} labelled candidates (${trainSide.length} train, ${validation.length} validation); dropped ${JSON.stringify(dataset.dropped)}; ${dataset.issues.length} input issue(s) skipped`,
  );

  const fitOptions: FitSideOptions = {
    seed,
    folds,
    maxEpochs: options.maxEpochs ?? TRAIN_DEFAULTS.maxEpochs,
    budgetTokens,
    vocabSize: options.vocabSize ?? TRAIN_DEFAULTS.vocabSize,
    bigramBuckets: options.bigramBuckets ?? TRAIN_DEFAULTS.bigramBuckets,
    dims: options.dims ?? TRAIN_DEFAULTS.dims,
    hidden: options.hidden ?? TRAIN_DEFAULTS.hidden,
    ...(options.learningRate ? { learningRate: options.learningRate } : {}),
    priors: options.priors ?? true,
    signal: options.signal,
    onProgress: options.onProgress,
    log,
  };
  await mkdir(outDir, { recursive: true });
  const fitted = await fitSide(trainSide, outDir, fitOptions);
  const { space, shape, params, calibration, epochs } = fitted;

  const model = exportValueModel({
    params,
    space,
    calibration,
    docString: `winnower value model, seed ${seed}, fold 0 of ${folds} over ${trainSide.length} training candidates`,
  });
  await writeFile(join(outDir, 'model.onnx'), model);

  // Validation through the real serving path: the exported folder, loaded by the onnx scorer.
  let tables: ScopeTable[] = [];
  let exportMaxDiff: number | null = null;
  const splitName = bySource
    ? `held out ${options.holdoutSources!.join(',')}`
    : options.holdoutRepos?.length
      ? `held-out repositories ${options.holdoutRepos.join(',')}`
      : 'held-out instances';
  const probabilistic = (baseline: boolean) => [TRAINED, ...(baseline ? [UNTRAINED] : [])];
  // With trajectories in the data, each strategy is also shown with its fixed trajectory priors: the check on the fitted weights.
  const withTrajectories = dataset.candidates.some((c) => c.trajectory.messages.length > 0);
  const selectorsFor = (baseline: boolean) => [
    ...TRIVIAL_SELECTORS,
    ...(baseline ? [UNTRAINED] : []),
    TRAINED,
    LEARNED,
    ROBUST,
    ...(withTrajectories ? [LEARNED_FIXED, ROBUST_FIXED] : []),
  ];
  // The card is written before validation too: the onnx scorer reads config.json.
  const card = {
    outDir,
    space,
    shape,
    budgetTokens,
    padTokenId: PAD_ID,
    seed,
    epochs,
    folds,
    calibration,
    selector: fitted.selector,
    sources: dataSources(dataset.candidates),
    trainCandidates: trainSide.length,
    validationCandidates: validation.length,
    command: options.command ?? '',
    options,
  };
  await writeFile(join(outDir, SELECTOR_FILE), `${JSON.stringify(fitted.selector, null, 2)}\n`);
  await writeModelCard({ ...card, tables, verdicts: [], seconds: 0 });
  if (validation.length > 0) {
    const validationBags = await fitted.bags(validation);
    const tsRaw = new Map(validation.map((c, i) => [c, calibration.a * predictLogit(params, validationBags[i]!) + calibration.b]));
    const evaluated = await evaluateValidation(validation, outDir, options.baselineModel, fitted.selector, budgetTokens, options);
    exportMaxDiff = Math.max(
      ...validation.map((c) => {
        const onnx = evaluated.raw.get(c);
        return onnx === undefined ? 0 : Math.abs(onnx - tsRaw.get(c)!);
      }),
    );
    tables = evaluateAll(evaluated.pools, {
      selectors: selectorsFor(evaluated.hasBaseline),
      probabilistic: probabilistic(evaluated.hasBaseline),
      bootstrap: options.bootstrap,
      seed,
    });
  }

  // The source-held-out check: the split itself when it is by source, else leave-one-source-out.
  const verdicts: SplitVerdict[] = [];
  if (tables.length) verdicts.push(verdict(splitName, tables[0]!, bySource));
  let sourceTable = bySource ? tables[0] : undefined;
  // Whether the source-held-out check validated on any candidate with a trajectory (else it says nothing about trajectory weights).
  let heldOutWithTrajectories = bySource && validation.some((c) => c.trajectory.messages.length > 0);
  if (!bySource && (options.sourceCheck ?? 'loso') === 'loso') {
    const families = rotatingSources(dataset.candidates);
    log(`leave-one-source-out over ${families.length} source famil${families.length === 1 ? 'y' : 'ies'}: ${families.join(', ')}`);
    heldOutWithTrajectories = dataset.candidates.some(
      (c) => c.trajectory.messages.length > 0 && matchesSource(c.trajectory.source, families),
    );
    const heldOut = await evaluateHeldOutSources(
      dataset.candidates,
      families.map((f) => [f]),
      fitOptions,
    );
    const sourceTables = heldOutTables(heldOut, {
      selectors: selectorsFor(false),
      probabilistic: probabilistic(false),
      bootstrap: options.bootstrap,
      seed,
    });
    if (sourceTables.length) verdicts.push(verdict(sourceTables[0]!.scope.replace(/: all$/, ''), sourceTables[0]!, true));
    sourceTable = sourceTables[0];
    tables = [...tables, ...sourceTables];
  }
  const sourceVerdict = verdicts.find((v) => v.source_held_out);
  const trajectory = fitted.selector.trajectory
    ? checkTrajectoryWeights(fitted.selector.trajectory, sourceTable, heldOutWithTrajectories)
    : undefined;
  if (trajectory) log(`trajectory weights: ${trajectory.use ? 'used' : 'not used'} (${trajectory.reason})`);
  const selector: LearnedSelector = {
    ...fitted.selector,
    ...(trajectory ? { trajectory } : {}),
    default_strategy: sourceVerdict?.learned_beats_trivial ? 'learned' : 'robust',
    default_reason: !sourceVerdict
      ? 'no source-held-out evaluation ran, so the learned selector is unchecked on agents it never saw: robust is the default'
      : sourceVerdict.learned_beats_trivial
        ? `the learned selector beat the best trivial selector (${sourceVerdict.best_trivial}) on ${sourceVerdict.split}: learned is the default`
        : `the learned selector did not beat the best trivial selector (${sourceVerdict.best_trivial}) on ${sourceVerdict.split}: robust is the default`,
  };
  log(`default strategy: ${selector.default_strategy} (${selector.default_reason})`);
  await writeFile(join(outDir, SELECTOR_FILE), `${JSON.stringify(selector, null, 2)}\n`);
  const seconds = (Date.now() - started) / 1000;
  await writeModelCard({ ...card, selector, tables, verdicts, seconds });
  return {
    outDir,
    trainCandidates: trainSide.length,
    validationCandidates: validation.length,
    epochs,
    calibration,
    selector,
    tables,
    table: formatTables(tables),
    seconds,
    exportMaxDiff,
    verdicts,
  };
}

/**
 * The fitted trajectory weights, kept in use only when the source-held-out table shows robust and
 * learned with them at least as good (selected@1) as with their fixed priors; without a
 * source-held-out check on candidates with trajectories they stay in use, and the reason says they are unchecked.
 */
function checkTrajectoryWeights(weights: TrajectoryWeights, table: ScopeTable | undefined, checked: boolean): TrajectoryWeights {
  const fitted = `fitted on ${weights.rows} labelled candidates with trajectories in ${weights.pools} pools with both outcomes`;
  if (!table || !checked)
    return { ...weights, use: true, reason: `${fitted}; unchecked: no source-held-out evaluation held out a candidate with a trajectory` };
  const selected = (name: string) => table.rows.find((r) => r.selector === name)?.selected_at_1.value ?? null;
  const pct = (x: number | null) => (x === null ? 'n/a' : `${(100 * x).toFixed(1)}%`);
  const pairs = [
    [ROBUST, ROBUST_FIXED],
    [LEARNED, LEARNED_FIXED],
  ].map(([withWeights, fixed]) => ({ name: withWeights!, fitted: selected(withWeights!), fixed: selected(fixed!) }));
  const worse = pairs.filter((p) => p.fitted !== null && p.fixed !== null && p.fitted < p.fixed - 1e-9);
  const figures = pairs.map((p) => `${p.name} ${pct(p.fitted)} vs ${pct(p.fixed)} fixed`).join(', ');
  return worse.length
    ? { ...weights, use: false, reason: `${fitted}; not used: on ${table.scope} they did worse than the fixed priors (${figures})` }
    : { ...weights, use: true, reason: `${fitted}; used: on ${table.scope} at least as good as the fixed priors (${figures})` };
}

/** Whether the learned selector and the robust default reach the best trivial selector on one split's "all" table. */
function verdict(split: string, table: ScopeTable, sourceHeldOut: boolean): SplitVerdict {
  const selected = (name: string) => table.rows.find((r) => r.selector === name)?.selected_at_1.value ?? null;
  const best = bestTrivial(table);
  return {
    split,
    source_held_out: sourceHeldOut,
    pools: table.pools,
    best_trivial: best ? best.selector : 'none',
    best_trivial_selected: best?.selected_at_1.value ?? null,
    learned_selected: selected(LEARNED),
    robust_selected: selected(ROBUST),
    learned_beats_trivial: beatsTrivial(table, LEARNED),
    robust_reaches_trivial: beatsTrivial(table, ROBUST, false),
  };
}

/** Leave-one-source-out tables: all folds' pools together (all, mixed-label), then each fold. */
function heldOutTables(folds: HeldOutFold[], options: Parameters<typeof evaluateScope>[2]): ScopeTable[] {
  if (folds.length === 0) return [];
  const pooled = folds.flatMap((fold) => fold.pools);
  const name = `leave-one-source-out (${folds.length} folds; a pool counts once per fold that holds it out)`;
  return [
    ...evaluateAll(pooled, options, `${name}: `).slice(0, 2),
    ...folds.map((fold) => evaluateScope(`held out ${fold.holdout.join(',')}: all`, fold.pools, options)),
  ];
}

/** The rollout files' labelled candidates and, with fromStore, the job store's verified ones. */
async function loadTrainingRows(
  options: TrainOptions,
): Promise<{ candidates: LabelledCandidate[]; dropped: Record<string, number>; issues: unknown[] }> {
  const fromFiles = options.rollouts.length
    ? await loadDataset({
        rollouts: options.rollouts,
        sourceFrom: options.sourceFrom,
        labels: options.labels,
        tasks: options.tasks,
        permissiveOnly: options.permissiveOnly,
        onInvalid: options.onInvalid,
        signal: options.signal,
      })
    : { candidates: [], dropped: {}, issues: [] };
  if (!options.fromStore) return fromFiles;
  if (options.permissiveOnly)
    throw wnwError('WNW_ERR_INPUT_INVALID', '--permissive-only: rows from the job store carry no licence', {
      details: { field: 'permissive_only' },
    });
  const stored = labelledFromStore(options.fromStore);
  if (stored.length + fromFiles.candidates.length === 0) {
    throw wnwError('WNW_ERR_INPUT_INVALID', `no verified candidates in the job store at ${options.fromStore} (jobs need verification on)`, {
      details: { field: 'from_store' },
    });
  }
  return { ...fromFiles, candidates: [...fromFiles.candidates, ...stored] };
}

function dataSources(candidates: LabelledCandidate[]): DataSource[] {
  return [...groupBy(candidates, (c) => `${c.origin}\0${c.license}\0${c.permissive}`).values()]
    .map((members) => ({
      origin: members[0]!.origin,
      license: members[0]!.license,
      permissive: members[0]!.permissive,
      candidates: members.length,
      instances: new Set(members.map((c) => c.trajectory.instance_id)).size,
      runs: [...new Set(members.map((c) => c.trajectory.source))].sort(),
    }))
    .sort((a, b) => (a.origin < b.origin ? -1 : a.origin > b.origin ? 1 : b.candidates - a.candidates));
}

async function evaluateValidation(
  validation: LabelledCandidate[],
  outDir: string,
  baselineModel: string | null | undefined,
  selector: LearnedSelector,
  budgetTokens: number,
  options: TrainOptions,
): Promise<{ pools: EvalPool[]; raw: Map<LabelledCandidate, number>; hasBaseline: boolean }> {
  const scorer = await createOnnxScorer({ modelDir: outDir, name: 'trained' });
  const baseline =
    baselineModel && existsSync(join(baselineModel, 'model.onnx'))
      ? await createOnnxScorer({ modelDir: baselineModel, name: 'untrained' })
      : undefined;
  const raw = new Map<LabelledCandidate, number>();
  const pools: EvalPool[] = [];
  try {
    const groups = [...groupBy(validation, (c) => c.pool).values()];
    let done = 0;
    for (const members of groups) {
      options.signal?.throwIfAborted();
      const task = members[0]!.task;
      const trajectories = members.map((c) => c.trajectory);
      const scores = await scoreCandidates(scorer, task, trajectories, { budgetTokens, signal: options.signal });
      const untrained = baseline
        ? await scoreCandidates(baseline, task, trajectories, { budgetTokens, signal: options.signal })
        : undefined;
      members.forEach((c, i) => {
        const score = scores[i]!.score;
        if (score) raw.set(c, score.raw);
      });
      pools.push(
        evalPool(
          members,
          scores.map((s) => s.score ?? undefined),
          selector,
          untrained ? { [UNTRAINED]: untrained.map((s) => s.score?.value ?? null) } : {},
        ),
      );
      options.onProgress?.('validate', ++done, groups.length);
    }
  } finally {
    await scorer.close();
    await baseline?.close();
  }
  return { pools, raw, hasBaseline: baseline !== undefined };
}
