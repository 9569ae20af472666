import { z } from 'zod';
import { STRATEGY_NAMES } from './strategy-names.js';

export const Strategy = z.enum(STRATEGY_NAMES);
export type Strategy = z.infer<typeof Strategy>;

/** What a tamper check found a patch doing to the tests or their configuration (docs/checks.md#tamper-checks). */
export const TamperKind = z.enum(['deletes-test', 'skips-test', 'weakens-test', 'edits-verified-file', 'changes-test-config']);
export type TamperKind = z.infer<typeof TamperKind>;

/** One tamper flag: its kind, the file, and what the patch did there. */
export const TamperFlag = z.object({ kind: TamperKind, file: z.string(), detail: z.string() });
export type TamperFlag = z.infer<typeof TamperFlag>;

/** One candidate's place in a selection and why it is there. */
export const RankedCandidate = z.object({
  trajectory_id: z.string(),
  rank: z.number().int().positive(),
  value: z.number().nullable(),
  /** Verification status when verification ran. */
  verified: z.string().nullable().default(null),
  /** Consensus cluster id (candidates with equal normalized patches share one). */
  cluster: z.number().int().nullable().default(null),
  cluster_size: z.number().int().nullable().default(null),
  /** Strategy-specific ordering key, highest first (`[0, has score, value]` for an unusable candidate). */
  key: z.array(z.number()),
  reasons: z.array(z.string()),
  /**
   * Why this candidate can never be chosen, or null when it can: its patch is empty, unparseable
   * or refused by the patch rules, did not apply, or could not be prepared for selection (`code`
   * then names the error). Unusable candidates rank below every usable one, under every strategy.
   * `select` sets this and `other_tests_failed` on every entry; they are optional for rankings
   * stored before they existed.
   */
  unusable: z
    .object({
      kind: z.enum(['empty', 'unparseable', 'refused', 'apply_failed', 'unprepared']),
      reason: z.string(),
      code: z.string().optional(),
    })
    .nullable()
    .optional(),
  /** Resolved by the named tests, but other tests failed or the test command exited non-zero. */
  other_tests_failed: z.boolean().optional(),
  /**
   * Tamper flags of a usable candidate's patch (deleted, skipped or weakened tests, edits to the
   * files the verification runs, test configuration changes); empty when clean. A flagged
   * candidate ranks below the clean ones with the same outcome. Absent on unusable candidates
   * and on rankings stored before it existed.
   */
  tamper: z.array(TamperFlag).optional(),
});
export type RankedCandidate = z.infer<typeof RankedCandidate>;

export const Selection = z.object({
  instance_id: z.string(),
  /** The strategy asked for. */
  strategy: Strategy,
  /**
   * The strategy whose order was actually used when the requested one could not run (value with
   * no scores → consensus; hybrid with no test results → value or consensus); null when none.
   */
  degraded_to: Strategy.nullable().default(null),
  /** The winner, or null when no candidate is usable (see `RankedCandidate.unusable`; `reason` says why). */
  chosen: z.string().nullable(),
  ranking: z.array(RankedCandidate),
  /** One sentence: why the winner won. */
  reason: z.string(),
});
export type Selection = z.infer<typeof Selection>;
