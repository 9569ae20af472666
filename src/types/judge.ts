import { z } from 'zod';

/** Pairs asked and tokens spent by the pairwise judge (docs/selection.md "judge"). */
export const JudgeUsage = z.object({
  /** Chat completions asked: each pair twice, once in each order. */
  comparisons: z.number().int().nonnegative(),
  /** Unordered pairs judged. */
  pairs: z.number().int().nonnegative(),
  prompt_tokens: z.number().int().nonnegative(),
  completion_tokens: z.number().int().nonnegative(),
});
export type JudgeUsage = z.infer<typeof JudgeUsage>;

/**
 * What the judge did for one selection (or, summed, for a batch): the tie rate before and after
 * it, what it cost, and why it did not count when it failed.
 */
export const JudgeReport = JudgeUsage.extend({
  model: z.string(),
  /** The strategy it served: `judge` ranks by it, `hybrid` breaks ties with it. */
  strategy: z.string(),
  /** Usable candidates the tie rates count. */
  usable: z.number().int().nonnegative(),
  /** Usable candidates tied with another on every key before the judge's, and after it. */
  tied_before: z.number().int().nonnegative(),
  tied_after: z.number().int().nonnegative(),
  /** tied / usable (0 when nothing is usable). */
  tie_rate_before: z.number(),
  tie_rate_after: z.number(),
  /** Why selection went on without the judge (its first failure), or null. */
  error: z.object({ code: z.string(), message: z.string() }).nullable(),
});
export type JudgeReport = z.infer<typeof JudgeReport>;
