/** `winnower rerank`: N candidate files per SWE-bench instance → one predictions file, scores and a report. */
import { addJudgeOptions, type JudgeFlags } from './judge-flags.js';
import { type Command, Option } from 'commander';
import type { Strategy } from '../types/selection.js';
import { positiveInt } from './parse-options.js';
import { RERANK_EXIT_UNSCORED as EXIT_UNSCORED, SANDBOX_PROVIDER_NAMES as SANDBOX_PROVIDERS, STRATEGY_NAMES } from './option-values.js';
import { PARSER_NAMES } from '../verify/parser-names.js';

const collect = (value: string, previous: string[] = []) => [...previous, value];

export interface RerankFlags extends JudgeFlags {
  candidates: string[];
  tasks?: string[];
  labels?: string[];
  format?: string;
  sourceFrom?: 'record' | 'file';
  scorer: 'onnx' | 'sglang' | 'vllm' | 'openai';
  model?: string;
  url?: string[];
  tokenizer?: string;
  chatTemplate?: string;
  headLabels?: string;
  labelIndex?: number;
  activation?: 'sigmoid' | 'softmax' | 'auto';
  apiKey?: string;
  template?: string;
  budget?: number;
  strategy?: Strategy;
  out: string;
  scores?: string;
  summary?: string;
  report?: string;
  skipInvalid?: boolean;
  strict?: boolean;
  concurrency: number;
  progress: boolean;
  inspector: boolean;
  crossFit?: number;
  sources?: string[];
  verify?: boolean;
  repos?: string;
  checks?: boolean;
  givenTests: boolean;
  poolTests: boolean;
  regression: boolean;
  poolTestsBudget: number;
  checksOut?: string;
  provider?: string;
  config?: string;
  sandboxes: number;
  verifyTimeout: number;
  regressionBudget: number;
  verifyParser?: string;
  harnessCompat?: boolean;
  recipes?: string;
}

/** The flags that mean something only with --verify, by their option key (refused by name without it, and with --cross-fit). */
export const VERIFY_ONLY_FLAGS: Record<string, string> = {
  repos: '--repos',
  checks: '--checks',
  givenTests: '--no-given-tests',
  poolTests: '--no-pool-tests',
  regression: '--no-regression',
  poolTestsBudget: '--pool-tests-budget',
  checksOut: '--checks-out',
  provider: '--provider',
  config: '--config',
  sandboxes: '--sandboxes',
  verifyTimeout: '--verify-timeout',
  regressionBudget: '--regression-budget',
  verifyParser: '--verify-parser',
  harnessCompat: '--harness-compat',
  recipes: '--recipes',
};

export function registerRerankCommand(program: Command): void {
  const rerank = program
    .command('rerank')
    .description('pick the best of N candidates per SWE-bench instance and report how good the pick was')
    // Several paths per flag: an unquoted glob reaches us as the files the shell expanded it to.
    .requiredOption(
      '--candidates <paths...>',
      'candidate files, folders or globs (several, or the flag repeated): SWE-bench predictions or trajectories',
    )
    .option('--tasks <paths...>', 'SWE-bench task records, JSONL or JSON array (several, or the flag repeated)')
    .option(
      '--labels <paths...>',
      'labels: SWE-bench results.json or JSONL of {instance_id, source, resolved} (several, or the flag repeated)',
    )
    .option('--format <name>', 'force the candidate format instead of detecting it')
    .addOption(
      new Option(
        '--source-from <how>',
        'name each candidate source after the record or the file (default: file when the candidates are several files)',
      ).choices(['record', 'file']),
    )
    .addOption(new Option('--scorer <backend>', 'value model backend').choices(['onnx', 'sglang', 'vllm', 'openai']).default('onnx'))
    .option(
      '--model <folder|name>',
      'model folder (onnx) or served model name; default (onnx): the bundled trained model, models/winnower-value',
    )
    .option('--url <base>', 'scoring server base URL (repeatable: load is spread over them)', collect)
    .option('--tokenizer <path>', 'tokenizer.json (or folder) for server backends, to count the budget client-side')
    .option(
      '--chat-template <path>',
      "the model's chat template for chat templates (openhands-critic-v1): a tokenizer_config.json, chat_template.jinja or their folder (default: the --tokenizer folder's)",
    )
    .option(
      '--head-labels <table|names>',
      'a multi-label head: a known label table (openhands-critic) or its label names, comma-separated, in output order (default: the head --template implies; openhands-critic-v1 implies openhands-critic, success index 0)',
    )
    .option('--label-index <n>', 'output of the multi-label head read as success (default 0)', (value: string) =>
      Number.parseInt(value, 10),
    )
    .addOption(
      new Option('--activation <name>', "multi-label head activation (default auto: the model's problem_type, else the table's)").choices([
        'sigmoid',
        'softmax',
        'auto',
      ]),
    )
    .option('--api-key <key>', 'API key of the scoring server (also WINNOWER_SCORER_KEY)')
    .option(
      '--template <name>',
      'serialization template (judge-v1, patch-v1, openhands-critic-v1, ...); openhands-critic-v1 also sets the head (--head-labels openhands-critic, --label-index 0) unless given',
    )
    .option(
      '--budget <tokens>',
      "token budget per input, also the scorer's input limit (default: the model limit; refused when the server's max_model_len or the onnx model's limit is below it)",
      positiveInt,
    )
    .addOption(
      new Option(
        '--strategy <name>',
        "selection strategy (default: the model folder's default_strategy, learned or robust, when it has a selector; else value)",
      ).choices(STRATEGY_NAMES),
    );
  addJudgeOptions(rerank);
  rerank
    .option('--out <file>', 'predictions JSONL to write (rerunning with the same file resumes)', 'predictions.jsonl')
    .option('--scores <file>', "every candidate's score and what was cut (default: beside --out)")
    .option(
      '--summary <file>',
      'summary JSON: which model and selector scored the run (scored_by: name, folder, sha256 of the model files and of selector.json, strategy), the outputs and the metrics (default: beside --out, <out>.summary.json)',
    )
    .option(
      '--report <file>',
      "Markdown report; the HTML twin is written beside it, and the web inspector's pages for the run in <report>.inspect/ (winnower inspect)",
    )
    .option('--skip-invalid', 'report malformed input records and go on instead of stopping')
    .option('--strict', 'stop, instead of warning, when candidates have no task record in --tasks')
    .option('--concurrency <n>', 'instances scored at once', positiveInt, 4)
    .option('--no-progress', 'no progress bar and no progress lines')
    .option('--no-inspector', "with --report: don't write the inspector's pages beside it (they re-read the candidate files)")
    .option(
      '--cross-fit <k>',
      "with labels: what training on your own runs gives: learn per-configuration priors (and trajectory weights, when candidates carry trajectories) on K-1 instance folds, rank the K-th with them, for each fold; writes the out-of-fold pick per instance to --out, each candidate's out-of-fold rank to --scores and the table (trivial selectors beside it) to stdout and --report (Markdown)",
      positiveInt,
    )
    .option(
      '--sources <names>',
      'with --cross-fit: only these runs or source families (comma-separated, e.g. acr,swe-agent-gpt4)',
      (value: string, previous: string[] = []) => [
        ...previous,
        ...value
          .split(',')
          .map((name) => name.trim())
          .filter(Boolean),
      ],
    )
    .option(
      '--verify',
      "run the code: check out each instance's repository at its base commit in sandboxes and grade every candidate with the task's tests (FAIL_TO_PASS, PASS_TO_PASS, test_patch); without them, the regression check (docs/rerank.md)",
    )
    .option(
      '--repos <folder>',
      'with --verify: the git repositories, one per SWE-bench repository (owner__name.git, owner__name, ...; bare or not)',
    )
    .option('--checks', 'with --verify: the regression check too, for instances that have given tests')
    .option(
      '--no-given-tests',
      'with --verify: ignore FAIL_TO_PASS, PASS_TO_PASS and test_patch (selection as a user without tests has it)',
    )
    .option(
      '--no-regression',
      "with --verify: without the regression check (the repository's own tests on the base commit and with each candidate; docs/checks.md)",
    )
    .option(
      '--no-pool-tests',
      'with --verify: without the tests from the pool (the test files the candidates add or change, run against every candidate; docs/checks.md)',
    )
    .option(
      '--pool-tests-budget <s>',
      'with --verify: sandbox time the tests from the pool may spend per instance, seconds',
      positiveInt,
      1800,
    )
    .option('--checks-out <file>', 'with --verify: one line per instance of what running its code found (default: beside --out)')
    .addOption(
      new Option('--provider <name>', 'with --verify: sandbox provider (default: config or WINNOWER_SANDBOX, else local)').choices([
        ...SANDBOX_PROVIDERS,
      ]),
    )
    .option('-c, --config <file>', 'with --verify: config file for the sandbox provider (also WINNOWER_CONFIG)')
    .option('--sandboxes <n>', 'with --verify: sandboxes open at once for one instance', positiveInt, 4)
    .option('--verify-timeout <s>', 'with --verify: time limit of one test run, seconds', positiveInt, 1800)
    .option(
      '--regression-budget <s>',
      'with --verify: time one run of the whole suite may take before the regression check runs only related tests',
      positiveInt,
      600,
    )
    .addOption(
      new Option('--verify-parser <name>', "with --verify: the test log parser (default: the repository's recipe, else detected)").choices([
        ...PARSER_NAMES,
      ]),
    )
    .option(
      '--harness-compat',
      "with --verify: put the given tests in place as the SWE-bench harness does: one git checkout of the test patch's existing files, and a test patch that does not apply does not stop the run (docs/verify.md)",
    )
    .option(
      '--recipes <file>',
      'with --verify: JSON table of test recipes by owner/name[@version] read over the built-in one (docs/verify.md)',
    )
    .addHelpText(
      'after',
      `\nExit status: 0 done; 2 invalid input (the file, line and field are named; with --strict also candidates without a task record);\n` +
        `${EXIT_UNSCORED} done, but an instance has no candidate that could be scored (predictions and scores are written; stderr lists the first reasons).`,
    )
    .action(async (flags: RerankFlags, command: Command) => {
      const given = Object.keys(flags).filter((key) => command.getOptionValueSource(key) === 'cli');
      await (await import('./rerank-action.js')).runRerank(flags, given);
    });
}
