/**
 * The body of `POST /solve` (and `winnower solve`), validated by zod. Every object is strict: an
 * unknown key (a typo such as `verfy`) is a 400 naming it, never silently dropped.
 */
import { z } from 'zod';
import { Strategy } from '../types/selection.js';
import { PolicyOptions } from '../candidates/policy-options.js';

/** Longest time limit a request may set (one day): timers past 2^31 ms fire at once. */
export const MAX_TIMEOUT_S = 86_400;

export const StopRule = z.strictObject({
  /** Stop once a candidate reaches this value... */
  min_value: z.number().min(0).max(1).default(0.8),
  /** ...and (when verification runs) passed its tests. */
  require_resolved: z.boolean().default(true),
});
export type StopRule = z.infer<typeof StopRule>;

export const SolveRequest = z
  .strictObject({
    instance_id: z.string().min(1).default('task'),
    /** The issue text. */
    issue: z.string().min(1),
    repo: z
      .strictObject({
        url: z.string().min(1).optional(),
        path: z.string().min(1).optional(),
        commit: z.string().min(1).optional(),
      })
      .refine((repo) => (repo.url === undefined) !== (repo.path === undefined), { message: 'give exactly one of url or path' })
      .optional(),
    image: z.string().min(1).optional(),
    n: z.number().int().min(1).max(64).default(4),
    /** Rollouts running at once (default: all of a wave). */
    concurrency: z.number().int().min(1).max(64).optional(),
    /**
     * Sandboxes open at once across the whole job: rollouts, verification and test runs share this
     * one budget (default: bounded only by `concurrency` and `verify.concurrency`).
     */
    max_sandboxes: z.number().int().min(1).max(128).optional(),
    /** Wave sizes summing to n, e.g. [2, 2]; one wave of n by default. */
    waves: z.array(z.number().int().positive()).optional(),
    policy: PolicyOptions.optional(),
    agent: z
      .strictObject({
        /** A name under config/agents (no paths: a request must not pick files on the host). */
        config: z
          .string()
          .regex(/^[A-Za-z0-9][A-Za-z0-9_-]*$/, 'an agent config name under config/agents, not a path')
          .default('default'),
        /**
         * Which agent runs each rollout: `winnower` (the built-in bash agent) or a harness under
         * config/harnesses (`pi`, `codex`, `claude-code`, ...; GET /harnesses lists what this server can run).
         */
        harness: z
          .string()
          .regex(/^[a-z0-9][a-z0-9_-]*$/, 'a harness name under config/harnesses (GET /harnesses), not a path')
          .default('winnower'),
        /** The model name a harness is told (default: the policy's); its calls go to the policy's model all the same. */
        model: z.string().min(1).optional(),
        /** Agent steps; for a harness, its main-loop model calls. */
        step_limit: z.number().int().positive().optional(),
        /** Prompt plus completion tokens of the rollout. */
        token_limit: z.number().int().positive().optional(),
        time_limit_s: z.number().positive().max(MAX_TIMEOUT_S).optional(),
        command_timeout_s: z.number().positive().max(MAX_TIMEOUT_S).optional(),
      })
      .default({ config: 'default', harness: 'winnower' }),
    scoring: z
      .strictObject({
        enabled: z.boolean().default(true),
        template: z.string().optional(),
        budget_tokens: z.number().int().positive().optional(),
      })
      .default({ enabled: true }),
    verify: z
      .strictObject({
        enabled: z.boolean().default(true),
        test_command: z.string().min(1).optional(),
        fail_to_pass: z.array(z.string()).default([]),
        pass_to_pass: z.array(z.string()).default([]),
        test_patch: z.string().optional(),
        timeout_s: z.number().positive().max(MAX_TIMEOUT_S).default(300),
        concurrency: z.number().int().min(1).max(32).default(4),
      })
      .default({ enabled: false, fail_to_pass: [], pass_to_pass: [], timeout_s: 300, concurrency: 4 }),
    stop_rule: StopRule.nullable().default(null),
    strategy: Strategy.optional(),
  })
  .refine((request) => request.repo !== undefined || request.image !== undefined, { message: 'give repo or image', path: ['repo'] })
  .refine((request) => !request.waves || request.waves.reduce((sum, size) => sum + size, 0) === request.n, {
    message: 'wave sizes must add up to n',
    path: ['waves'],
  })
  .refine(
    (request) => !request.verify.enabled || request.verify.test_command !== undefined || request.verify.fail_to_pass.length + request.verify.pass_to_pass.length > 0,
    { message: 'verification needs test_command or fail_to_pass/pass_to_pass', path: ['verify'] },
  );
export type SolveRequest = z.infer<typeof SolveRequest>;
export type SolveRequestInput = z.input<typeof SolveRequest>;
