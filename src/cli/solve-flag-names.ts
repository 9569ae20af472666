/**
 * `winnower solve` builds a /solve body from its flags, so the server's errors name body fields
 * (`body.waves`); the user typed flags. The longest body path that a flag sets names that flag.
 */
const FLAGS: ReadonlyArray<readonly [string, string]> = [
  ['body.instance_id', '--instance-id'],
  ['body.issue', '--issue'],
  ['body.harbor_task', '--task'],
  ['body.repo.commit', '--commit'],
  ['body.repo', '--repo'],
  ['body.image', '--image'],
  ['body.setup', '--setup'],
  ['body.fork.at', '--fork-at'],
  ['body.fork', '--no-fork'],
  ['body.n', '--n'],
  ['body.policies', '--policies'],
  ['body.concurrency', '--concurrency'],
  ['body.waves', '--waves'],
  ['body.policy.recordings', '--replay'],
  ['body.policy.url', '--policy-url'],
  ['body.policy.model', '--policy-model'],
  ['body.policy.api_key', '--policy-key'],
  ['body.policy.mode', '--policy-mode'],
  ['body.agent.step_limit', '--step-limit'],
  ['body.agent.harness', '--harness'],
  ['body.agent.model', '--harness-model'],
  ['body.verify.test_command', '--test-command'],
  ['body.verify.fail_to_pass', '--fail-to-pass'],
  ['body.verify.pass_to_pass', '--pass-to-pass'],
  ['body.verify.test_patch', '--test-patch'],
  ['body.verify.harness_compat', '--harness-compat'],
  ['body.verify.reward_threshold', '--reward-threshold'],
  ['body.verify.reproduction.policy', '--writer-replay'],
  ['body.verify.reproduction', '--reproduction'],
  ['body.verify.regression', '--no-regression'],
  ['body.verify.pool_tests', '--no-pool-tests'],
  ['body.stop_rule', '--stop-at'],
  ['body.strategy', '--strategy'],
  ['body.judge.url', '--judge-url'],
  ['body.judge.model', '--judge-model'],
  ['body.judge.k', '--judge-k'],
  ['body.judge.timeout_s', '--judge-timeout'],
  ['body.retry_of', '--retry-of'],
];

const within = (field: string, path: string): boolean => field === path || field.startsWith(`${path}.`);

/** The longest body path a flag sets that holds `field`, with that flag. */
function entryFor(field: string): readonly [string, string] | undefined {
  let best: readonly [string, string] | undefined;
  for (const entry of FLAGS) if (within(field, entry[0]) && (!best || entry[0].length > best[0].length)) best = entry;
  return best;
}

/** The flag that set `field` (a /solve body path), or undefined when no flag sets it. */
export const flagForField = (field: string): string | undefined => entryFor(field)?.[1];

/**
 * The server's message named by the flag: `body.waves: wave sizes must add up to n` →
 * `--waves: wave sizes must add up to n`; a path below the flag's is kept
 * (`--policies: body.policies.1.n: …`).
 */
export function withFlagName(message: string, field: string | undefined): { message: string; field: string | undefined } {
  const entry = field === undefined ? undefined : entryFor(field);
  if (!entry) return { message, field };
  const [path, flag] = entry;
  const rest = path === field && message.startsWith(`${field}: `) ? message.slice(field.length + 2) : message;
  return { message: `${flag}: ${rest}`, field: flag };
}
