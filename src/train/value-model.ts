/**
 * The value model: an embedding bag over token and bigram slots (`features.ts`), pooled, with
 * log-length beside it, into a small ReLU layer and one logit, plus a linear path from the pooled
 * input to the logit (so the model stays a usable linear model even when ReLU units die). Trained with a pointwise logistic
 * loss plus a within-instance pairwise ranking loss (resolved above unresolved of the same
 * instance), sparse Adam, L2 on every weight. Plain float64 arrays: the sizes that fit a shipped
 * default (tens of thousands of rows × 16) train in seconds on one core.
 */
import { groupBy } from '../util/group-by.js';
import { TRAIN_DEFAULTS } from './defaults.js';
import { prng } from '../util/prng.js';
import type { FeatureBag } from './features.js';
import { sigmoid } from '../util/logistic.js';

export interface ValueModelShape {
  /** Embedding rows (see `embeddingRows`). */
  rows: number;
  dims: number;
  hidden: number;
}

export interface ValueModelParams extends ValueModelShape {
  embedding: Float64Array; // rows × dims
  w1: Float64Array; // (dims + 1) × hidden, input-major
  b1: Float64Array; // hidden
  w2: Float64Array; // hidden
  /** Linear path: (dims + 1) → logit. */
  skip: Float64Array;
  b2: number;
  /** Standardisation of log-length: (x − mean) / std. */
  lengthMean: number;
  lengthStd: number;
}

export interface TrainExample {
  bag: FeatureBag;
  label: boolean;
  /** Examples with the same group are candidates of one instance (the ranking loss pairs them). */
  group: string;
}

export interface FitOptions {
  epochs: number;
  learningRate: number;
  /** L2 on every weight, per step. */
  l2: number;
  /** Weight of the pairwise ranking loss against the pointwise one. */
  rankWeight: number;
  /** Groups per optimiser step. */
  groupsPerStep: number;
  seed: number;
  /** Called after each epoch with the mean training loss. */
  onEpoch?: (epoch: number, loss: number) => void;
}

export const DEFAULT_FIT: Omit<FitOptions, 'seed'> = {
  epochs: 12,
  learningRate: TRAIN_DEFAULTS.learningRate,
  l2: 1e-5,
  rankWeight: 1,
  groupsPerStep: 4,
};

/** Fresh parameters: small seeded uniform weights. */
export function initParams(shape: ValueModelShape, seed: number, lengths: number[]): ValueModelParams {
  const random = prng(seed);
  const uniform = (scale: number) => (random() * 2 - 1) * scale;
  const embedding = new Float64Array(shape.rows * shape.dims).map(() => uniform(0.05));
  const inputs = shape.dims + 1;
  const w1 = new Float64Array(inputs * shape.hidden).map(() => uniform(Math.sqrt(6 / (inputs + shape.hidden))));
  const w2 = new Float64Array(shape.hidden).map(() => uniform(Math.sqrt(6 / (shape.hidden + 1))));
  const mean = lengths.length ? lengths.reduce((a, b) => a + b, 0) / lengths.length : 0;
  const variance = lengths.length ? lengths.reduce((a, b) => a + (b - mean) ** 2, 0) / lengths.length : 1;
  return {
    ...shape,
    embedding,
    w1,
    b1: new Float64Array(shape.hidden).fill(0.1),
    w2,
    skip: new Float64Array(inputs),
    b2: 0,
    lengthMean: mean,
    lengthStd: Math.sqrt(variance) || 1,
  };
}

interface Activations {
  input: Float64Array; // dims + 1
  hidden: Float64Array; // after ReLU
  logit: number;
}

function forward(params: ValueModelParams, bag: FeatureBag): Activations {
  const { dims, hidden: h, embedding, w1, b1, w2 } = params;
  const input = new Float64Array(dims + 1);
  for (let k = 0; k < bag.rows.length; k++) {
    const base = bag.rows[k]! * dims;
    const weight = bag.weights[k]!;
    for (let d = 0; d < dims; d++) input[d]! += weight * embedding[base + d]!;
  }
  input[dims] = (bag.logLength - params.lengthMean) / params.lengthStd;
  const hidden = new Float64Array(h);
  let logit = params.b2;
  for (let i = 0; i <= dims; i++) logit += input[i]! * params.skip[i]!;
  for (let j = 0; j < h; j++) {
    let sum = b1[j]!;
    for (let i = 0; i <= dims; i++) sum += input[i]! * w1[i * h + j]!;
    const activated = Math.max(sum, 0);
    hidden[j] = activated;
    logit += activated * w2[j]!;
  }
  return { input, hidden, logit };
}

/** The model's logit for one bag. */
export function predictLogit(params: ValueModelParams, bag: FeatureBag): number {
  return forward(params, bag).logit;
}

const softplus = (x: number) => (x > 30 ? x : Math.log1p(Math.exp(x)));

/** Adam state for one parameter array; `touched` rows only for the embedding (lazy, sparse). */
class Adam {
  readonly m: Float64Array;
  readonly v: Float64Array;
  constructor(size: number) {
    this.m = new Float64Array(size);
    this.v = new Float64Array(size);
  }
  step(param: Float64Array, grad: Float64Array, index: number, lr: number, t: number, l2: number): void {
    const g = grad[index]! + l2 * param[index]!;
    const m = (this.m[index] = 0.9 * this.m[index]! + 0.1 * g);
    const v = (this.v[index] = 0.999 * this.v[index]! + 0.001 * g * g);
    const mHat = m / (1 - 0.9 ** t);
    const vHat = v / (1 - 0.999 ** t);
    param[index]! -= (lr * mHat) / (Math.sqrt(vHat) + 1e-8);
  }
}

/** Trains `params` in place on `examples`. Deterministic for a seed. */
export function fitValueModel(params: ValueModelParams, examples: TrainExample[], options: FitOptions): void {
  const { dims, hidden: h } = params;
  const groupList = [...groupBy(examples, (example) => example.group).values()];
  const random = prng(options.seed ^ 0x5eed);
  const adamE = new Adam(params.embedding.length);
  const adamW1 = new Adam(params.w1.length);
  const adamB1 = new Adam(h);
  const adamW2 = new Adam(h);
  const adamB2 = new Adam(1);
  const adamSkip = new Adam(dims + 1);
  const gradSkip = new Float64Array(dims + 1);
  const gradE = new Float64Array(params.embedding.length);
  const gradW1 = new Float64Array(params.w1.length);
  const gradB1 = new Float64Array(h);
  const gradW2 = new Float64Array(h);
  const gradB2 = new Float64Array(1);
  const b2Holder = new Float64Array(1);
  let t = 0;

  for (let epoch = 0; epoch < options.epochs; epoch++) {
    const order = groupList.map((_, i) => i);
    for (let i = order.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [order[i], order[j]] = [order[j]!, order[i]!];
    }
    let lossSum = 0;
    let lossCount = 0;
    for (let start = 0; start < order.length; start += options.groupsPerStep) {
      const batch = order.slice(start, start + options.groupsPerStep).map((i) => groupList[i]!);
      const touched = new Set<number>();
      gradW1.fill(0);
      gradB1.fill(0);
      gradW2.fill(0);
      gradB2[0] = 0;
      gradSkip.fill(0);
      let items = 0;
      for (const group of batch) items += group.length;
      for (const group of batch) {
        const acts = group.map((example) => forward(params, example.bag));
        // d loss / d logit per example: pointwise BCE (mean over the batch's examples) + ranking pairs.
        const dLogit = new Float64Array(group.length);
        group.forEach((example, i) => {
          const p = sigmoid(acts[i]!.logit);
          const y = example.label ? 1 : 0;
          lossSum += -(y * Math.log(p + 1e-12) + (1 - y) * Math.log(1 - p + 1e-12));
          lossCount++;
          dLogit[i]! += (p - y) / items;
        });
        const positives = group.map((e, i) => (e.label ? i : -1)).filter((i) => i >= 0);
        const negatives = group.map((e, i) => (e.label ? -1 : i)).filter((i) => i >= 0);
        const pairs = positives.length * negatives.length;
        if (pairs > 0 && options.rankWeight > 0) {
          const scale = options.rankWeight / (pairs * batch.length);
          for (const p of positives) {
            for (const n of negatives) {
              const margin = acts[p]!.logit - acts[n]!.logit;
              lossSum += (options.rankWeight * softplus(-margin)) / pairs;
              const g = -sigmoid(-margin) * scale;
              dLogit[p]! += g;
              dLogit[n]! -= g;
            }
          }
        }
        group.forEach((example, i) => {
          const { input, hidden } = acts[i]!;
          const dz = dLogit[i]!;
          if (dz === 0) return;
          gradB2[0]! += dz;
          const dInput = new Float64Array(dims + 1);
          for (let k = 0; k <= dims; k++) {
            gradSkip[k]! += dz * input[k]!;
            dInput[k]! += dz * params.skip[k]!;
          }
          for (let j = 0; j < h; j++) {
            gradW2[j]! += dz * hidden[j]!;
            if (hidden[j]! <= 0) continue;
            const dh = dz * params.w2[j]!;
            gradB1[j]! += dh;
            for (let k = 0; k <= dims; k++) {
              gradW1[k * h + j]! += dh * input[k]!;
              dInput[k]! += dh * params.w1[k * h + j]!;
            }
          }
          const { rows, weights } = example.bag;
          for (let k = 0; k < rows.length; k++) {
            const row = rows[k]!;
            touched.add(row);
            const base = row * dims;
            const w = weights[k]!;
            for (let d = 0; d < dims; d++) gradE[base + d]! += w * dInput[d]!;
          }
        });
      }
      t++;
      const lr = options.learningRate;
      for (const row of touched) {
        const base = row * dims;
        for (let d = 0; d < dims; d++) {
          adamE.step(params.embedding, gradE, base + d, lr, t, options.l2);
          gradE[base + d] = 0;
        }
      }
      for (let i = 0; i < params.w1.length; i++) adamW1.step(params.w1, gradW1, i, lr, t, options.l2);
      for (let j = 0; j < h; j++) {
        adamB1.step(params.b1, gradB1, j, lr, t, 0);
        adamW2.step(params.w2, gradW2, j, lr, t, options.l2);
      }
      for (let k = 0; k <= dims; k++) adamSkip.step(params.skip, gradSkip, k, lr, t, options.l2);
      b2Holder[0] = params.b2;
      adamB2.step(b2Holder, gradB2, 0, lr, t, 0);
      params.b2 = b2Holder[0]!;
    }
    options.onEpoch?.(epoch + 1, lossCount ? lossSum / lossCount : 0);
  }
}
