import { z } from 'zod';

/** What serialization removed to fit the token budget. */
export const Cut = z.object({
  /** Assistant thoughts replaced by an elision marker, whole or in part. */
  thoughts: z.number().int().nonnegative().default(0),
  /** Observations cut to head + tail. */
  observations: z.number().int().nonnegative().default(0),
  /** Middle steps dropped entirely. */
  steps_dropped: z.number().int().nonnegative().default(0),
  /** Whether the patch itself had to be cut (last resort). */
  patch: z.boolean().default(false),
  /** Tokens before fitting (input_tokens is after). */
  tokens_before: z.number().int().nonnegative().default(0),
});
export type Cut = z.infer<typeof Cut>;

/** A value model's verdict on one trajectory. */
export const Score = z.object({
  trajectory_id: z.string(),
  instance_id: z.string(),
  /** Probability that the patch resolves the issue, in [0, 1]. */
  value: z.number().min(0).max(1),
  /** Raw model output before the activation (logit, or log-odds of YES for judges). */
  raw: z.number(),
  backend: z.string(),
  model: z.string(),
  template: z.string(),
  input_tokens: z.number().int().nonnegative(),
  truncated: z.boolean(),
  cut: Cut,
  /** Served from the content-hash cache. */
  cached: z.boolean().default(false),
});
export type Score = z.infer<typeof Score>;
