/** What `winnower solve` does once its flags are parsed; loaded only when it runs (solve.ts registers it). */
import { judgeFromFlags } from './judge-from-flags.js';
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { readPoliciesFile } from './policies-file.js';
import { loadHarnessDefinitions } from '../rollout/harness/harness-definition.js';
import { loadConfig } from '../config.js';
import { ERROR_CATALOG, WinnowerError, wnwError, type ErrorCode } from '../errors.js';
import { importTrajectories } from '../formats/index.js';
import { candidateLabel, formatEvent, renderCandidates, renderChecks, renderOutcome, type JobView } from './job-output.js';
import { checkLocalRepo } from '../server/guards/repo-check.js';
import { SOLVE_EXIT_NONE_USABLE } from './option-values.js';
import { createRuntime } from './runtime.js';
import { isGitUrl } from './sandbox-run.js';
import type { SolveFlags } from './solve.js';
import { flagForField, withFlagName } from './solve-flag-names.js';

/** The wire protocol of a harness definition (undefined for the built-in agent or an unknown name, which /solve then names). */
const harnessProtocol = (name: string): string | undefined => loadHarnessDefinitions().external.get(name)?.protocol;

/**
 * A policy flag's bad value is refused by the config's check (the flags are its overrides): named by
 * the flag (the same table as the body's fields, src/cli/solve-flag-names.ts), not `config field policy.mode`.
 */
function withPolicyFlagNames<T>(flags: SolveFlags, load: () => T): T {
  const given = {
    '--policy-url': flags.policyUrl,
    '--policy-model': flags.policyModel,
    '--policy-key': flags.policyKey,
    '--policy-mode': flags.policyMode,
  };
  try {
    return load();
  } catch (error) {
    const field = WinnowerError.isInstance(error) && error.code === 'WNW_ERR_CFG_INVALID' ? error.details?.field : undefined;
    const flag = typeof field === 'string' && field.startsWith('policy.') ? flagForField(`body.${field}`) : undefined;
    if (!flag || given[flag as keyof typeof given] === undefined) throw error;
    const message = (error as Error).message.replace(`config field ${field}: `, '');
    throw wnwError('WNW_ERR_INPUT_INVALID', `${flag}: ${message}`, { details: { field: flag } });
  }
}

/** The recordings a replay flag names; a file that is not there or not a trajectory is named with the flag. */
async function recordingsOf(flag: string, files: string[]) {
  try {
    return (await importTrajectories(files, { sourceFrom: 'file' })).items;
  } catch (error) {
    if (!WinnowerError.isInstance(error)) throw error;
    throw wnwError(error.code, `${flag}: ${error.message}`, { details: { ...error.details, field: flag }, cause: error });
  }
}

export async function runSolve(flags: SolveFlags, command: Command): Promise<void> {
  const issue = flags.issueFile ? readFileSync(flags.issueFile, 'utf8') : flags.issue;
  // A Harbor task's instruction is the issue (the server refuses both).
  if (!issue && !flags.task)
    throw wnwError('WNW_ERR_INPUT_INVALID', 'give the issue with --issue or --issue-file (or a Harbor task with --task)', {
      details: { field: 'issue' },
    });
  if (flags.rewardThreshold !== undefined && !flags.task)
    throw wnwError('WNW_ERR_INPUT_INVALID', '--reward-threshold grades a Harbor task: give --task', {
      details: { field: '--reward-threshold' },
    });
  const config = withPolicyFlagNames(flags, () =>
    loadConfig({
      file: flags.config,
      overrides: {
        policy: { url: flags.policyUrl, model: flags.policyModel, api_key: flags.policyKey, mode: flags.policyMode },
        log_level: 'warn',
      },
    }),
  );
  const policies = flags.policies ? await readPoliciesFile(flags.policies) : undefined;
  // With --policies, n is their sum: --n goes only when given (then it must equal that sum).
  const n = policies && command.getOptionValueSource('n') === 'default' ? undefined : flags.n;
  const recordings = flags.replay ? await recordingsOf('--replay', flags.replay) : undefined;
  // A Harbor task's tests/test.sh are given tests: --task verifies.
  const givenTests = Boolean(flags.task || flags.testCommand || flags.failToPass?.length || flags.passToPass?.length);
  const verifying = givenTests || Boolean(flags.checks || flags.reproduction);
  // It shapes only the run of the given tests; without them it would be ignored.
  if (flags.harnessCompat && !givenTests) {
    throw wnwError('WNW_ERR_INPUT_INVALID', '--harness-compat needs --test-command or --fail-to-pass/--pass-to-pass', {
      details: { field: '--harness-compat' },
    });
  }
  // Flags that shape something this run does not have would be ignored: refused, naming what they need.
  const pointless: Array<[boolean, string, string]> = [
    [
      Boolean(flags.writerReplay && !flags.reproduction),
      '--writer-replay',
      'it replays the test writers of --reproduction: give --reproduction',
    ],
    [
      Boolean(flags.policyMode && flags.replay),
      '--policy-mode',
      'it shapes the calls to a policy server; --replay replays recordings instead',
    ],
    [Boolean(flags.harnessModel && !flags.harness), '--harness-model', 'it is the model a harness CLI is told: give --harness'],
  ];
  // The judge the flags name (its key from WINNOWER_JUDGE_KEY), else the config's: the request's judge wins (docs/selection.md#judge).
  const judge = judgeFromFlags(flags);
  // What these need is given by other flags: the refusal names them, not the request's fields.
  const setupGiven = Boolean(flags.setup?.length);
  pointless.push(
    [flags.fork === false && !setupGiven, '--no-fork', 'it runs the --setup commands in each sandbox instead of once: give --setup'],
    [flags.forkAt === 'setup' && !setupGiven, '--fork-at', 'setup forks after the --setup commands: give --setup'],
    [
      flags.strategy === 'judge' && !judge && !config.judge,
      '--strategy',
      "strategy judge needs a judge: give --judge-url and --judge-model, or the config's judge (WINNOWER_JUDGE_URL, WINNOWER_JUDGE_MODEL)",
    ],
  );
  for (const [given, flag, why] of pointless)
    if (given) throw wnwError('WNW_ERR_INPUT_INVALID', `${flag}: ${why}`, { details: { field: flag } });
  const writers = flags.writerReplay ? await recordingsOf('--writer-replay', flags.writerReplay) : undefined;
  const checks = {
    ...(flags.regression === false ? { regression: { enabled: false } } : {}),
    ...(flags.poolTests === false ? { pool_tests: { enabled: false } } : {}),
    ...(flags.reproduction
      ? { reproduction: { n: flags.reproduction, ...(writers ? { policy: { kind: 'replay', recordings: writers } } : {}) } }
      : {}),
  };
  const body = {
    instance_id: flags.instanceId,
    ...(issue ? { issue } : {}),
    ...(flags.task ? { harbor_task: resolve(flags.task) } : {}),
    ...(flags.repo
      ? {
          repo: {
            ...(isGitUrl(flags.repo) ? { url: flags.repo } : { path: resolve(flags.repo) }),
            ...(flags.commit ? { commit: flags.commit } : {}),
          },
        }
      : {}),
    ...(flags.image ? { image: flags.image } : {}),
    ...(flags.setup?.length ? { setup: flags.setup } : {}),
    ...(flags.fork === false ? { fork: false } : {}),
    ...(flags.forkAt !== undefined ? { fork: { at: flags.forkAt } } : {}),
    ...(n !== undefined ? { n } : {}),
    ...(policies ? { policies } : {}),
    ...(flags.concurrency ? { concurrency: flags.concurrency } : {}),
    ...(flags.waves ? { waves: flags.waves } : {}),
    ...(recordings ? { policy: { kind: 'replay', recordings } } : {}),
    ...(flags.stepLimit || flags.harness || flags.harnessModel
      ? {
          agent: {
            config: 'default',
            ...(flags.stepLimit ? { step_limit: flags.stepLimit } : {}),
            ...(flags.harness ? { harness: flags.harness } : {}),
            ...(flags.harnessModel ? { model: flags.harnessModel } : {}),
          },
        }
      : {}),
    // A harness that speaks Anthropic Messages gets the policy flags as an Anthropic server.
    ...(!recordings && flags.policyUrl && flags.harness && harnessProtocol(flags.harness) === 'anthropic-messages'
      ? {
          policy: {
            kind: 'anthropic',
            url: flags.policyUrl,
            model: flags.policyModel ?? config.policy.model ?? 'default',
            ...(flags.policyKey ? { api_key: flags.policyKey } : {}),
          },
        }
      : {}),
    verify: verifying
      ? {
          enabled: true,
          test_command: flags.testCommand,
          fail_to_pass: flags.failToPass ?? [],
          pass_to_pass: flags.passToPass ?? [],
          ...(flags.testPatch ? { test_patch: readFileSync(flags.testPatch, 'utf8') } : {}),
          ...(flags.harnessCompat ? { harness_compat: true } : {}),
          ...(flags.rewardThreshold !== undefined ? { reward_threshold: flags.rewardThreshold } : {}),
          ...checks,
        }
      : { enabled: false },
    ...(flags.stopAt !== undefined ? { stop_rule: { min_value: flags.stopAt, require_resolved: verifying } } : {}),
    ...(flags.strategy ? { strategy: flags.strategy } : {}),
    ...(judge ? { judge } : {}),
    ...(flags.retryOf ? { retry_of: flags.retryOf } : {}),
  };

  // A repository that is not there (or lacks the commit) is an error now, before the runtime loads or any rollout starts.
  if (body.repo && 'path' in body.repo && !flags.image) await checkLocalRepo(body.repo, { path: '--repo', commit: '--commit' });
  const runtime = await createRuntime(config, { logger: false, harborHostEnv: true });
  try {
    const posted = await runtime.app.inject({ method: 'POST', url: '/solve', payload: body });
    const answer = posted.json() as { job_id?: string; error?: { code: string; message: string; details?: { field?: string } } };
    if (!answer.job_id) {
      const field = answer.error?.details?.field;
      // The server's own code when it is one of ours (WNW_ERR_HARNESS_MISSING, ...), so the user sees what went wrong.
      const code = answer.error?.code && answer.error.code in ERROR_CATALOG ? (answer.error.code as ErrorCode) : 'WNW_ERR_INPUT_INVALID';
      const named = withFlagName(answer.error?.message ?? `answered ${posted.statusCode}`, field);
      throw wnwError(code, named.message, { details: named.field ? { field: named.field } : {} });
    }
    // The id is what `--retry-of` and `winnower jobs` take: said first, so a run killed midway still named it.
    console.error(`job ${answer.job_id}`);
    const started = Date.now();
    await new Promise<void>((done, fail) => {
      runtime.jobs
        .subscribe(
          answer.job_id!,
          (event) => {
            const line = formatEvent(event.type, event as unknown as Record<string, unknown>);
            if (line) console.error(`${`${((Date.now() - started) / 1000).toFixed(1)}s`.padStart(6)}  ${line}`);
          },
          done,
        )
        .catch(fail);
    });
    const job = (await runtime.app.inject({ method: 'GET', url: `/jobs/${answer.job_id}?trajectories=true` })).json() as JobView;
    if (flags.out) writeFileSync(flags.out, `${JSON.stringify(job, null, 2)}\n`);
    // The API sends a patch that is not UTF-8 as base64 (patch_encoding); the file gets its bytes.
    const chosen = job.result?.chosen;
    if (flags.patchOut && chosen)
      writeFileSync(flags.patchOut, chosen.patch_encoding === 'base64' ? Buffer.from(chosen.patch, 'base64') : chosen.patch);
    const evidence = renderChecks(job, candidateLabel);
    console.log(`\n${renderCandidates(job, 'status', (c) => c.status)}${evidence ? `\n\n${evidence}` : ''}\n\n${renderOutcome(job)}`);
    if (job.status !== 'succeeded') process.exitCode = 1;
    // Ran to its end, but nothing usable to show for it: not the green 0 of a chosen patch.
    else if (job.result?.outcome === 'none-usable') process.exitCode = SOLVE_EXIT_NONE_USABLE;
  } finally {
    await runtime.close();
  }
}
