/**
 * The names of the learned selector's group signals, in order: a leaf module, so the selector's
 * file format (selector-file.ts) and the selection seam (types.ts) can name them without
 * importing the signal computations (and through them the seam itself).
 */

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
