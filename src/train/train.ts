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
import { rocAuc } from '../rerank/metrics.js';
import { scoreCandidates } from '../rerank/score-candidates.js';
import { createOnnxScorer } from '../rerank/scorers/onnx.js';
import { computeSignals, SELECTOR_FILE, type Candidate, type LearnedSelector } from '../rerank/select/index.js';
import { rankLearned } from '../rerank/select/learned.js';
import { prepare } from '../rerank/select/prepare.js';
import { loadTokenizer } from '../rerank/tokenizer.js';
import { Cut, type Score } from '../types/index.js';
import { fitPlatt } from './calibrate.js';
import { loadDataset, type LabelledCandidate } from './dataset.js';
import { encodeCandidates } from './encode.js';
import { evaluateAll, formatTables, TRIVIAL_SELECTORS, type EvalPool, type ScopeTable } from './evaluate.js';
import { embeddingRows, featureBag, type FeatureBag, type FeatureSpace } from './features.js';
import { fitSelector, type SelectorPool } from './fit-selector.js';
import { writeModelCard, type DataSource } from './model-card.js';
import { exportValueModel, type Calibration } from './onnx-export.js';
import { foldOf, splitByInstance } from './split.js';
import { DEFAULT_FIT, fitValueModel, initParams, predictLogit, type TrainExample, type ValueModelParams } from './value-model.js';
import { groupBy } from '../util/group-by.js';
import { tokenizerJson, WordCounter, PAD_ID } from './vocabulary.js';
import { sigmoid } from '../util/logistic.js';

/**
 * Defaults of every tunable, shared by the CLI and the API. 16,384 bigram buckets keep the shipped
 * model near 3 MB; 65,536 (6.2 MB) validated no better on the permissive rows.
 */
export const TRAIN_DEFAULTS = {
  seed: 1,
  validationFraction: 0.2,
  vocabSize: 16_000,
  bigramBuckets: 16_384,
  dims: 16,
  hidden: 16,
  maxEpochs: 8,
  learningRate: DEFAULT_FIT.learningRate,
  folds: 4,
  budgetTokens: 8192,
  bootstrap: 1000,
} as const;

export interface TrainOptions {
  rollouts: string[];
  /** How plain rollout paths name their source, as `rerank --source-from` (default: `file` when they are several files). */
  sourceFrom?: 'record' | 'file';
  labels?: string[];
  tasks?: string[];
  out: string;
  seed?: number;
  validationFraction?: number;
  holdoutRepos?: string[];
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
}

const TRAINED = 'trained model';
const UNTRAINED = 'untrained model';
const LEARNED = 'learned selector';


function copyParams(params: ValueModelParams): ValueModelParams {
  return { ...params, embedding: params.embedding.slice(), w1: params.w1.slice(), b1: params.b1.slice(), w2: params.w2.slice(), skip: params.skip.slice() };
}

function documentText(candidate: LabelledCandidate): string {
  return [candidate.task.problem_statement, candidate.trajectory.patch, ...candidate.trajectory.messages.map((m) => m.content)].join('\n');
}

/** A Score for an out-of-fold prediction, so the selector's signals are computed as at serving time. */
function outOfFoldScore(candidate: LabelledCandidate, value: number, raw: number): Score {
  return {
    trajectory_id: candidate.trajectory.id,
    instance_id: candidate.trajectory.instance_id,
    value,
    raw,
    backend: 'onnx',
    model: 'out-of-fold',
    template: 'out-of-fold',
    input_tokens: 0,
    truncated: false,
    cut: Cut.parse({}),
    cached: false,
  };
}

/** Signals and labels of each pool's usable candidates, given a value per candidate. */
function selectorPools(candidates: LabelledCandidate[], valueOf: Map<LabelledCandidate, { value: number; raw: number }>): SelectorPool[] {
  return [...groupBy(candidates, (c) => c.pool).values()].map((members) => {
    const instance = prepare(
      members.map((c): Candidate => ({ trajectory: c.trajectory, score: outOfFoldScore(c, valueOf.get(c)!.value, valueOf.get(c)!.raw) })),
      members[0]!.trajectory.instance_id,
    );
    const signals = computeSignals(instance, members[0]!.task);
    const usable = instance.candidates.map((p, i) => ({ p, i })).filter(({ p }) => p.usable);
    return { signals: usable.map(({ i }) => signals[i]!), labels: usable.map(({ i }) => members[i]!.resolved) };
  });
}

export async function train(options: TrainOptions): Promise<TrainResult> {
  const started = Date.now();
  const seed = options.seed ?? TRAIN_DEFAULTS.seed;
  const log = options.onLog ?? (() => {});
  const outDir = resolve(options.out);
  const folds = options.folds ?? TRAIN_DEFAULTS.folds;
  const maxEpochs = options.maxEpochs ?? TRAIN_DEFAULTS.maxEpochs;
  const budgetTokens = options.budgetTokens ?? TRAIN_DEFAULTS.budgetTokens;
  if (folds < 2) throw wnwError('WNW_ERR_INPUT_INVALID', 'folds must be at least 2', { details: { field: 'folds' } });

  const dataset = await loadDataset({ rollouts: options.rollouts, sourceFrom: options.sourceFrom, labels: options.labels, tasks: options.tasks, permissiveOnly: options.permissiveOnly, onInvalid: options.onInvalid, signal: options.signal });
  const { train: trainSide, validation } = splitByInstance(dataset.candidates, { seed, validationFraction: options.validationFraction ?? TRAIN_DEFAULTS.validationFraction, holdoutRepos: options.holdoutRepos });
  if (trainSide.length === 0) throw wnwError('WNW_ERR_INPUT_INVALID', 'the split left no candidates to train on', { details: { field: options.holdoutRepos?.length ? 'holdout_repos' : 'validation_fraction' } });
  log(`data: ${dataset.candidates.length} labelled candidates (${trainSide.length} train, ${validation.length} validation); dropped ${JSON.stringify(dataset.dropped)}; ${dataset.issues.length} input issue(s) skipped`);

  // Tokenizer from the training side only: validation words it never saw are [UNK], as at serving time.
  const counter = new WordCounter();
  for (const candidate of trainSide) counter.add(documentText(candidate));
  const words = counter.top({ maxSize: options.vocabSize ?? TRAIN_DEFAULTS.vocabSize, minDocuments: 2 });
  await mkdir(outDir, { recursive: true });
  await writeFile(join(outDir, 'tokenizer.json'), tokenizerJson(words));
  const tokenizer = await loadTokenizer(outDir);
  const space: FeatureSpace = { vocabSize: words.length + 3, bigramBuckets: options.bigramBuckets ?? TRAIN_DEFAULTS.bigramBuckets };
  const shape = { rows: embeddingRows(space), dims: options.dims ?? TRAIN_DEFAULTS.dims, hidden: options.hidden ?? TRAIN_DEFAULTS.hidden };

  const everything = [...trainSide, ...validation];
  const ids = await encodeCandidates(everything, { tokenizer, budgetTokens, signal: options.signal, onProgress: (done, total) => options.onProgress?.('encode', done, total) });
  const bags = new Map<LabelledCandidate, FeatureBag>(everything.map((c, i) => [c, featureBag(ids[i]!, space)]));
  const example = (c: LabelledCandidate): TrainExample => ({ bag: bags.get(c)!, label: c.resolved, group: c.pool });

  // Cross-fitting. Out-of-fold logits pick the epoch count and train the selector. The shipped
  // model is fold 0's at that epoch, calibrated on fold 0's held-out part: a model retrained on
  // everything has larger logits than the ones the calibration was fitted on, and is miscalibrated.
  const foldOfCandidate = new Map(trainSide.map((c) => [c, foldOf(c.trajectory.instance_id, folds, seed)]));
  const oofByEpoch = new Map<LabelledCandidate, number[]>();
  const aucByEpoch: number[][] = Array.from({ length: maxEpochs }, () => []);
  const snapshots: ValueModelParams[] = [];
  const fitOptions = { ...DEFAULT_FIT, epochs: maxEpochs, ...(options.learningRate ? { learningRate: options.learningRate } : {}) };
  const heldOf: LabelledCandidate[][] = [];
  for (let k = 0; k < folds; k++) {
    const fit = trainSide.filter((c) => foldOfCandidate.get(c) !== k);
    const held = trainSide.filter((c) => foldOfCandidate.get(c) === k);
    heldOf.push(held);
    if (fit.length === 0 || held.length === 0) {
      if (k === 0) throw wnwError('WNW_ERR_INPUT_INVALID', `too few training instances for ${folds} folds`, { details: { field: 'folds' } });
      continue;
    }
    const params = initParams(shape, seed + k + 1, fit.map((c) => bags.get(c)!.logLength));
    fitValueModel(params, fit.map(example), {
      ...fitOptions,
      seed: seed + k,
      onEpoch: (epoch) => {
        const logits = held.map((c) => predictLogit(params, bags.get(c)!));
        held.forEach((c, i) => {
          const history = oofByEpoch.get(c);
          if (history) history.push(logits[i]!);
          else oofByEpoch.set(c, [logits[i]!]);
        });
        const auc = rocAuc(held.map((c, i) => ({ value: logits[i]!, resolved: c.resolved })));
        if (auc !== null) aucByEpoch[epoch - 1]!.push(auc);
        if (k === 0) snapshots.push(copyParams(params));
        options.onProgress?.('fit folds', k * maxEpochs + epoch, folds * maxEpochs);
      },
    });
    options.signal?.throwIfAborted();
  }
  const meanAuc = aucByEpoch.map((list) => (list.length ? list.reduce((a, b) => a + b, 0) / list.length : -1));
  const epochs = meanAuc.indexOf(Math.max(...meanAuc)) + 1 || maxEpochs;
  log(`cross-fit (${folds} folds): held-out AUC by epoch ${meanAuc.map((a) => a.toFixed(3)).join(' ')}; using ${epochs} epoch(s)`);

  // Each fold's held-out logits calibrated on themselves feed the selector; fold 0's calibration ships.
  const oofValue = new Map<LabelledCandidate, { value: number; raw: number }>();
  const calibrations = heldOf.map((held) => {
    const scored = held.filter((c) => oofByEpoch.get(c)?.[epochs - 1] !== undefined);
    const logits = scored.map((c) => oofByEpoch.get(c)![epochs - 1]!);
    const fitted = fitPlatt(logits, scored.map((c) => c.resolved));
    scored.forEach((c, i) => {
      const raw = fitted.a * logits[i]! + fitted.b;
      oofValue.set(c, { value: sigmoid(raw), raw });
    });
    return fitted;
  });
  const calibration = calibrations[0]!;
  const oofCandidates = trainSide.filter((c) => oofValue.has(c));
  const pools = selectorPools(oofCandidates, oofValue);
  const selector = fitSelector(pools);
  const poolAuc = rocAuc(pools.flatMap((pool) => pool.signals.map((signal, i) => ({ value: signal.value_rel, resolved: pool.labels[i]! }))));
  log(`out-of-fold AUC ${rocAuc(oofCandidates.map((c) => ({ value: oofValue.get(c)!.value, resolved: c.resolved })))?.toFixed(3)}, of value_rel within pools ${poolAuc?.toFixed(3)}`);
  log(`calibration: a ${calibration.a.toFixed(3)}, b ${calibration.b.toFixed(3)}; selector weights ${selector.signals.filter((s) => s.learned).map((s) => `${s.name} ${s.weight.toFixed(2)}`).join(', ')}`);
  const params = snapshots[epochs - 1]!;

  const model = exportValueModel({ params, space, calibration, docString: `winnower value model, seed ${seed}, fold 0 of ${folds} over ${trainSide.length} training candidates` });
  await writeFile(join(outDir, 'model.onnx'), model);
  await writeFile(join(outDir, SELECTOR_FILE), `${JSON.stringify(selector, null, 2)}\n`);

  // Validation through the real serving path: the exported folder, loaded by the onnx scorer.
  let tables: ScopeTable[] = [];
  let exportMaxDiff: number | null = null;
  // The card is written before validation too: the onnx scorer reads config.json.
  const card = { outDir, space, shape, budgetTokens, padTokenId: PAD_ID, seed, epochs, folds, calibration, selector, sources: dataSources(dataset.candidates), trainCandidates: trainSide.length, validationCandidates: validation.length, command: options.command ?? '', options };
  await writeModelCard({ ...card, tables, seconds: 0 });
  if (validation.length > 0) {
    const evaluated = await evaluateValidation(validation, outDir, options.baselineModel, selector, budgetTokens, options);
    exportMaxDiff = Math.max(
      ...validation.map((c) => {
        const onnx = evaluated.raw.get(c);
        return onnx === undefined ? 0 : Math.abs(onnx - (calibration.a * predictLogit(params, bags.get(c)!) + calibration.b));
      }),
    );
    const selectors = [...TRIVIAL_SELECTORS, ...(evaluated.hasBaseline ? [UNTRAINED] : []), TRAINED, LEARNED];
    tables = evaluateAll(evaluated.pools, { selectors, probabilistic: [TRAINED, ...(evaluated.hasBaseline ? [UNTRAINED] : [])], bootstrap: options.bootstrap, seed });
  }
  const seconds = (Date.now() - started) / 1000;
  await writeModelCard({ ...card, tables, seconds });
  return { outDir, trainCandidates: trainSide.length, validationCandidates: validation.length, epochs, calibration, selector, tables, table: formatTables(tables), seconds, exportMaxDiff };
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
  const baseline = baselineModel && existsSync(join(baselineModel, 'model.onnx')) ? await createOnnxScorer({ modelDir: baselineModel, name: 'untrained' }) : undefined;
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
      const untrained = baseline ? await scoreCandidates(baseline, task, trajectories, { budgetTokens, signal: options.signal }) : undefined;
      members.forEach((c, i) => {
        const score = scores[i]!.score;
        if (score) raw.set(c, score.raw);
      });
      const candidates: Candidate[] = members.map((c, i) => ({ trajectory: c.trajectory, score: scores[i]!.score }));
      const prepared = prepare(candidates, members[0]!.trajectory.instance_id);
      const learned = rankLearned(prepared, { selector, task });
      pools.push({
        pool: members[0]!.pool,
        benchmark: members[0]!.benchmark,
        candidates: prepared.candidates.map((p, i) => ({ id: p.id, resolved: members[i]!.resolved, usable: p.usable, changedLines: p.changedLines, clusterKey: p.normalized?.key ?? null })),
        values: {
          [TRAINED]: scores.map((s) => s.score?.value ?? null),
          ...(untrained ? { [UNTRAINED]: untrained.map((s) => s.score?.value ?? null) } : {}),
        },
        chosen: { [LEARNED]: learned.chosen },
      });
      options.onProgress?.('validate', ++done, groups.length);
    }
  } finally {
    await scorer.close();
    await baseline?.close();
  }
  return { pools, raw, hasBaseline: baseline !== undefined };
}
