/**
 * The learned selector's file format (`selector.json` in a model folder, written by `winnower
 * train`): its group signals, own-history priors and trajectory weights. Data only, so the model
 * folder's loader (src/scoring) and the strategies that read it (src/select) both name it without
 * either importing the other; the loader is src/scoring/model-folder.ts.
 */
import { z } from 'zod';

export const SELECTOR_FORMAT = 'winnower-selector-1';
export const SELECTOR_FILE = 'selector.json';

/** The names of the learned selector's group signals, in order (computed in src/select/signals.ts). */
// Only differences within an instance matter to a ranking, so each signal is either relative
// (value_rel, size_rel) or a property of the candidate alone.
export const SIGNALS = [
  'value_rel',
  'has_value',
  'cluster_share',
  'line_agreement',
  'file_agreement',
  'size_rel',
  'size_rank',
  'files_rel',
  'issue_files',
  'issue_identifiers',
  'tests_only',
  'touches_tests',
  'new_files',
  'debug_output',
  'traj_steps',
  'traj_ran_tests',
  'traj_last_test_passed',
  'traj_submitted',
  'verify_ran',
  'verify_resolved',
  'verify_f2p',
  'verify_p2p',
  'verify_broken',
  // Execution checks without a test list (docs/checks.md): broke a test that passed on base; share of valid reproduction tests passed.
  'check_regressed',
  'check_repro_share',
] as const;
export type SignalName = (typeof SIGNALS)[number];

export const PriorCount = z.strictObject({ n: z.number().int().nonnegative(), resolved: z.number().int().nonnegative() });
export type PriorCount = z.infer<typeof PriorCount>;

/** Own-history priors per agent configuration (src/select/priors.ts fits and reads them). */
export const Priors = z.strictObject({
  /** Overall resolve rate of the labelled history. */
  overall: z.number().min(0).max(1),
  /** Per configuration key (`configKey`): labelled tasks and how many it resolved. */
  configs: z.record(z.string(), PriorCount),
  /**
   * Per configuration on one repository (`<config key>\u0000<owner/name>`). Recorded for
   * inspection; not used for ranking: cross-fitted on the ACR/SWE-agent Lite runs they lowered
   * the headroom closed (docs/training.md, "Own history").
   */
  repos: z.record(z.string(), PriorCount),
});
export type Priors = z.infer<typeof Priors>;

const Weights = z.strictObject({
  traj_steps: z.number(),
  traj_ran_tests: z.number(),
  traj_last_test_passed: z.number(),
  traj_submitted: z.number(),
});

/** Trajectory-signal weights fitted on labelled pools (src/select/trajectory-weights.ts reads them). */
export const TrajectoryWeights = z.strictObject({
  /** Candidates (usable, with a trajectory, in labelled pools with both outcomes) the fit read. */
  rows: z.number().int().nonnegative(),
  /** Those pools. */
  pools: z.number().int().positive(),
  /** Pseudo-pools of the Gaussian prior that pulls each weight toward its fixed prior. */
  prior_strength: z.number().positive(),
  /** Added to robust's agreement score. */
  robust: Weights,
  /** Replace the learned selector's trajectory entries (score += weight × signal). */
  learned: Weights,
  /** False when the source-held-out check found the fitted weights worse than the fixed priors: selection ignores them. */
  use: z.boolean(),
  /** Why `use` is what it is, in one sentence. */
  reason: z.string(),
});
export type TrajectoryWeights = z.infer<typeof TrajectoryWeights>;

export const LearnedSelector = z.strictObject({
  format: z.literal(SELECTOR_FORMAT),
  signals: z.array(
    z.strictObject({
      name: z.enum(SIGNALS),
      mean: z.number(),
      std: z.number().positive(),
      weight: z.number(),
      /** False for a weight set by hand because the training data never showed the signal. */
      learned: z.boolean(),
    }),
  ),
  /**
   * The strategy a request without one gets: `learned` only when `winnower train` found the
   * learned selector above the best trivial selector on sources held out of training, else
   * `robust`; absent in files written before it existed (then `learned`).
   */
  default_strategy: z.enum(['learned', 'robust']).optional(),
  /** Why `default_strategy` is what it is, in one sentence. */
  default_reason: z.string().optional(),
  /** Own-history priors per agent configuration, when the training rows had several. */
  priors: Priors.optional(),
  /** Trajectory-signal weights fitted on labelled pools with trajectories; absent: the fixed priors. */
  trajectory: TrajectoryWeights.optional(),
});
export type LearnedSelector = z.infer<typeof LearnedSelector>;
