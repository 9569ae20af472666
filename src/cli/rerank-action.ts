/** What `winnower rerank` does once its flags are parsed; loaded only when it runs (rerank.ts registers it). */
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { SingleBar, Presets } from 'cli-progress';
import { DEFAULT_MODEL_DIR, loadConfig } from '../config.js';
import { wnwError } from '../errors.js';
import type { RerankExecution } from '../rerank/execute-instance.js';
import { rerankBatch } from '../rerank/rerank-batch.js';
import { describeExecution } from '../rerank/summarize.js';
import { createPolicyFactory } from '../rollout/policy/policy-factory.js';
import { closeAllSandboxes } from '../sandbox/lifecycle.js';
import { createSandboxProvider } from '../sandbox/registry.js';
import { createSqliteStore } from '../store/sqlite-store.js';
import type { ParserName } from '../verify/detect.js';
import { loadRecipes } from '../verify/recipes.js';
import { loadValueModel } from '../scoring/value-model.js';
import { scoredBy } from '../scoring/scorer-identity.js';
import { createJudge, type Judge } from '../judge/judge-client.js';
import { resolveJudge } from '../judge/judge-options.js';
import { defaultStrategy } from '../select/index.js';
import type { Strategy } from '../types/index.js';
import { loadSavedRuns } from '../server/ui/saved-runs.js';
import { writeSavedSite } from '../server/ui/saved-site.js';
import { limitHeapGrowth } from '../util/heap-growth.js';
import { countNoun } from '../util/count-noun.js';
import { printMetrics } from './print-metrics.js';
import { runCrossFit } from './rerank-cross-fit.js';
import { rerankExitCode, rerankSummary, rerankSummaryFile } from './rerank-summary.js';
import { flagsGiven } from './parse-options.js';
import { judgeFromFlags } from './judge-from-flags.js';
import { type RerankFlags, VERIFY_ONLY_FLAGS } from './rerank.js';

/** `given`: the flags the user typed (not defaults), so --cross-fit can refuse those it cannot honour. */
export async function runRerank(flags: RerankFlags, given: readonly string[] = []): Promise<void> {
  // A streaming batch: peak memory should follow what it holds, not how long it runs (src/util/heap-growth.ts).
  limitHeapGrowth();
  if (flags.crossFit !== undefined) return runCrossFit(flags, given);
  // --sources picks the runs cross-fitting learns from; a plain rerank has nothing to apply it to.
  if (given.includes('sources'))
    throw wnwError('WNW_ERR_INPUT_INVALID', '--sources applies only with --cross-fit', { details: { field: 'sources' } });
  const executionSetup = await prepareExecution(flags, given);
  const valueModel = await loadValueModel({
    backend: flags.scorer,
    model: flags.model ?? (flags.scorer === 'onnx' ? DEFAULT_MODEL_DIR() : ''),
    urls: flags.url ?? [],
    ...(flags.tokenizer ? { tokenizer: flags.tokenizer } : {}),
    ...(flags.chatTemplate ? { chatTemplate: flags.chatTemplate } : {}),
    ...(flags.headLabels
      ? { labels: flags.headLabels.includes(',') ? flags.headLabels.split(',').map((name) => name.trim()) : flags.headLabels }
      : {}),
    ...(flags.labelIndex === undefined ? {} : { labelIndex: flags.labelIndex }),
    ...(flags.activation ? { activation: flags.activation } : {}),
    // The template may imply the head (openhands-critic-v1: the critic's labels).
    ...(flags.template ? { template: flags.template } : {}),
    // One budget: what the serializer fits to is what the server is asked to take (an onnx model keeps its own limit).
    ...(flags.budget !== undefined && flags.scorer !== 'onnx' ? { maxInputTokens: flags.budget } : {}),
    ...((flags.apiKey ?? process.env.WINNOWER_SCORER_KEY) ? { apiKey: flags.apiKey ?? process.env.WINNOWER_SCORER_KEY } : {}),
  });
  const { scorer } = valueModel;
  if (flags.budget !== undefined && flags.budget > scorer.maxInputTokens) {
    await scorer.close();
    await executionSetup?.close();
    throw wnwError(
      'WNW_ERR_CFG_INVALID',
      `--budget: ${flags.budget} tokens is more than ${scorer.model} takes (${scorer.maxInputTokens}); give at most ${scorer.maxInputTokens}`,
      {
        details: { field: 'budget', budget: flags.budget, max: scorer.maxInputTokens },
      },
    );
  }
  const tty = flags.progress && process.stderr.isTTY;
  const bar = tty
    ? new SingleBar(
        { format: 'rerank [{bar}] {value}/{total} instances | {eta_formatted} left | {instance}', hideCursor: true },
        Presets.shades_classic,
      )
    : undefined;
  let lastLog = 0;
  // The report links to the inspector's pages of this run, written beside it once scored.
  const inspectDir = flags.report && flags.inspector ? `${flags.report.replace(/\.md$/i, '')}.inspect` : undefined;
  let strategy: Strategy;
  let judge: Judge | undefined;
  try {
    const judgeOptions = judgeFromFlags(flags);
    const resolved = resolveJudge(
      { strategy: flags.strategy, judge: judgeOptions },
      undefined,
      { strategy: 'strategy', judge: 'judge-url' },
      () => defaultStrategy(executionSetup !== undefined, valueModel),
      executionSetup !== undefined,
    );
    strategy = resolved.strategy;
    judge = resolved.judge ? createJudge(resolved.judge) : undefined;
  } catch (error) {
    await scorer.close();
    await executionSetup?.close();
    throw error;
  }
  const checksFile = flags.checksOut ?? flags.out.replace(/(\.jsonl)?$/, '.checks.jsonl');
  try {
    const result = await rerankBatch({
      candidates: flags.candidates,
      tasks: flags.tasks,
      labels: flags.labels,
      format: flags.format,
      sourceFrom: flags.sourceFrom,
      valueModel,
      template: flags.template,
      budgetTokens: flags.budget,
      strategy,
      ...(judge ? { judge: { judge, k: flags.judgeK ?? 2 } } : {}),
      out: flags.out,
      scores: flags.scores ?? flags.out.replace(/(\.jsonl)?$/, '.scores.jsonl'),
      report: flags.report,
      ...(inspectDir ? { inspector: relative(dirname(flags.report!), join(inspectDir, 'index.html')) } : {}),
      onInvalid: flags.skipInvalid ? 'skip' : 'fail',
      strict: flags.strict ?? false,
      concurrency: flags.concurrency,
      ...(executionSetup ? { execution: executionSetup.execution, checksFile } : {}),
      onIssue: (issue) =>
        console.error(
          `skipped: ${issue.file}${issue.line !== undefined ? `:${issue.line}` : issue.record !== undefined ? `[${JSON.stringify(issue.record)}]` : ''}: ${issue.field}: ${issue.message}`,
        ),
      onProgress: (done, total, instance) => {
        if (!flags.progress) return;
        if (bar) {
          if (done === 1) bar.start(total, 0, { instance });
          bar.update(done, { instance });
        } else if (done === total || Date.now() - lastLog > 2000) {
          lastLog = Date.now();
          console.error(`rerank: ${done}/${total} instances scored`);
        }
      },
    });
    bar?.stop();
    console.log(
      `${countNoun(result.instances, 'instance')} (${result.resumed} resumed), ${countNoun(result.candidates, 'candidate')} → ${result.predictions}`,
    );
    console.log(`scores: ${result.scores}${result.report ? `; report: ${result.report.markdown}, ${result.report.html}` : ''}`);
    const scored = scoredBy(valueModel.identity, strategy);
    const summary = flags.summary ?? flags.out.replace(/(\.jsonl)?$/, '.summary.json');
    await writeFile(summary, `${JSON.stringify(rerankSummaryFile(result, scored), null, 2)}\n`);
    console.log(
      `summary: ${summary} (scored by ${scorer.model}${scored?.model.hash ? ` ${scored.model.hash.slice(0, 19)}` : ''}, strategy ${strategy})`,
    );
    if (inspectDir) {
      const site = writeSavedSite(
        inspectDir,
        (await loadSavedRuns([result.scores, ...flags.candidates], { sourceFrom: flags.sourceFrom })).jobs,
        'winnower rerank',
      );
      console.log(
        `inspector: ${site.index} (${countNoun(site.jobs, 'instance')}; or \`winnower inspect ${result.scores} <candidates> --serve\`)`,
      );
    }
    if (result.execution) for (const line of describeExecution(result.execution)) console.log(line);
    if (result.metrics) printMetrics(result.metrics);
    else console.log('no labels: metrics need --labels or candidates that carry `resolved`');
    for (const line of rerankSummary(result)) console.error(line);
    const code = rerankExitCode(result);
    if (code !== 0) process.exitCode = code;
  } finally {
    bar?.stop();
    await Promise.all([scorer.close(), judge?.close()]);
    await executionSetup?.close();
  }
}

/** The flags that shape only the checks without a test list: refused when those run for no instance (src/rerank/execute-instance.ts). */
const CHECK_FLAGS: Record<string, string> = {
  regressionBudget: '--regression-budget',
  poolTestsBudget: '--pool-tests-budget',
  regression: '--no-regression',
  poolTests: '--no-pool-tests',
};

/** With --verify: the sandbox provider and what the checks run on; a --verify-only flag without it is refused by name. */
async function prepareExecution(
  flags: RerankFlags,
  given: readonly string[],
): Promise<{ execution: RerankExecution; close(): Promise<void> } | undefined> {
  if (!flags.verify) {
    const stray = flagsGiven(VERIFY_ONLY_FLAGS, given);
    if (stray.length > 0)
      throw wnwError('WNW_ERR_INPUT_INVALID', `${stray.join(', ')} ${stray.length === 1 ? 'applies' : 'apply'} only with --verify`, {
        details: { field: stray[0]!.replace(/^--(no-)?/, '').replaceAll('-', '_'), refused: stray },
      });
    return undefined;
  }
  if (flags.repos !== undefined && !existsSync(flags.repos))
    throw wnwError('WNW_ERR_INPUT_INVALID', `--repos: ${flags.repos} does not exist`, { details: { field: 'repos' } });
  // The harness's procedure shapes only the run of the given tests: with them hidden it would be ignored.
  if (flags.harnessCompat && !flags.givenTests)
    throw wnwError('WNW_ERR_INPUT_INVALID', '--harness-compat needs the given tests; --no-given-tests hides them', {
      details: { field: 'harness_compat', refused: ['--harness-compat'] },
    });
  // With both checks without a test list off, nothing would read what they shape.
  if (!flags.regression && !flags.poolTests)
    throw wnwError('WNW_ERR_INPUT_INVALID', '--no-regression with --no-pool-tests leaves no check without a test list: drop one', {
      details: { field: 'regression', refused: ['--no-regression', '--no-pool-tests'] },
    });
  // A budget for a check that is off would be accepted and ignored.
  for (const [on, budget, off] of [
    [flags.regression, 'regressionBudget', ['--regression-budget', 'the regression check', '--no-regression']],
    [flags.poolTests, 'poolTestsBudget', ['--pool-tests-budget', 'the tests from the pool', '--no-pool-tests']],
  ] as const)
    if (!on && given.includes(budget))
      throw wnwError('WNW_ERR_INPUT_INVALID', `${off[0]} shapes ${off[1]}, which ${off[2]} turns off`, {
        details: { field: off[0].slice(2).replaceAll('-', '_'), refused: [off[0]] },
      });
  const recipes = loadRecipes(flags.recipes);
  const config = loadConfig({ file: flags.config, overrides: flags.provider ? { sandbox: { provider: flags.provider } } : {} });
  const sandboxes = await createSandboxProvider(config.sandbox.provider, config.sandbox.settings, config.sandbox.patch);
  // The checks keep no job: an in-memory store, gone with the process.
  const store = createSqliteStore(':memory:');
  const createPolicy = createPolicyFactory(config.policy);
  const execution: RerankExecution = {
    sandboxes,
    deps: { sandboxes, store, createPolicy, policyDefaults: config.policy },
    ...(flags.repos !== undefined ? { reposDir: resolve(flags.repos) } : {}),
    recipes,
    givenTests: flags.givenTests,
    checks: flags.checks ? 'always' : 'auto',
    concurrency: flags.sandboxes,
    testTimeoutMs: flags.verifyTimeout * 1000,
    regressionBudgetS: flags.regressionBudget,
    regression: flags.regression,
    poolTests: flags.poolTests ? { budget_s: flags.poolTestsBudget } : false,
    ...(flags.verifyParser ? { parser: flags.verifyParser as ParserName } : {}),
    ...(flags.harnessCompat ? { harnessCompat: true } : {}),
    checkFlags: flagsGiven(CHECK_FLAGS, given),
  };
  return {
    execution,
    close: async () => {
      await closeAllSandboxes();
      await Promise.allSettled([createPolicy.close(), sandboxes.close()]);
      await store.close();
    },
  };
}
