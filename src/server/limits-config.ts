/**
 * The server's limits and job retention as configured (`server.limits`, `server.retention`):
 * what one API key may ask of the server, and how long finished jobs are kept. Every cap names
 * its setting in the error it causes, so an operator knows which key to raise.
 */
import { z } from 'zod';

/** The most candidates any configuration may allow in one request (the request schema's own bound). */
export const MAX_CANDIDATES_CAP = 4096;

// The descriptions are what docs/configuration.md shows (scripts/gen-config-docs.ts).
export const LimitsConfig = z.strictObject({
  rate_per_minute: z
    .number()
    .int()
    .nonnegative()
    .default(0)
    .describe(
      'Requests a minute per API key (per client address when there are no keys); 0: no limit. Health checks and /metrics do not count.',
    ),
  rate_burst: z
    .number()
    .int()
    .positive()
    .optional()
    .describe("Requests a key may send at once beyond its rate (the token bucket's size); default a tenth of rate_per_minute, at least 1."),
  max_queued_jobs: z
    .number()
    .int()
    .nonnegative()
    .default(64)
    .describe('Jobs that may wait for a slot beyond server.max_running_jobs; past it POST /solve answers 503.'),
  max_scoring_requests: z
    .number()
    .int()
    .nonnegative()
    .default(128)
    .describe(
      '/score and /rerank requests in progress at once; past it a new one is answered 503 with Retry-After before its body is read. 0: no limit.',
    ),
  max_candidates: z.number().int().positive().max(MAX_CANDIDATES_CAP).default(256).describe('Candidates in one /score or /rerank request.'),
  max_trajectory_bytes: z
    .number()
    .int()
    .positive()
    .default(4 * 1024 * 1024)
    .describe("Size of one candidate's JSON (messages, patch, meta)."),
});
export type LimitsConfig = z.infer<typeof LimitsConfig>;

export const RetentionConfig = z.strictObject({
  max_age_days: z.number().nonnegative().default(30).describe('Finished jobs older than this are purged; 0 keeps them whatever their age.'),
  max_jobs: z.number().int().nonnegative().default(10_000).describe('Most finished jobs kept (the newest); 0: no limit on their number.'),
  interval_minutes: z
    .number()
    .positive()
    .default(60)
    .describe('How often the purge runs while the server is up (it also runs at start-up).'),
});
export type RetentionConfig = z.infer<typeof RetentionConfig>;

/** The defaults, for callers that build an app without a config (tests, benches). */
export const DEFAULT_LIMITS: LimitsConfig = LimitsConfig.parse({});
