/**
 * Weights of the trajectory signals (steps, ran tests, last test run passed, submitted) learned
 * from labelled history by `winnower train` and stored in selector.json (`trajectory`), one set per
 * strategy that reads them: `robust` adds them to its agreement score, `learned` to its learned
 * score. Weights are on the raw signals (signals.ts), in log-odds per unit. Without the section, or
 * with `use: false`, each strategy keeps its fixed priors (the weights below), today's behaviour.
 */
import type { SignalName, TrajectoryWeights } from '../types/selector.js';

/** The signals only a trajectory provides, in signals.ts order. */
export const TRAJECTORY_SIGNAL_NAMES = [
  'traj_steps',
  'traj_ran_tests',
  'traj_last_test_passed',
  'traj_submitted',
] as const satisfies readonly SignalName[];
export type TrajectorySignalName = (typeof TRAJECTORY_SIGNAL_NAMES)[number];

/** robust's fixed trajectory prior: a trajectory whose last test run passed (−1 when it failed). */
export const ROBUST_TRAJECTORY_PRIOR: Record<TrajectorySignalName, number> = {
  traj_steps: 0,
  traj_ran_tests: 0,
  traj_last_test_passed: 0.25,
  traj_submitted: 0,
};
/**
 * learned's fixed priors for the trajectory signals (its `learned: false` entries, on raw signals):
 * passing tests is stronger evidence than running them or finishing cleanly.
 */
export const LEARNED_TRAJECTORY_PRIOR: Record<TrajectorySignalName, number> = {
  traj_steps: 0,
  traj_ran_tests: 0.2,
  traj_last_test_passed: 0.5,
  traj_submitted: 0.3,
};

export { TrajectoryWeights } from '../types/selector.js';

/** The weights a strategy uses: the fitted ones when present and in use, else its fixed priors. */
export function trajectoryWeightsFor(
  strategy: 'robust' | 'learned',
  fitted: TrajectoryWeights | undefined,
): Record<TrajectorySignalName, number> | undefined {
  return fitted?.use ? fitted[strategy] : undefined;
}
