/**
 * `winnower solve`: one best-of-N job from the command line, without running a server — the same
 * validated request and pipeline as `POST /solve`, with progress on stderr and the result in files.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { readPoliciesFile } from './policies-file.js';
import { loadHarnessDefinitions } from '../harness/harness-definition.js';
import { loadConfig } from '../config.js';
import { ERROR_CATALOG, wnwError, type ErrorCode } from '../errors.js';
import { importTrajectories } from '../rerank/importers/index.js';
import { formatEvent, renderCandidates, renderChecks, renderOutcome, type JobView } from './job-output.js';
import { positiveInt, positiveNumber } from './parse-options.js';
import { checkLocalRepo } from '../server/repo-check.js';
import { createRuntime } from './runtime.js';
import { isGitUrl } from './sandbox-run.js';

const collect = (value: string, previous: string[] = []) => [...previous, value];

/** The wire protocol of a harness definition (undefined for the built-in agent or an unknown name, which /solve then names). */
const harnessProtocol = (name: string): string | undefined => loadHarnessDefinitions().external.get(name)?.protocol;

interface SolveFlags {
  config?: string;
  repo?: string;
  commit?: string;
  image?: string;
  issue?: string;
  issueFile?: string;
  instanceId?: string;
  n: number;
  concurrency?: number;
  waves?: string;
  policyUrl?: string;
  policyModel?: string;
  policyKey?: string;
  policyMode?: 'tools' | 'text';
  replay?: string[];
  policies?: string;
  testCommand?: string;
  failToPass?: string[];
  passToPass?: string[];
  testPatch?: string;
  checks?: boolean;
  /** False with --no-regression. */
  regression?: boolean;
  reproduction?: number;
  writerReplay?: string[];
  stopAt?: number;
  strategy?: string;
  stepLimit?: number;
  harness?: string;
  harnessModel?: string;
  out?: string;
  patchOut?: string;
}

export function registerSolveCommand(program: Command): void {
  program
    .command('solve')
    .description('run one best-of-N job (rollouts, scoring, tests, selection) without a server')
    .option('-c, --config <file>', 'YAML or JSON config file (also WINNOWER_CONFIG)')
    .option('--repo <path|url>', 'repository: a local checkout or a git URL')
    .option('--commit <rev>', 'base commit (default: HEAD)')
    .option('--image <image>', 'container image holding the repository: name:tag, name@digest, docker://…; on the local provider also oci:<dir>:<tag>, docker-archive:<file>')
    .option('--issue <text>', 'the issue text')
    .option('--issue-file <file>', 'read the issue text from a file')
    .option('--instance-id <id>', 'a name for the task', 'task')
    .option('--n <n>', 'rollouts', positiveInt, 4)
    .option('--concurrency <n>', 'rollouts running at once', positiveInt)
    .option('--waves <sizes>', 'wave sizes adding up to n, e.g. 2,2')
    .option('--policy-url <url>', 'OpenAI-compatible policy server (also WINNOWER_POLICY_URL)')
    .option('--policy-model <name>', 'policy model name (also WINNOWER_POLICY_MODEL)')
    .option('--policy-key <key>', 'policy API key (also WINNOWER_POLICY_KEY)')
    .option('--policy-mode <mode>', 'tools (function calling) or text (fenced bash blocks)')
    // Several files per flag: an unquoted glob (`--replay recs/*.json`) reaches us as the files the shell expanded it to.
    .option('--replay <files...>', 'replay recorded trajectories instead of a policy (files, folders or globs, several or the flag repeated; any importable format)')
    .option('--policies <file>', 'a mixed-policy job: a YAML or JSON list of policies, each {n, name?, policy?, agent?, waves?} as in the /solve body (or replay: <files> for recordings); n is their sum (a given --n must equal it), and the policy and agent flags are every entry\'s defaults')
    .option('--test-command <cmd>', 'verify candidates with this command (its exit code, or the named tests)')
    .option('--fail-to-pass <id>', 'a test that must go from failing to passing (repeatable)', collect)
    .option('--pass-to-pass <id>', 'a test that must keep passing (repeatable)', collect)
    .option('--test-patch <file>', 'a diff adding the tests, applied before running them')
    .option('--checks', 'verify without a test list: the regression check (the repository\'s own tests on the base commit and with each candidate)')
    .option('--no-regression', 'skip the regression check')
    .option('--reproduction <n>', 'n test-writer rollouts by the same policy write reproduction tests; every candidate runs every valid one (implies --checks)', positiveInt)
    .option('--writer-replay <files...>', 'replay these recorded test writers instead of calling the policy for them (with --reproduction)')
    .option('--stop-at <value>', 'stop once a candidate passes its tests with at least this value (never on one whose other tests failed, nor on a patch that did not apply)', positiveNumber)
    .option('--strategy <name>', "value | consensus | hybrid | learned | robust (default: hybrid with tests; without, the model folder's default_strategy when it has a selector (robust for the bundled models/winnower-value), else value; with --policies, robust when the folder's own-history priors know one of their configurations)")
    .option('--step-limit <n>', 'agent steps per rollout (a harness: its model calls)', positiveInt)
    .option('--harness <name>', 'the agent of each rollout: winnower (built-in, default) or a harness CLI such as pi, codex, claude-code (winnower harness list)')
    .option('--harness-model <name>', 'the model name the harness is told (default: the policy model)')
    .option('--out <file>', 'write the whole job (every candidate and trajectory) as JSON')
    .option('--patch-out <file>', 'write the chosen patch')
    .action(async (flags: SolveFlags, command: Command) => {
      const issue = flags.issueFile ? readFileSync(flags.issueFile, 'utf8') : flags.issue;
      if (!issue) throw wnwError('WNW_ERR_INPUT_INVALID', 'give the issue with --issue or --issue-file', { details: { field: 'issue' } });
      const config = loadConfig({
        file: flags.config,
        overrides: { policy: { url: flags.policyUrl, model: flags.policyModel, api_key: flags.policyKey, mode: flags.policyMode }, log_level: 'warn' },
      });
      const policies = flags.policies ? await readPoliciesFile(flags.policies) : undefined;
      // With --policies, n is their sum: --n goes only when given (then it must equal that sum).
      const n = policies && command.getOptionValueSource('n') === 'default' ? undefined : flags.n;
      const recordings = flags.replay ? (await importTrajectories(flags.replay, { sourceFrom: 'file' })).items : undefined;
      const givenTests = Boolean(flags.testCommand || flags.failToPass?.length || flags.passToPass?.length);
      const verifying = givenTests || Boolean(flags.checks || flags.reproduction);
      const writers = flags.writerReplay ? (await importTrajectories(flags.writerReplay, { sourceFrom: 'file' })).items : undefined;
      const checks = {
        ...(flags.regression === false ? { regression: { enabled: false } } : {}),
        ...(flags.reproduction ? { reproduction: { n: flags.reproduction, ...(writers ? { policy: { kind: 'replay', recordings: writers } } : {}) } } : {}),
      };
      const body = {
        instance_id: flags.instanceId,
        issue,
        ...(flags.repo ? { repo: { ...(isGitUrl(flags.repo) ? { url: flags.repo } : { path: resolve(flags.repo) }), ...(flags.commit ? { commit: flags.commit } : {}) } } : {}),
        ...(flags.image ? { image: flags.image } : {}),
        ...(n !== undefined ? { n } : {}),
        ...(policies ? { policies } : {}),
        ...(flags.concurrency ? { concurrency: flags.concurrency } : {}),
        ...(flags.waves ? { waves: flags.waves.split(',').map(Number) } : {}),
        ...(recordings ? { policy: { kind: 'replay', recordings } } : {}),
        ...(flags.stepLimit || flags.harness || flags.harnessModel
          ? { agent: { config: 'default', ...(flags.stepLimit ? { step_limit: flags.stepLimit } : {}), ...(flags.harness ? { harness: flags.harness } : {}), ...(flags.harnessModel ? { model: flags.harnessModel } : {}) } }
          : {}),
        // A harness that speaks Anthropic Messages gets the policy flags as an Anthropic server.
        ...(!recordings && flags.policyUrl && flags.harness && harnessProtocol(flags.harness) === 'anthropic-messages'
          ? { policy: { kind: 'anthropic', url: flags.policyUrl, model: flags.policyModel ?? config.policy.model ?? 'default', ...(flags.policyKey ? { api_key: flags.policyKey } : {}) } }
          : {}),
        verify: verifying
          ? {
              enabled: true,
              test_command: flags.testCommand,
              fail_to_pass: flags.failToPass ?? [],
              pass_to_pass: flags.passToPass ?? [],
              ...(flags.testPatch ? { test_patch: readFileSync(flags.testPatch, 'utf8') } : {}),
              ...checks,
            }
          : { enabled: false },
        ...(flags.stopAt !== undefined ? { stop_rule: { min_value: flags.stopAt, require_resolved: verifying } } : {}),
        ...(flags.strategy ? { strategy: flags.strategy } : {}),
      };

      // A repository that is not there (or lacks the commit) is an error now, before the runtime loads or any rollout starts.
      if (body.repo && 'path' in body.repo && !flags.image) await checkLocalRepo(body.repo, { path: '--repo', commit: '--commit' });
      const runtime = await createRuntime(config, { logger: false });
      try {
        const posted = await runtime.app.inject({ method: 'POST', url: '/solve', payload: body });
        const answer = posted.json() as { job_id?: string; error?: { code: string; message: string; details?: { field?: string } } };
        if (!answer.job_id) {
          const field = answer.error?.details?.field;
          // The server's own code when it is one of ours (WNW_ERR_HARNESS_MISSING, ...), so the user sees what went wrong.
          const code = answer.error?.code && answer.error.code in ERROR_CATALOG ? (answer.error.code as ErrorCode) : 'WNW_ERR_INPUT_INVALID';
          throw wnwError(code, `${answer.error?.message ?? `answered ${posted.statusCode}`}`, { details: field ? { field } : {} });
        }
        const started = Date.now();
        await new Promise<void>((done) => {
          runtime.jobs.subscribe(
            answer.job_id!,
            (event) => {
              const line = formatEvent(event.type, event as unknown as Record<string, unknown>);
              if (line) console.error(`${`${((Date.now() - started) / 1000).toFixed(1)}s`.padStart(6)}  ${line}`);
            },
            done,
          );
        });
        const job = (await runtime.app.inject({ method: 'GET', url: `/jobs/${answer.job_id}?trajectories=true` })).json() as JobView;
        if (flags.out) writeFileSync(flags.out, `${JSON.stringify(job, null, 2)}\n`);
        // The API sends a patch that is not UTF-8 as base64 (patch_encoding); the file gets its bytes.
        const chosen = job.result?.chosen;
        if (flags.patchOut && chosen) writeFileSync(flags.patchOut, chosen.patch_encoding === 'base64' ? Buffer.from(chosen.patch, 'base64') : chosen.patch);
        const evidence = renderChecks(job, (c) => c.status);
        console.log(`\n${renderCandidates(job, 'status', (c) => c.status)}${evidence ? `\n\n${evidence}` : ''}\n\n${renderOutcome(job)}`);
        if (job.status !== 'succeeded') process.exitCode = 1;
      } finally {
        await runtime.close();
      }
    });
}
