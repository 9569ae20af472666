import { z } from 'zod';

export const TestStatus = z.enum(['passed', 'failed', 'error', 'skipped', 'xfail', 'xpass', 'missing']);
export type TestStatus = z.infer<typeof TestStatus>;

export const Tally = z.object({
  passed: z.number().int().nonnegative(),
  failed: z.number().int().nonnegative(),
  missing: z.number().int().nonnegative(),
});
export type Tally = z.infer<typeof Tally>;

/** Unified outcome of verifying one patch; `resolved` only when every F2P and P2P test passed. */
export const VerifyStatus = z.enum(['resolved', 'unresolved', 'apply_failed', 'timeout', 'error']);
export type VerifyStatus = z.infer<typeof VerifyStatus>;

/**
 * What Harbor's verifier wrote (docs/harbor.md#verification): every reward it gave, the one that
 * decides (`reward`, or a reward.json's only key), and the threshold it was held to.
 */
export const HarborReward = z.object({
  /** The file read: reward.json wins over reward.txt, as in Harbor. */
  file: z.enum(['reward.json', 'reward.txt']),
  rewards: z.record(z.string(), z.number()),
  value: z.number(),
  /** `resolved` when value ≥ threshold. */
  threshold: z.number(),
});
export type HarborReward = z.infer<typeof HarborReward>;

/**
 * A Harbor verification that gave no readable reward (a malformed file, none written, a verifier
 * past its limit, a failed sandbox, a patch that did not apply): the file that was wrong (null:
 * none was read) and the threshold the reward would have been held to; `error` says why.
 */
export const HarborRewardUnread = z.object({
  file: z.enum(['reward.json', 'reward.txt']).nullable(),
  threshold: z.number(),
});
export type HarborRewardUnread = z.infer<typeof HarborRewardUnread>;

export const VerifyResult = z.object({
  trajectory_id: z.string(),
  instance_id: z.string(),
  status: VerifyStatus,
  applied: z.boolean(),
  /** git's message when the patch (or the test patch) did not apply. */
  apply_error: z.string().optional(),
  /**
   * Submodule (gitlink) sections of the candidate's patch left out when applying it, as `git apply`
   * leaves them out of the working tree (`-dirty` suffixes, moved commits); the stored patch keeps them.
   */
  submodules_left_out: z.array(z.object({ path: z.string(), kind: z.enum(['dirty', 'moved', 'added', 'removed']) })).optional(),
  /** What applying did besides applying, in words (the submodule sections left out). */
  apply_note: z.string().optional(),
  /** `harness` when the tests were put in place as the SWE-bench harness does (`harness_compat`); absent: winnower's procedure. */
  procedure: z.literal('harness').optional(),
  /**
   * Where winnower's procedure and the harness's treat this candidate differently (it created a
   * file the test patch creates, or changed a file defining a listed test), and what the harness
   * procedure met (a failed checkout, a test patch that did not apply), in words.
   */
  procedure_note: z.string().optional(),
  /** Per-test outcomes as parsed from the log, keyed by the runner's test id. */
  tests: z.record(z.string(), TestStatus).default({}),
  fail_to_pass: Tally,
  pass_to_pass: Tally,
  resolved: z.boolean(),
  /** Which log parser read the output (pytest, django, sympy, unittest, exit-code). */
  parser: z.string(),
  /**
   * `exit-code` when the verdict came from the exit status rather than per-test outcomes: the
   * `exit-code` parser was asked for, or the parser found no test at all in the log (a Go, C, JS
   * or shell runner read as pytest), so every listed test took the command's exit status.
   */
  grading: z.literal('exit-code').optional(),
  /** Why the run was graded by exit code (with `grading`). */
  grading_reason: z.string().optional(),
  /** The test command's exit status (null when it was killed or never ran). */
  exit_code: z.number().int().nullable(),
  /**
   * Tests the log shows failing (failed or error) that FAIL_TO_PASS and PASS_TO_PASS do not name,
   * in log order, the first OTHER_FAILED_SHOWN of them. SWE-bench's grading ignores them; they
   * (or a non-zero exit code) mean "other tests failed" to selection and the stop rule.
   */
  other_failed: z.array(z.string()).default([]),
  /** How many such tests there were (other_failed may list fewer). */
  other_failed_count: z.number().int().nonnegative().default(0),
  /** Harbor tasks: the verifier's reward, which decides `resolved` (the exit code does not). */
  reward: HarborReward.optional(),
  /** Harbor tasks without a readable reward: which file was wrong and the threshold (with `error`). */
  reward_unread: HarborRewardUnread.optional(),
  timed_out: z.boolean().default(false),
  duration_ms: z.number().nonnegative(),
  /** Last few KiB of the test log. */
  log_tail: z.string().default(''),
  error: z.string().optional(),
});
export type VerifyResult = z.infer<typeof VerifyResult>;

/** How many of the unlisted failing tests a VerifyResult names (`other_failed`). */
export const OTHER_FAILED_SHOWN = 20;
