/**
 * Fitting on one training side, shared by the shipped split and every held-out-source fold: learn
 * the tokenizer (written to `dir`), encode, cross-fit the value model (its out-of-fold logits
 * choose the epoch count, calibrate it and train the selector), and return fold 0's model at that
 * epoch with its calibration and the fitted selector.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { wnwError } from '../errors.js';
import { rocAuc } from '../metrics/ranking.js';
import { computeSignals, type Candidate, type LearnedSelector } from '../select/index.js';
import { prepare } from '../select/prepare.js';
import { loadTokenizer, type Tokenizer } from '../serialize/tokenizer.js';
import { toolCallParameters } from '../serialize/trajectory-steps.js';
import { Cut, type Score } from '../types/index.js';
import { groupBy } from '../util/group-by.js';
import { sigmoid } from '../util/logistic.js';
import { fitPlatt } from './calibrate.js';
import type { LabelledCandidate } from './dataset.js';
import { encodeCandidates } from './encode.js';
import { embeddingRows, featureBag, type FeatureBag, type FeatureSpace } from './features.js';
import { fitSelector, type SelectorPool } from './fit-selector.js';
import type { Calibration } from './onnx-export.js';
import { foldOf } from './split.js';
import { fitPriors } from '../select/priors.js';
import { fitTrajectoryWeights } from './fit-trajectory.js';
import {
  DEFAULT_FIT,
  fitValueModel,
  initParams,
  predictLogit,
  type TrainExample,
  type ValueModelParams,
  type ValueModelShape,
} from './value-model.js';
import { tokenizerJson, WordCounter } from './vocabulary.js';

export interface FitSideOptions {
  seed: number;
  folds: number;
  maxEpochs: number;
  budgetTokens: number;
  vocabSize: number;
  bigramBuckets: number;
  dims: number;
  hidden: number;
  learningRate?: number;
  /** Learn own-history priors per configuration into the selector (default true). */
  priors?: boolean;
  signal?: AbortSignal;
  onProgress?: (stage: string, done: number, total: number) => void;
  log: (line: string) => void;
}

export interface FittedSide {
  tokenizer: Tokenizer;
  space: FeatureSpace;
  shape: ValueModelShape;
  params: ValueModelParams;
  calibration: Calibration;
  selector: LearnedSelector;
  epochs: number;
  /** Feature bags of `candidates` under this side's tokenizer (the training side's are cached). */
  bags(candidates: LabelledCandidate[]): Promise<FeatureBag[]>;
  /** Calibrated value and raw logit of one bag, as the exported model computes them. */
  value(bag: FeatureBag): { value: number; raw: number };
}

function copyParams(params: ValueModelParams): ValueModelParams {
  return {
    ...params,
    embedding: params.embedding.slice(),
    w1: params.w1.slice(),
    b1: params.b1.slice(),
    w2: params.w2.slice(),
    skip: params.skip.slice(),
  };
}

/**
 * The text the tokenizer's words are counted from: everything the serializer can put in front of
 * the model. Actions given as tool calls (name and argument values, as judge-v1 renders them) and
 * reasoning count too; without them an agent's commands would be [UNK] at serving time.
 */
export function documentText(candidate: LabelledCandidate): string {
  const parts = [candidate.task.problem_statement, candidate.trajectory.patch];
  for (const message of candidate.trajectory.messages) {
    parts.push(message.content);
    if (message.reasoning) parts.push(message.reasoning);
    for (const call of message.tool_calls ?? []) {
      const parameters = toolCallParameters(call);
      parts.push(call.function.name, ...(parameters ? parameters.flat() : [call.function.arguments]));
    }
  }
  return parts.join('\n');
}

/** A Score for a value computed outside a scorer, so the selector's signals are computed as at serving time. */
export function offlineScore(candidate: LabelledCandidate, value: number, raw: number): Score {
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

const formatWeights = (weights: Record<string, number>) =>
  Object.entries(weights)
    .map(([name, w]) => `${name} ${w.toFixed(2)}`)
    .join(', ');

/** Signals and labels of each pool's usable candidates, given a value per candidate. */
function selectorPools(
  candidates: LabelledCandidate[],
  valueByCandidate: Map<LabelledCandidate, { value: number; raw: number }>,
): SelectorPool[] {
  return [...groupBy(candidates, (c) => c.pool).values()].map((members) => {
    const instance = prepare(
      members.map(
        (c): Candidate => ({
          trajectory: c.trajectory,
          score: offlineScore(c, valueByCandidate.get(c)!.value, valueByCandidate.get(c)!.raw),
        }),
      ),
      members[0]!.trajectory.instance_id,
    );
    const signals = computeSignals(instance, members[0]!.task);
    const usable = instance.candidates.map((p, i) => ({ p, i })).filter(({ p }) => p.usable);
    return {
      signals: usable.map(({ i }) => signals[i]!),
      labels: usable.map(({ i }) => members[i]!.resolved),
      trajectory: usable.map(({ i }) => members[i]!.trajectory.messages.length > 0),
    };
  });
}

export async function fitSide(trainSide: LabelledCandidate[], dir: string, options: FitSideOptions): Promise<FittedSide> {
  const { seed, folds, maxEpochs, budgetTokens, log } = options;
  // Tokenizer from the training side only: validation words it never saw are [UNK], as at serving time.
  const counter = new WordCounter();
  for (const candidate of trainSide) counter.add(documentText(candidate));
  const words = counter.top({ maxSize: options.vocabSize, minDocuments: 2 });
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'tokenizer.json'), tokenizerJson(words));
  const tokenizer = await loadTokenizer(dir);
  const space: FeatureSpace = { vocabSize: words.length + 3, bigramBuckets: options.bigramBuckets };
  const shape = { rows: embeddingRows(space), dims: options.dims, hidden: options.hidden };

  const cache = new Map<LabelledCandidate, FeatureBag>();
  const bags = async (candidates: LabelledCandidate[]): Promise<FeatureBag[]> => {
    const missing = candidates.filter((c) => !cache.has(c));
    const ids = await encodeCandidates(missing, {
      tokenizer,
      budgetTokens,
      signal: options.signal,
      onProgress: (done, total) => options.onProgress?.('encode', done, total),
    });
    missing.forEach((c, i) => cache.set(c, featureBag(ids[i]!, space)));
    return candidates.map((c) => cache.get(c)!);
  };
  await bags(trainSide);
  const bagOf = (c: LabelledCandidate) => cache.get(c)!;
  const example = (c: LabelledCandidate): TrainExample => ({ bag: bagOf(c), label: c.resolved, group: c.pool });

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
      if (k === 0) throw tooFewInstances(trainSide, folds);
      continue;
    }
    const params = initParams(
      shape,
      seed + k + 1,
      fit.map((c) => bagOf(c).logLength),
    );
    fitValueModel(params, fit.map(example), {
      ...fitOptions,
      seed: seed + k,
      onEpoch: (epoch) => {
        const logits = held.map((c) => predictLogit(params, bagOf(c)));
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
    const fitted = fitPlatt(
      logits,
      scored.map((c) => c.resolved),
    );
    scored.forEach((c, i) => {
      const raw = fitted.a * logits[i]! + fitted.b;
      oofValue.set(c, { value: sigmoid(raw), raw });
    });
    return fitted;
  });
  const calibration = calibrations[0]!;
  const oofCandidates = trainSide.filter((c) => oofValue.has(c));
  const pools = selectorPools(oofCandidates, oofValue);
  const fittedSelector = fitSelector(pools);
  const trajectory = fitTrajectoryWeights(pools, fittedSelector);
  const selector: LearnedSelector = {
    ...fittedSelector,
    ...(options.priors === false ? {} : { priors: fitPriors(trainSide) }),
    ...(trajectory ? { trajectory } : {}),
  };
  const poolAuc = rocAuc(
    pools.flatMap((pool) => pool.signals.map((signal, i) => ({ value: signal.value_rel, resolved: pool.labels[i]! }))),
  );
  log(
    `out-of-fold AUC ${rocAuc(oofCandidates.map((c) => ({ value: oofValue.get(c)!.value, resolved: c.resolved })))?.toFixed(3)}, of value_rel within pools ${poolAuc?.toFixed(3)}`,
  );
  log(
    `calibration: a ${calibration.a.toFixed(3)}, b ${calibration.b.toFixed(3)}; selector weights ${selector.signals
      .filter((s) => s.learned)
      .map((s) => `${s.name} ${s.weight.toFixed(2)}`)
      .join(', ')}`,
  );
  log(
    trajectory
      ? `trajectory weights from ${trajectory.rows} candidates in ${trajectory.pools} mixed pools: robust ${formatWeights(trajectory.robust)}; learned ${formatWeights(trajectory.learned)}`
      : 'trajectory weights: no mixed pool with trajectories, the fixed priors stay',
  );
  const params = snapshots[epochs - 1]!;
  const value = (bag: FeatureBag) => {
    const raw = calibration.a * predictLogit(params, bag) + calibration.b;
    return { value: sigmoid(raw), raw };
  };
  return { tokenizer, space, shape, params, calibration, selector, epochs, bags, value };
}

/**
 * Cross-fitting holds out whole instances: each fold needs at least one, and the folds are drawn
 * by a hash of the instance id. Says what was found (a job of --from-store is one pool) and what to do.
 */
function tooFewInstances(trainSide: LabelledCandidate[], folds: number): Error {
  const instances = new Set(trainSide.map((c) => c.trajectory.instance_id)).size;
  const pools = new Set(trainSide.map((c) => c.pool)).size;
  const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
  return wnwError(
    'WNW_ERR_INPUT_INVALID',
    `too few training instances for ${folds} folds: the training side has ${plural(trainSide.length, 'labelled candidate')} ` +
      `on ${plural(instances, 'instance')} (${plural(pools, 'pool')}: a labelled job of --from-store is one), and each fold holds out ` +
      `whole instances, so at least ${folds} instances are needed (more, since folds are drawn by a hash of the instance id); ` +
      'add labelled runs or jobs, or lower --folds',
    { details: { field: 'folds', folds, instances, pools, candidates: trainSide.length } },
  );
}
