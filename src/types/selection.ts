import { z } from 'zod';

export const Strategy = z.enum(['value', 'consensus', 'hybrid', 'learned']);
export type Strategy = z.infer<typeof Strategy>;

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
  /** Strategy-specific ordering key, highest first. */
  key: z.array(z.number()),
  reasons: z.array(z.string()),
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
  /** The winner, or null when no candidate has a usable patch. */
  chosen: z.string().nullable(),
  ranking: z.array(RankedCandidate),
  /** One sentence: why the winner won. */
  reason: z.string(),
});
export type Selection = z.infer<typeof Selection>;
