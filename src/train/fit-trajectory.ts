/**
 * Fits the trajectory signals' weights (trajectory-weights.ts) from labelled history: per strategy,
 * a conditional logit over each labelled pool with both outcomes (the probability mass the score
 * puts on resolved candidates, as fit-selector.ts), where the strategy's own score without the
 * trajectory signals is a fixed offset and only the four trajectory weights are free. A Gaussian
 * prior centred on the strategy's fixed priors (`prior_strength` pseudo-pools) keeps the weights
 * near them when few pools have trajectories and lets the data decide when many do. Only usable
 * candidates that carry a trajectory count; pools left with one outcome say nothing and are dropped.
 */
import { contributions, computeSignals, robustAgreement, type Candidate, type LearnedSelector, type Signals } from '../select/index.js';
import { prepare } from '../select/prepare.js';
import {
  LEARNED_TRAJECTORY_PRIOR,
  ROBUST_TRAJECTORY_PRIOR,
  TRAJECTORY_SIGNAL_NAMES,
  type TrajectorySignalName,
  type TrajectoryWeights,
} from '../select/trajectory-weights.js';
import { groupBy } from '../util/group-by.js';
import type { LabelledCandidate } from './dataset.js';
import type { SelectorPool } from './fit-selector.js';

/** Pseudo-pools of the prior: about this many mixed pools with trajectories weigh as much as the fixed priors. */
export const TRAJECTORY_PRIOR_STRENGTH = 8;

type Weights = Record<TrajectorySignalName, number>;

/** One pool's usable candidates with a trajectory: their trajectory signals, offsets and labels. */
interface FitPool {
  x: number[][];
  offset: number[];
  labels: boolean[];
}

/** The pools with both outcomes among the usable candidates that carry a trajectory. */
export function poolsWithTrajectories(pools: SelectorPool[]): SelectorPool[] {
  return pools.flatMap((pool) => {
    const keep = pool.labels.map((_, i) => pool.trajectory?.[i] === true);
    const labels = pool.labels.filter((_, i) => keep[i]);
    if (!labels.some(Boolean) || labels.every(Boolean)) return [];
    return [{ signals: pool.signals.filter((_, i) => keep[i]), labels, trajectory: labels.map(() => true) }];
  });
}

/**
 * Selector pools (usable candidates' signals, labels, trajectory flags) of labelled candidates
 * without value scores: what the robust strategy reads. One pool per `pool` key.
 */
export function unscoredSelectorPools(candidates: LabelledCandidate[]): SelectorPool[] {
  return [...groupBy(candidates, (c) => c.pool).values()].map((members) => {
    const instance = prepare(
      members.map((c): Candidate => ({ trajectory: c.trajectory })),
      members[0]!.trajectory.instance_id,
    );
    const signals = computeSignals(instance, members[0]!.task);
    const usable = instance.candidates.flatMap((p, i) => (p.usable ? [i] : []));
    return {
      signals: usable.map((i) => signals[i]!),
      labels: usable.map((i) => members[i]!.resolved),
      trajectory: usable.map((i) => members[i]!.trajectory.messages.length > 0),
    };
  });
}

/**
 * −log-likelihood of the conditional logit plus the prior's penalty, its gradient, and a positive
 * definite curvature: the prior's plus each pool's covariance of the signals under the softmax (the
 * exact Hessian for a pool with one resolved candidate, an upper bound on it otherwise).
 */
function objective(
  pools: FitPool[],
  w: number[],
  prior: number[],
  strength: number,
): { value: number; gradient: number[]; curvature: number[][] } {
  const k = w.length;
  let value = 0;
  const gradient = w.map((wk, j) => strength * (wk - prior[j]!));
  const curvature = w.map((_, a) => w.map((__, b) => (a === b ? strength : 0)));
  for (let j = 0; j < k; j++) value += (strength / 2) * (w[j]! - prior[j]!) ** 2;
  for (const pool of pools) {
    const scores = pool.x.map((row, i) => row.reduce((sum, v, j) => sum + v * w[j]!, pool.offset[i]!));
    const max = Math.max(...scores);
    const exp = scores.map((s) => Math.exp(s - max));
    const total = exp.reduce((a, b) => a + b, 0);
    const positive = exp.reduce((sum, e, i) => sum + (pool.labels[i] ? e : 0), 0);
    value -= Math.log(positive / total);
    const mean = new Array<number>(k).fill(0);
    pool.x.forEach((row, i) => {
      const p = exp[i]! / total;
      const d = p - (pool.labels[i] ? exp[i]! / positive : 0);
      for (let j = 0; j < k; j++) {
        gradient[j]! += d * row[j]!;
        mean[j]! += p * row[j]!;
      }
    });
    pool.x.forEach((row, i) => {
      const p = exp[i]! / total;
      for (let a = 0; a < k; a++) for (let b = 0; b < k; b++) curvature[a]![b]! += p * (row[a]! - mean[a]!) * (row[b]! - mean[b]!);
    });
  }
  return { value, gradient, curvature };
}

/** Solves `m x = v` for a symmetric positive definite `m` (Cholesky). */
function solve(m: number[][], v: number[]): number[] {
  const k = v.length;
  const l = m.map(() => new Array<number>(k).fill(0));
  for (let i = 0; i < k; i++) {
    for (let j = 0; j <= i; j++) {
      let sum = m[i]![j]!;
      for (let r = 0; r < j; r++) sum -= l[i]![r]! * l[j]![r]!;
      l[i]![j] = i === j ? Math.sqrt(Math.max(sum, 1e-12)) : sum / l[j]![j]!;
    }
  }
  const y = new Array<number>(k).fill(0);
  for (let i = 0; i < k; i++) {
    let sum = v[i]!;
    for (let r = 0; r < i; r++) sum -= l[i]![r]! * y[r]!;
    y[i] = sum / l[i]![i]!;
  }
  const x = new Array<number>(k).fill(0);
  for (let i = k - 1; i >= 0; i--) {
    let sum = y[i]!;
    for (let r = i + 1; r < k; r++) sum -= l[r]![i]! * x[r]!;
    x[i] = sum / l[i]![i]!;
  }
  return x;
}

/** Newton steps on the positive definite curvature with a backtracking (Armijo) line search. */
function minimise(pools: FitPool[], prior: number[], strength: number): number[] {
  let w = prior.slice();
  let current = objective(pools, w, prior, strength);
  for (let iteration = 0; iteration < 100; iteration++) {
    const direction = solve(current.curvature, current.gradient);
    const decrease = direction.reduce((sum, d, j) => sum + d * current.gradient[j]!, 0);
    if (decrease < 1e-12) break;
    let step = 1;
    let accepted = false;
    for (let tries = 0; tries < 30; tries++) {
      const candidate = w.map((wk, j) => wk - step * direction[j]!);
      const result = objective(pools, candidate, prior, strength);
      if (result.value <= current.value - 0.25 * step * decrease) {
        w = candidate;
        current = result;
        accepted = true;
        break;
      }
      step /= 2;
    }
    if (!accepted) break;
  }
  return w;
}

function fitOne(pools: SelectorPool[], offset: (signals: Signals) => number, prior: Weights, strength: number): Weights {
  const fitPools: FitPool[] = pools.map((pool) => ({
    x: pool.signals.map((s) => TRAJECTORY_SIGNAL_NAMES.map((name) => s[name])),
    offset: pool.signals.map(offset),
    labels: pool.labels,
  }));
  const w = minimise(
    fitPools,
    TRAJECTORY_SIGNAL_NAMES.map((name) => prior[name]),
    strength,
  );
  return Object.fromEntries(TRAJECTORY_SIGNAL_NAMES.map((name, j) => [name, w[j]!])) as Weights;
}

/** The learned score without its trajectory entries: the offset the learned weights are fitted against. */
function learnedOffset(selector: LearnedSelector): (signals: Signals) => number {
  const rest: LearnedSelector = {
    ...selector,
    signals: selector.signals.filter((s) => !(TRAJECTORY_SIGNAL_NAMES as readonly string[]).includes(s.name)),
    trajectory: undefined,
  };
  return (signals) => contributions(rest, signals).total;
}

/**
 * Trajectory weights for robust and learned from `pools` (all of a training side's selector pools;
 * those without trajectories are skipped here), or undefined when no pool with both outcomes has
 * trajectories. `selector`: the fitted learned selector (its other weights give learned's offset).
 */
export function fitTrajectoryWeights(
  pools: SelectorPool[],
  selector: LearnedSelector,
  options: { strength?: number } = {},
): TrajectoryWeights | undefined {
  const strength = options.strength ?? TRAJECTORY_PRIOR_STRENGTH;
  const fit = poolsWithTrajectories(pools);
  if (fit.length === 0) return undefined;
  const rows = fit.reduce((sum, pool) => sum + pool.labels.length, 0);
  return {
    rows,
    pools: fit.length,
    prior_strength: strength,
    robust: fitOne(fit, robustAgreement, ROBUST_TRAJECTORY_PRIOR, strength),
    learned: fitOne(fit, learnedOffset(selector), LEARNED_TRAJECTORY_PRIOR, strength),
    use: true,
    reason: `fitted on ${rows} labelled candidates with trajectories in ${fit.length} pools with both outcomes; not checked on held-out sources`,
  };
}
