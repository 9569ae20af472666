/**
 * Fits the learned selector's weights: a listwise softmax loss over each labelled pool with both
 * outcomes (the probability mass the linear score puts on resolved candidates), L2-regularised,
 * on standardised signals. Signals the training pools never vary (no trajectories, no test
 * results in patch-only data) cannot be learned: they keep a stated prior weight, marked
 * `learned: false` in selector.json.
 */
import { SELECTOR_FORMAT, type LearnedSelector } from '../select/strategies/learned.js';
import { SIGNALS, type SignalName, type Signals } from '../select/signals.js';
import { LEARNED_TRAJECTORY_PRIOR } from '../select/trajectory-weights.js';

/** One pool's usable candidates: their signals and labels. */
export interface SelectorPool {
  signals: Signals[];
  labels: boolean[];
  /** Per candidate: whether it carries a trajectory (messages), for the trajectory weights (fit-trajectory.ts). */
  trajectory?: boolean[];
}

export interface FitSelectorOptions {
  l2?: number;
  iterations?: number;
  learningRate?: number;
}

/**
 * Hand-set weights (per standard deviation of a 0/1 or [0, 1] signal) for signals training data
 * may lack: passing tests is strong evidence, running them and finishing cleanly weak evidence.
 */
export const PRIOR_WEIGHTS: Partial<Record<SignalName, number>> = {
  verify_resolved: 3,
  verify_f2p: 1,
  verify_p2p: 1,
  verify_broken: -1,
  check_regressed: -1,
  check_repro_share: 1,
  traj_ran_tests: LEARNED_TRAJECTORY_PRIOR.traj_ran_tests,
  traj_last_test_passed: LEARNED_TRAJECTORY_PRIOR.traj_last_test_passed,
  traj_submitted: LEARNED_TRAJECTORY_PRIOR.traj_submitted,
};

export function fitSelector(pools: SelectorPool[], options: FitSelectorOptions = {}): LearnedSelector {
  const l2 = options.l2 ?? 0.01;
  const iterations = options.iterations ?? 600;
  const lr = options.learningRate ?? 0.05;
  const all = pools.flatMap((pool) => pool.signals);
  const stats = SIGNALS.map((name) => {
    const values = all.map((s) => s[name]);
    const mean = values.length ? values.reduce((a, b) => a + b, 0) / values.length : 0;
    const variance = values.length ? values.reduce((a, b) => a + (b - mean) ** 2, 0) / values.length : 0;
    return { name, mean, std: Math.sqrt(variance) };
  });
  const learnable = stats.map((stat) => stat.std > 1e-9);
  const mixed = pools.filter((pool) => pool.labels.some(Boolean) && pool.labels.some((label) => !label));
  const standardized = mixed.map((pool) =>
    pool.signals.map((s) => stats.map((stat, k) => (learnable[k] ? (s[stat.name] - stat.mean) / stat.std : 0))),
  );

  const w = new Float64Array(SIGNALS.length);
  const m = new Float64Array(SIGNALS.length);
  const v = new Float64Array(SIGNALS.length);
  for (let t = 1; t <= iterations && mixed.length > 0; t++) {
    const grad = new Float64Array(SIGNALS.length);
    mixed.forEach((pool, p) => {
      const x = standardized[p]!;
      const scores = x.map((row) => row.reduce((sum, value, k) => sum + value * w[k]!, 0));
      const max = Math.max(...scores);
      const exp = scores.map((s) => Math.exp(s - max));
      const total = exp.reduce((a, b) => a + b, 0);
      const positive = exp.reduce((sum, e, i) => sum + (pool.labels[i] ? e : 0), 0);
      // d(−log(positive / total)) / d score_i = softmax_i − [resolved_i] × e_i / positive
      x.forEach((row, i) => {
        const d = exp[i]! / total - (pool.labels[i] ? exp[i]! / positive : 0);
        for (let k = 0; k < row.length; k++) grad[k]! += (d * row[k]!) / mixed.length;
      });
    });
    for (let k = 0; k < SIGNALS.length; k++) {
      if (!learnable[k]) continue;
      const g = grad[k]! + l2 * w[k]!;
      m[k] = 0.9 * m[k]! + 0.1 * g;
      v[k] = 0.999 * v[k]! + 0.001 * g * g;
      w[k]! -= (lr * (m[k]! / (1 - 0.9 ** t))) / (Math.sqrt(v[k]! / (1 - 0.999 ** t)) + 1e-8);
    }
  }
  return {
    format: SELECTOR_FORMAT,
    signals: stats.map((stat, k) =>
      learnable[k]
        ? { name: stat.name, mean: stat.mean, std: stat.std, weight: w[k]!, learned: true }
        : { name: stat.name, mean: 0, std: 1, weight: PRIOR_WEIGHTS[stat.name] ?? 0, learned: false },
    ),
  };
}
