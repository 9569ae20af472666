/**
 * `winnower solve`: one best-of-N job from the command line, without running a server — the same
 * validated request and pipeline as `POST /solve`, with progress on stderr and the result in files.
 */
import { addJudgeOptions, type JudgeFlags } from './judge-flags.js';
import { type Command, Option } from 'commander';
import { SOLVE_EXIT_NONE_USABLE } from './option-values.js';
import { forkPoint, nonNegativeNumber, positiveInt, positiveIntList, unitValue } from './parse-options.js';

const collect = (value: string, previous: string[] = []) => [...previous, value];

export interface SolveFlags extends JudgeFlags {
  config?: string;
  repo?: string;
  commit?: string;
  image?: string;
  issue?: string;
  issueFile?: string;
  task?: string;
  rewardThreshold?: number;
  instanceId?: string;
  n: number;
  concurrency?: number;
  waves?: number[];
  policyUrl?: string;
  policyModel?: string;
  policyKey?: string;
  policyMode?: 'tools' | 'text';
  replay?: string[];
  policies?: string;
  setup?: string[];
  /** False with --no-fork. */
  fork?: boolean;
  forkAt?: 'setup' | 'first-edit' | number;
  testCommand?: string;
  failToPass?: string[];
  passToPass?: string[];
  testPatch?: string;
  harnessCompat?: boolean;
  checks?: boolean;
  /** False with --no-regression. */
  regression?: boolean;
  /** False with --no-pool-tests. */
  poolTests?: boolean;
  reproduction?: number;
  writerReplay?: string[];
  stopAt?: number;
  strategy?: string;
  stepLimit?: number;
  harness?: string;
  harnessModel?: string;
  out?: string;
  patchOut?: string;
  retryOf?: string;
}

export function registerSolveCommand(program: Command): void {
  const solve = program
    .command('solve')
    .description('run one best-of-N job (rollouts, scoring, tests, selection) without a server')
    .option('-c, --config <file>', 'YAML or JSON config file (also WINNOWER_CONFIG)')
    .option('--repo <path|url>', 'repository: a local checkout or a git URL')
    .option('--commit <rev>', 'base commit (default: HEAD)')
    .option(
      '--image <image>',
      'container image holding the repository: name:tag, name@digest, docker://…; on the local provider also oci:<dir>:<tag>, docker-archive:<file>',
    )
    .option('--issue <text>', 'the issue text')
    .option('--issue-file <file>', 'read the issue text from a file')
    .option(
      '--task <folder>',
      'a Harbor task folder (docs/harbor.md): its instruction is the issue, its tests/test.sh verifies and its reward decides; its docker_image is the image unless --image or --repo replaces the environment',
    )
    .option(
      '--reward-threshold <reward>',
      'with --task: the reward at or above which a candidate is resolved (default 1)',
      nonNegativeNumber,
    )
    .option('--instance-id <id>', "a name for the task (default: the repository's or image's name)")
    .option('--n <n>', 'rollouts', positiveInt, 4)
    .option('--concurrency <n>', 'rollouts running at once', positiveInt)
    .option('--waves <sizes>', 'wave sizes adding up to n, e.g. 2,2', positiveIntList)
    .option('--policy-url <url>', 'OpenAI-compatible policy server (also WINNOWER_POLICY_URL)')
    .option('--policy-model <name>', 'policy model name (also WINNOWER_POLICY_MODEL)')
    .option('--policy-key <key>', 'policy API key (also WINNOWER_POLICY_KEY)')
    .option('--policy-mode <mode>', 'tools (function calling) or text (fenced bash blocks)')
    // Several files per flag: an unquoted glob (`--replay recs/*.json`) reaches us as the files the shell expanded it to.
    .option(
      '--replay <files...>',
      'replay recorded trajectories instead of a policy (files, folders or globs, several or the flag repeated; any importable format)',
    )
    .option(
      '--policies <file>',
      "a mixed-policy job: a YAML or JSON list of policies, each {n, name?, policy?, agent?, waves?} as in the /solve body (or replay: <files> for recordings); n is their sum (a given --n must equal it), and the policy and agent flags are every entry's defaults",
    )
    .option(
      '--setup <cmd>',
      'a command that prepares the environment before the agent (repeatable, run in order); run once and forked from where the sandbox provider can fork; no patch holds its outputs',
      collect,
    )
    .option('--no-fork', 'run the --setup commands in each sandbox instead of once and forked')
    .addOption(
      new Option(
        '--fork-at <point>',
        'where the rollouts branch: setup (after --setup, the default with it), first-edit or a step number (one prefix rollout of the built-in agent, every rollout forked from it; docs/solve.md#shared-setup-and-forks)',
      )
        .argParser(forkPoint)
        .conflicts('fork'),
    )
    .option('--test-command <cmd>', 'verify candidates with this command (its exit code, or the named tests)')
    .option('--fail-to-pass <id>', 'a test that must go from failing to passing (repeatable)', collect)
    .option('--pass-to-pass <id>', 'a test that must keep passing (repeatable)', collect)
    .option('--test-patch <file>', 'a diff adding the tests, applied before running them')
    .option(
      '--harness-compat',
      "put the tests in place as the SWE-bench harness does: one git checkout of the test patch's existing files, and a test patch that does not apply does not stop the run (with --test-command or --fail-to-pass/--pass-to-pass)",
    )
    .option(
      '--checks',
      "verify without a test list: the regression check (the repository's own tests on the base commit and with each candidate) and the tests from the pool (the test files the candidates write, run against every candidate)",
    )
    .option('--no-regression', 'skip the regression check')
    .option('--no-pool-tests', 'skip the tests from the pool (the test files the candidates write, run against every candidate)')
    .option(
      '--reproduction <n>',
      'n test-writer rollouts by the same policy write reproduction tests; every candidate runs every valid one (implies --checks)',
      positiveInt,
    )
    .option('--writer-replay <files...>', 'replay these recorded test writers instead of calling the policy for them (with --reproduction)')
    .option(
      '--stop-at <value>',
      'stop once a candidate passes its tests with at least this value, 0 to 1 (never on one whose other tests failed, nor on a patch that did not apply)',
      unitValue,
    )
    .option(
      '--strategy <name>',
      "value | consensus | hybrid | learned | robust (default: hybrid with tests; without, the model folder's default_strategy when it has a selector (robust for the bundled models/winnower-value), else value; with --policies, robust when the folder's own-history priors know one of their configurations); or judge, with --judge-url/--judge-model or the config's judge (WINNOWER_JUDGE_URL, WINNOWER_JUDGE_MODEL)",
    );
  addJudgeOptions(solve);
  solve
    .option('--step-limit <n>', 'agent steps per rollout (a harness: its model calls)', positiveInt)
    .option(
      '--harness <name>',
      'the agent of each rollout: winnower (built-in, default) or a harness CLI such as pi, codex, claude-code (winnower harness list)',
    )
    .option('--harness-model <name>', 'the model name the harness is told (default: the policy model)')
    .option('--out <file>', 'write the whole job (every candidate and trajectory) as JSON')
    .option('--patch-out <file>', 'write the chosen patch')
    .option(
      '--retry-of <job>',
      'retry that job of the job store (server.data_dir) with the same flags: only its rollouts that did not finish run again, each with its seed',
    )
    .addHelpText(
      'after',
      `\nExit status: 0 a patch was chosen; 1 the job failed or was cancelled; 2 a request or setting it cannot run (the field is named);\n` +
        `${SOLVE_EXIT_NONE_USABLE} the job ran but chose nothing: no candidate had a usable patch (each empty, unparseable, refused by the patch rules or not applying).`,
    )
    .action(async (flags: SolveFlags, command: Command) => (await import('./solve-action.js')).runSolve(flags, command));
}
