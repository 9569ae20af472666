/**
 * The server's limits and job retention as configured (`server.limits`, `server.retention`):
 * what one API key may ask of the server, and how long finished jobs are kept. Every cap names
 * its setting in the error it causes, so an operator knows which key to raise.
 */
import { z } from 'zod';

/** The most candidates any configuration may allow in one request (the request schema's own bound). */
export const MAX_CANDIDATES_CAP = 4096;

export const LimitsConfig = z.strictObject({
  /** Requests per minute per API key (per client address without keys); 0 = unlimited. Health checks and /metrics are exempt. */
  rate_per_minute: z.number().int().nonnegative().default(0),
  /** Requests a key may send at once above its rate (token-bucket size); default: a tenth of a minute's rate, at least 1. */
  rate_burst: z.number().int().positive().optional(),
  /** Jobs waiting for a slot (beyond server.max_running_jobs) before POST /solve answers 503. */
  max_queued_jobs: z.number().int().nonnegative().default(64),
  /** Candidates in one /score or /rerank request. */
  max_candidates: z.number().int().positive().max(MAX_CANDIDATES_CAP).default(256),
  /** Size of one candidate (its JSON: messages, patch, meta) in bytes. */
  max_trajectory_bytes: z
    .number()
    .int()
    .positive()
    .default(4 * 1024 * 1024),
});
export type LimitsConfig = z.infer<typeof LimitsConfig>;

export const RetentionConfig = z.strictObject({
  /** Finished jobs older than this are purged; 0 keeps them whatever their age. */
  max_age_days: z.number().nonnegative().default(30),
  /** Finished jobs kept at most (the newest); 0 = no count limit. */
  max_jobs: z.number().int().nonnegative().default(10_000),
  /** How often the purge runs while serving (it also runs at start-up). */
  interval_minutes: z.number().positive().default(60),
});
export type RetentionConfig = z.infer<typeof RetentionConfig>;

/** The defaults, for callers that build an app without a config (tests, benches). */
export const DEFAULT_LIMITS: LimitsConfig = LimitsConfig.parse({});
