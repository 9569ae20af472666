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
  /** ...and passes every valid reproduction test and breaks no test that passed on base (when those checks run). */
  require_checks: z.boolean().default(false),
});
export type StopRule = z.infer<typeof StopRule>;

/**
 * The regression check: the repository's own tests on the base commit (twice: flaky tests are
 * ignored) and with each candidate; tests that passed on base and fail with a candidate are its
 * regressions. Needs no test list; runs when verification is on and a test suite is found.
 */
export const RegressionOptions = z.strictObject({
  enabled: z.boolean().default(true),
  /** The suite's command when the per-language detection would not find it (e.g. `make check`). */
  test_command: z.string().min(1).optional(),
  /** Time for one run of the whole suite; when the base run does not fit, only the tests related to each patch run. */
  budget_s: z.number().positive().max(MAX_TIMEOUT_S).default(600),
});
export type RegressionOptions = z.infer<typeof RegressionOptions>;

/**
 * Reproduction tests: `n` test-writer rollouts by the job's policy (or `policy`), each writing one
 * new test file that must fail on the base commit; every candidate runs every valid test (the
 * pass matrix).
 */
export const ReproductionOptions = z.strictObject({
  n: z.number().int().min(1).max(16).default(3),
  /** The built-in agent's config for the writers (config/agents; default `test-writer`). */
  agent: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9_-]*$/, 'an agent config name under config/agents, not a path')
    .default('test-writer'),
  /** A harness CLI for the writers instead (default: the job's `agent.harness`). */
  harness: z
    .string()
    .regex(/^[a-z0-9][a-z0-9_-]*$/, 'a harness name under config/harnesses (GET /harnesses), not a path')
    .optional(),
  /** The writers' policy (default: the job's). */
  policy: PolicyOptions.optional(),
  /** Time limit of one test writer. */
  budget_s: z.number().positive().max(MAX_TIMEOUT_S).default(300),
  /** Agent steps of one test writer (default: the agent config's). */
  step_limit: z.number().int().positive().optional(),
  /** Time limit of one run of one generated test. */
  timeout_s: z.number().positive().max(MAX_TIMEOUT_S).default(120),
});
export type ReproductionOptions = z.infer<typeof ReproductionOptions>;

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
        regression: RegressionOptions.default({ enabled: true, budget_s: 600 }),
        reproduction: ReproductionOptions.optional(),
      })
      .default({ enabled: false, fail_to_pass: [], pass_to_pass: [], timeout_s: 300, concurrency: 4, regression: { enabled: true, budget_s: 600 } }),
    stop_rule: StopRule.nullable().default(null),
    strategy: Strategy.optional(),
  })
  .refine((request) => request.repo !== undefined || request.image !== undefined, { message: 'give repo or image', path: ['repo'] })
  .refine((request) => !request.waves || request.waves.reduce((sum, size) => sum + size, 0) === request.n, {
    message: 'wave sizes must add up to n',
    path: ['waves'],
  })
  .refine(
    (request) =>
      !request.verify.enabled ||
      request.verify.test_command !== undefined ||
      request.verify.fail_to_pass.length + request.verify.pass_to_pass.length > 0 ||
      request.verify.regression.enabled ||
      request.verify.reproduction !== undefined,
    { message: 'verification needs test_command, fail_to_pass/pass_to_pass, regression or reproduction', path: ['verify'] },
  );
export type SolveRequest = z.infer<typeof SolveRequest>;
export type SolveRequestInput = z.input<typeof SolveRequest>;
