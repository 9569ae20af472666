/**
 * The body of `POST /solve` (and `winnower solve`), validated by zod. Every object is strict: an
 * unknown key (a typo such as `verfy`) is a 400 naming it, never silently dropped.
 */
import { z } from 'zod';
import { Strategy } from '../types/selection.js';
import { GitRef } from '../types/task.js';
import { PARSER_NAMES } from '../verify/detect.js';
import { PolicyOptions } from '../rollout/policy/policy-options.js';
import { JudgeOptions } from '../judge/judge-options.js';

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

/**
 * Tests from the pool (docs/checks.md#tests-from-the-pool): the test files each candidate adds or
 * changes, validated on the base commit, run against every candidate. `enabled` absent: on when
 * verification runs without given tests (no test_command, fail_to_pass or pass_to_pass).
 */
export const PoolTestOptions = z.strictObject({
  enabled: z.boolean().optional(),
  /** Sandbox time the whole check may spend (base runs and matrix cells); cells past it are `not_run`. */
  budget_s: z.number().positive().max(MAX_TIMEOUT_S).default(1800),
  /** Time limit of one run of one writer's test files. */
  timeout_s: z.number().positive().max(MAX_TIMEOUT_S).default(300),
  /** Writers considered, in candidate order; the rest are listed as not run. */
  max_tests: z.number().int().min(1).max(64).default(16),
});
export type PoolTestOptions = z.infer<typeof PoolTestOptions>;

/** Setup commands a request may give, and the length of one. */
export const MAX_SETUP_COMMANDS = 64;

/**
 * Where the job's rollouts branch from one shared state (docs/solve.md#shared-setup-and-forks):
 * `setup` (after the setup commands, the default with them), `first-edit` or a step number (a
 * prefix of the built-in agent); `false` runs the setup in each sandbox instead.
 */
export const ForkOptions = z.preprocess(
  (value) => (value === false ? { at: 'none' } : value),
  z.strictObject({
    at: z.union([z.enum(['setup', 'first-edit', 'none']), z.number().int().positive()], {
      error: 'one of "setup", "first-edit" or a step number (a positive integer)',
    }),
  }),
);
export type ForkOptions = z.infer<typeof ForkOptions>;

/** The harnesses of a request's policies: fork points other than `setup` need the built-in agent's conversation. */
function checkFork(
  request: {
    setup?: string[];
    setup_timeout_s?: number;
    fork?: ForkOptions;
    harbor_task?: string;
    agent: { harness: string };
    policy?: { kind?: string } | undefined;
    policies?: Array<{ agent?: { harness?: string } }>;
  },
  context: z.RefinementCtx,
): void {
  const hasSetup = request.setup !== undefined;
  if (request.harbor_task !== undefined && hasSetup)
    context.addIssue({ code: 'custom', message: "a Harbor task's environment is its image: give its setup there", path: ['setup'] });
  if (request.setup_timeout_s !== undefined && !hasSetup)
    context.addIssue({ code: 'custom', message: 'setup_timeout_s limits the setup commands: give setup', path: ['setup_timeout_s'] });
  const at = request.fork?.at;
  if (at === undefined) return;
  if (at === 'setup' || at === 'none') {
    if (!hasSetup)
      context.addIssue({
        code: 'custom',
        message:
          at === 'setup' ? 'fork.at "setup" forks after the setup commands: give setup' : 'fork: false says how setup runs: give setup',
        path: at === 'setup' ? ['fork', 'at'] : ['fork'],
      });
    return;
  }
  const harnesses = [request.agent.harness, ...(request.policies ?? []).map((entry) => entry.agent?.harness ?? request.agent.harness)];
  const harness = harnesses.find((name) => name !== 'winnower');
  if (harness !== undefined)
    context.addIssue({
      code: 'custom',
      message: `the harness CLI ${harness} cannot be forked mid-run (its process state is not in a snapshot): only fork.at "setup" applies to harnesses`,
      path: ['fork', 'at'],
    });
  else if (request.policies !== undefined)
    context.addIssue({
      code: 'custom',
      message: `fork.at ${JSON.stringify(at)} shares one policy's prefix: not with policies (a mixed job); use fork.at "setup" or one policy`,
      path: ['fork', 'at'],
    });
  else if (request.policy?.kind === 'replay')
    context.addIssue({
      code: 'custom',
      message: `fork.at ${JSON.stringify(at)} needs a policy that answers the conversation: a replay policy replays its recording from its first turn whatever came before, so the prefix would run twice`,
      path: ['fork', 'at'],
    });
}

/** The most rollouts one job may run, over all its policies. */
export const MAX_N = 64;

const AGENT_CONFIG_NAME = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_-]*$/, 'an agent config name under config/agents, not a path');
const HARNESS_NAME = z.string().regex(/^[a-z0-9][a-z0-9_-]*$/, 'a harness name under config/harnesses (GET /harnesses), not a path');

/** The agent fields, none defaulted: what a `policies` entry may override of the job's `agent`. */
const agentFields = {
  /** A name under config/agents (no paths: a request must not pick files on the host). */
  config: AGENT_CONFIG_NAME.optional(),
  /**
   * Which agent runs each rollout: `winnower` (the built-in bash agent) or a harness under
   * config/harnesses (`pi`, `codex`, `claude-code`, ...; GET /harnesses lists what this server can run).
   */
  harness: HARNESS_NAME.optional(),
  /** The model name a harness is told (default: the policy's); its calls go to the policy's model all the same. */
  model: z.string().min(1).optional(),
  /** Agent steps; for a harness, its main-loop model calls. */
  step_limit: z.number().int().positive().optional(),
  /** Prompt plus completion tokens of the rollout. */
  token_limit: z.number().int().positive().optional(),
  time_limit_s: z.number().positive().max(MAX_TIMEOUT_S).optional(),
  command_timeout_s: z.number().positive().max(MAX_TIMEOUT_S).optional(),
};

export const AgentOptions = z.strictObject({
  ...agentFields,
  config: AGENT_CONFIG_NAME.default('default'),
  harness: HARNESS_NAME.default('winnower'),
});
export type AgentOptions = z.infer<typeof AgentOptions>;

const sumOf = (sizes: readonly number[]): number => sizes.reduce((sum, size) => sum + size, 0);

/**
 * One policy of a mixed job: its own `n` rollouts with its policy (default: the job's `policy`)
 * and agent fields over the job's `agent`. `name` is the run name its candidates carry in their
 * configuration (`config.run`), the key own-history priors are learned per.
 */
export const PolicyEntry = z
  .strictObject({
    n: z.number().int().min(1).max(MAX_N),
    name: z
      .string()
      .min(1)
      .max(256)
      // eslint-disable-next-line no-control-regex
      .regex(/^[^\u0000-\u001f\u007f]*$/, 'a run name may not hold control characters')
      .optional(),
    policy: PolicyOptions.optional(),
    agent: z.strictObject(agentFields).optional(),
    /** Wave sizes summing to this entry's n; one wave by default. Wave k of the job runs wave k of every entry. */
    waves: z.array(z.number().int().positive()).optional(),
  })
  .refine((entry) => !entry.waves || sumOf(entry.waves) === entry.n, {
    message: "wave sizes must add up to this entry's n",
    path: ['waves'],
  });
export type PolicyEntry = z.infer<typeof PolicyEntry>;

/** n, waves and policies agree: one total within MAX_N, waves per entry when there are entries, distinct run names. */
function checkPolicies(request: { n?: number; waves?: number[]; policies?: PolicyEntry[] }, context: z.RefinementCtx): void {
  const { policies } = request;
  if (!policies) {
    const n = request.n ?? 4;
    if (request.waves && sumOf(request.waves) !== n)
      context.addIssue({
        code: 'custom',
        message: `wave sizes must add up to n: ${request.waves.join(' + ')} is ${sumOf(request.waves)}, n is ${n}${request.n === undefined ? ' (the default)' : ''}`,
        path: ['waves'],
      });
    return;
  }
  const total = sumOf(policies.map((entry) => entry.n));
  if (total > MAX_N)
    context.addIssue({
      code: 'custom',
      message: `the policies' n add up to ${total}, more than the ${MAX_N} rollouts a job may run`,
      path: ['policies'],
    });
  if (request.n !== undefined && request.n !== total) {
    context.addIssue({
      code: 'custom',
      message: `n (${request.n}) must equal the sum of policies[].n (${total}), or be left out`,
      path: ['n'],
    });
  }
  if (request.waves)
    context.addIssue({ code: 'custom', message: 'with policies, give waves per policy (policies[i].waves)', path: ['waves'] });
  const seen = new Set<string>();
  policies.forEach((entry, index) => {
    if (entry.name === undefined) return;
    if (seen.has(entry.name))
      context.addIssue({
        code: 'custom',
        message: `run name "${entry.name}" is given twice; each policy's name must be its own`,
        path: ['policies', index, 'name'],
      });
    seen.add(entry.name);
  });
}

/**
 * A job without an instance_id is named after what it works on, so a jobs list does not call them
 * all `task`: the checkout's folder, the URL's owner/name, or the image reference without its registry.
 */
function defaultInstanceId(request: { repo?: { url?: string; path?: string } | undefined; image?: string | undefined }): string {
  const trim = (name: string) => name.replace(/\/+$/, '').replace(/\.git$/, '');
  if (request.repo?.path) return trim(request.repo.path).split('/').at(-1) || 'task';
  if (request.repo?.url) {
    const parts = trim(request.repo.url).split(/[/:]/).filter(Boolean);
    return parts.slice(-2).join('/') || 'task';
  }
  if (request.image) {
    const parts = request.image.split('/');
    return (parts.length > 1 && /[.:]|^localhost$/.test(parts[0]!) ? parts.slice(1) : parts).join('/') || 'task';
  }
  return 'task';
}

/**
 * A Harbor task is verified by its own tests/test.sh and graded by its reward: the request's own
 * test list would be ignored, so it is refused; a reward threshold without a Harbor task means nothing.
 */
function checkHarborFields(
  request: {
    harbor_task?: string;
    verify: {
      test_command?: string;
      fail_to_pass: string[];
      pass_to_pass: string[];
      test_patch?: string;
      parser?: string;
      harness_compat?: boolean;
      reward_threshold?: number;
    };
  },
  context: z.RefinementCtx,
): void {
  const { verify } = request;
  if (request.harbor_task === undefined) {
    if (verify.reward_threshold !== undefined)
      context.addIssue({
        code: 'custom',
        message: 'reward_threshold grades a Harbor task: give harbor_task',
        path: ['verify', 'reward_threshold'],
      });
    return;
  }
  const given = {
    test_command: verify.test_command !== undefined,
    fail_to_pass: verify.fail_to_pass.length > 0,
    pass_to_pass: verify.pass_to_pass.length > 0,
    test_patch: verify.test_patch !== undefined,
    parser: verify.parser !== undefined,
    harness_compat: verify.harness_compat !== undefined,
  };
  for (const [key, present] of Object.entries(given))
    if (present)
      context.addIssue({
        code: 'custom',
        message: "a Harbor task is verified by its tests/test.sh and its reward, not by the request's tests",
        path: ['verify', key],
      });
}

export const SolveRequest = z
  .strictObject({
    /** A name for the task; default: the repository's or image's name (`durations`, `django/django`, `org/task:1`). */
    instance_id: z.string().min(1).max(256).optional(),
    /** The issue text; with `harbor_task`, filled from its instruction.md at submit (giving both is refused). */
    issue: z
      .string({
        error: (issue) =>
          issue.input === undefined
            ? 'give the issue text, or harbor_task: a Harbor task folder whose instruction.md is the issue'
            : undefined,
      })
      .min(1),
    /**
     * A Harbor task folder on the server, within `server.repo_roots` (docs/harbor.md): at submit its
     * instruction becomes `issue`, its name `instance_id`, its image `image` and its limits the
     * agent's and verifier's, each unless the request gives it; its tests/test.sh verifies.
     */
    harbor_task: z.string().min(1).max(4096).optional(),
    repo: z
      .strictObject({
        url: z.string().min(1).optional(),
        path: z.string().min(1).optional(),
        commit: GitRef.optional(),
      })
      .refine((repo) => (repo.url === undefined) !== (repo.path === undefined), { message: 'give exactly one of url or path' })
      .optional(),
    image: z.string().min(1).optional(),
    /**
     * Commands that prepare the environment (install, build), run in order before the agent; a
     * failing one fails the job. Run once and forked from where the provider can fork (`fork`);
     * no candidate's patch holds their outputs (docs/solve.md#shared-setup-and-forks).
     */
    setup: z.array(z.string().min(1).max(100_000)).min(1).max(MAX_SETUP_COMMANDS).optional(),
    /** Time the setup commands may take together (default 1800). */
    setup_timeout_s: z.number().positive().max(MAX_TIMEOUT_S).optional(),
    fork: ForkOptions.optional(),
    /** Rollouts (default 4); with `policies`, the sum of theirs (a given n must equal it). */
    n: z.number().int().min(1).max(MAX_N).optional(),
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
    agent: AgentOptions.default({ config: 'default', harness: 'winnower' }),
    /**
     * Several policies and harnesses in one job (mixed-policy best-of-N): each entry runs its own `n`
     * rollouts; `policy` and `agent` above are every entry's defaults (docs/mixed-policies.md).
     */
    policies: z.array(PolicyEntry).min(1).max(16).optional(),
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
        /** The log parser (docs/verify.md "Choosing a parser"); detected from test_command when absent. */
        parser: z.enum(PARSER_NAMES).optional(),
        /** Put the tests in place as the SWE-bench harness does (docs/verify.md "Two procedures for the test files"). */
        harness_compat: z.boolean().optional(),
        fail_to_pass: z.array(z.string()).default([]),
        pass_to_pass: z.array(z.string()).default([]),
        test_patch: z.string().optional(),
        /** With `harbor_task`: the reward at or above which a candidate is resolved (default 1, docs/harbor.md#verification). */
        reward_threshold: z.number().min(-1e9).max(1e9).optional(),
        timeout_s: z.number().positive().max(MAX_TIMEOUT_S).default(300),
        /** Candidates verified at once; default: the host's cores, within `max_sandboxes` (verification.ts). */
        concurrency: z.number().int().min(1).max(32).optional(),
        regression: RegressionOptions.default({ enabled: true, budget_s: 600 }),
        reproduction: ReproductionOptions.optional(),
        pool_tests: PoolTestOptions.default({ budget_s: 1800, timeout_s: 300, max_tests: 16 }),
      })
      .default({
        enabled: false,
        fail_to_pass: [],
        pass_to_pass: [],
        timeout_s: 300,
        regression: { enabled: true, budget_s: 600 },
        pool_tests: { budget_s: 1800, timeout_s: 300, max_tests: 16 },
      }),
    /** Leave it out for no stop rule (every wave runs); `null` is refused, like every other field's (docs/api.md). */
    stop_rule: StopRule.optional().transform((rule) => rule ?? null),
    strategy: Strategy.optional(),
    /**
     * The pairwise judge (docs/selection.md#judge): breaks `hybrid`'s ties, ranks under `judge`;
     * without a strategy the job selects with `judge` (`hybrid` when it verifies).
     */
    judge: JudgeOptions.optional(),
    /**
     * Retry a finished job with this same request: its finished rollouts are taken as they are
     * (their candidate ids kept), only the others (failed, cancelled, skipped) run again, each with
     * its index and so its seed; every candidate is evaluated and selected anew (docs/solve.md#retrying-what-failed).
     */
    retry_of: z.string().min(1).max(256).optional(),
  })
  .refine((request) => request.repo !== undefined || request.image !== undefined, { message: 'give repo or image', path: ['repo'] })
  .superRefine(checkHarborFields)
  .superRefine(checkPolicies)
  .superRefine(checkFork)
  .refine(
    (request) =>
      !request.verify.enabled ||
      request.verify.test_command !== undefined ||
      request.verify.fail_to_pass.length + request.verify.pass_to_pass.length > 0 ||
      request.harbor_task !== undefined ||
      request.verify.regression.enabled ||
      request.verify.reproduction !== undefined ||
      // Without given tests, pool tests run unless turned off.
      request.verify.pool_tests.enabled !== false,
    { message: 'verification needs test_command, fail_to_pass/pass_to_pass, regression, reproduction or pool_tests', path: ['verify'] },
  )
  // harness_compat shapes only the run of the task's own tests: without them it would be ignored.
  .refine(
    (request) =>
      request.verify.harness_compat === undefined ||
      (request.verify.enabled &&
        (request.verify.test_command !== undefined || request.verify.fail_to_pass.length + request.verify.pass_to_pass.length > 0)),
    { message: 'harness_compat needs verification with test_command or fail_to_pass/pass_to_pass', path: ['verify', 'harness_compat'] },
  )
  // n is the policies' sum when they are given (the one-policy form is the one-entry case), else 4.
  .transform((request) => ({
    ...request,
    instance_id: request.instance_id ?? defaultInstanceId(request),
    n: request.n ?? (request.policies ? sumOf(request.policies.map((entry) => entry.n)) : 4),
  }));
export type SolveRequest = z.infer<typeof SolveRequest>;
export type SolveRequestInput = z.input<typeof SolveRequest>;

/** Whether the tests from the pool run: verification on, and `enabled`, or by default when the request gives no tests. */
export function poolTestsOn(request: Pick<SolveRequest, 'verify' | 'harbor_task'>): boolean {
  const { verify } = request;
  // A Harbor task's tests/test.sh are given tests too (docs/harbor.md).
  const given =
    request.harbor_task !== undefined || verify.test_command !== undefined || verify.fail_to_pass.length + verify.pass_to_pass.length > 0;
  return verify.enabled && (verify.pool_tests.enabled ?? !given);
}
