/**
 * Stage 4 of batch reranking: the run's result from every score line (resumed and new) — what is
 * unscored and why, the ranking metrics over the labelled instances — and, when asked, the
 * Markdown and HTML reports.
 */
import { computeMetrics, type MetricRow } from '../metrics/ranking.js';
import { DEFAULT_TEMPLATE } from '../scoring/score-candidates.js';
import { scoredBy } from '../scoring/scorer-identity.js';
import { describeJudgeReport, sumJudgeReports } from '../judge/judge-report.js';
import { repoNameOf, type JudgeReport, type Selection } from '../types/index.js';
import { summarizeSelection, truncationStats, writeReports, type SelectionSummary } from './report/index.js';
import type { InstanceExecution } from './execute-instance.js';
import type { ExecutionSummary, RerankBatchOptions, RerankBatchResult, RerankInputs, ScoreLine, SummaryLine, Unscored } from './types.js';

const UNSCORED_REASONS = 5;

/** The summary's part of `line`; `withScore` keeps the whole score (for the report). */
export function summaryLine(line: ScoreLine, withScore: boolean): SummaryLine {
  return {
    instance_id: line.instance_id,
    trajectory_id: line.trajectory_id,
    chosen: line.chosen,
    resolved: line.resolved,
    error: line.error,
    value: line.score?.value ?? null,
    ...(withScore && line.score ? { score: line.score } : {}),
    ...(line.verify !== undefined ? { verify: line.verify } : {}),
    ...(line.checks !== undefined ? { checks: line.checks } : {}),
  };
}

export interface RunRecord {
  /** Instances taken from the earlier run. */
  resumed: number;
  /** What the summary reads of every score line of the run, the resumed ones first. */
  lines: SummaryLine[];
  /** Every instance's selection. */
  selections: Selection[];
  noneUsable: RerankBatchResult['noneUsable'];
  /** With --verify: every instance's execution evidence, resumed ones included. */
  executions: InstanceExecution[];
  timings: Record<string, number>;
  /** The judge's report of each instance it took part in. */
  judge?: JudgeReport[];
}

export async function summarize(options: RerankBatchOptions, inputs: RerankInputs, run: RunRecord): Promise<RerankBatchResult> {
  const { spool, issues, warnings } = inputs;
  // One read of each instance's task record, for its repository's name.
  const repoNames = new Map<string, string>();
  const repoOf = (instanceId: string): string => {
    let name = repoNames.get(instanceId);
    if (name === undefined) {
      name = repoNameOf(spool.task(instanceId) ?? { instance_id: instanceId });
      repoNames.set(instanceId, name);
    }
    return name;
  };
  const scoreLines = run.lines;
  const result: RerankBatchResult = {
    instances: spool.instances.size,
    resumed: run.resumed,
    candidates: spool.candidateCount,
    predictions: options.out,
    scores: options.scores,
    issues,
    warnings,
    unscored: unscoredOf(scoreLines),
    noneUsable: run.noneUsable.sort((a, b) => (a.instance_id < b.instance_id ? -1 : a.instance_id > b.instance_id ? 1 : 0)),
    timings: run.timings,
  };
  const judged = sumJudgeReports(run.judge ?? []);
  if (judged) result.judge = judged;
  // An instance with an unlabelled candidate has no known mean@1 or pass@N, nor selected@1 when
  // that candidate was chosen: it is left out of the metrics (and the report says so).
  const unlabelled = new Set(scoreLines.filter((line) => line.resolved === null).map((line) => line.instance_id));
  const partlyLabelled = new Set(
    scoreLines.filter((line) => line.resolved !== null && unlabelled.has(line.instance_id)).map((line) => line.instance_id),
  );
  const rows: MetricRow[] = scoreLines.flatMap((line) =>
    line.resolved === null || unlabelled.has(line.instance_id)
      ? []
      : [
          {
            instance_id: line.instance_id,
            repo: repoOf(line.instance_id),
            trajectory_id: line.trajectory_id,
            value: line.value,
            resolved: line.resolved,
            selected: line.chosen,
          },
        ],
  );
  if (rows.length > 0) result.metrics = computeMetrics(rows);
  if (options.execution) result.execution = executionSummary(options.checksFile ?? '', run.executions, scoreLines);
  if (options.report) {
    const labelOf = new Map(scoreLines.flatMap((line) => (line.resolved === null ? [] : [[line.trajectory_id, line.resolved] as const])));
    const summaries: SelectionSummary[] = run.selections
      .sort((a, b) => (a.instance_id < b.instance_id ? -1 : 1))
      .map((selection) => summarizeSelection(selection, repoOf(selection.instance_id), labelOf));
    const scores = scoreLines.flatMap((line) => (line.score ? [line.score] : []));
    result.report = await writeReports(
      {
        generated_at: new Date().toISOString(),
        run: {
          strategy: options.strategy,
          scorer: options.valueModel.scorer.backend,
          model: options.valueModel.scorer.model,
          template: [...new Set(scores.map((score) => score.template))].join(', ') || (options.template ?? DEFAULT_TEMPLATE),
          files: [...options.candidates, ...(options.tasks ?? []), ...(options.labels ?? [])],
          timings: run.timings,
          ...(options.inspector ? { inspector: options.inspector } : {}),
          scored_by: scoredBy(options.valueModel.identity, options.strategy),
          notes: [
            ...(run.resumed ? [`resumed: ${run.resumed} instance(s) taken from the previous run`] : []),
            ...(issues.length ? [`${issues.length} input issue(s) skipped`] : []),
            ...(partlyLabelled.size
              ? [`${partlyLabelled.size} instance(s) left out of the metrics: some of their candidates have no label`]
              : []),
            ...(judged ? [describeJudgeReport(judged)] : []),
            ...warnings.map((warning) => `warning: ${warning.message}`),
            ...(result.unscored.candidates > 0 ? [describeUnscored(result.unscored)] : []),
            ...(result.execution ? describeExecution(result.execution) : []),
          ],
        },
        metrics: result.metrics ?? computeMetrics([]),
        selections: summaries,
        truncation: truncationStats(scores),
      },
      options.report,
    );
  }
  return result;
}

/**
 * `N [of TOTAL] candidate(s) could not be scored; K instance(s) have no scored candidate [(first, ...)]`,
 * as the report and the CLI say it; `names` is how many of those instances to name.
 */
export function describeUnscored(
  unscored: Pick<Unscored, 'candidates' | 'instances'>,
  options: { of?: number; names?: number } = {},
): string {
  const { instances } = unscored;
  const names = options.names ?? 0;
  const named = names > 0 ? ` (${instances.slice(0, names).join(', ')}${instances.length > names ? ', ...' : ''})` : '';
  const none = instances.length ? `; ${instances.length} instance(s) have no scored candidate${named}` : '';
  return `${unscored.candidates}${options.of === undefined ? '' : ` of ${options.of}`} candidate(s) could not be scored${none}`;
}

function unscoredOf(lines: readonly SummaryLine[]): Unscored {
  const failed = lines
    .filter((line) => line.value === null)
    .sort((a, b) => (a.instance_id < b.instance_id ? -1 : a.instance_id > b.instance_id ? 1 : 0));
  const scored = new Set(lines.filter((line) => line.value !== null).map((line) => line.instance_id));
  return {
    candidates: failed.length,
    instances: [...new Set(failed.map((line) => line.instance_id))].filter((instanceId) => !scored.has(instanceId)),
    reasons: failed.slice(0, UNSCORED_REASONS).map((line) => ({
      instance_id: line.instance_id,
      trajectory_id: line.trajectory_id,
      code: line.error?.code ?? 'WNW_ERR_SCORE_UPSTREAM',
      message: line.error?.message ?? 'no score returned',
    })),
  };
}

/** The run's execution evidence in figures: what could not run, what was graded, how often the verdict is the label. */
export function executionSummary(file: string, executions: readonly InstanceExecution[], lines: readonly SummaryLine[]): ExecutionSummary {
  const couldNotRun = executions
    .filter((execution) => execution.could_not_run !== null)
    .map((execution) => ({ instance_id: execution.instance_id, reason: execution.could_not_run! }))
    .sort((a, b) => (a.instance_id < b.instance_id ? -1 : 1));
  const graded = lines.filter((line) => line.verify && line.verify.status !== 'error' && line.verify.status !== 'timeout');
  const labelled = graded.filter((line) => line.resolved !== null);
  const disagreements = labelled
    .filter((line) => line.verify!.resolved !== line.resolved)
    .map((line) => ({
      instance_id: line.instance_id,
      trajectory_id: line.trajectory_id,
      verdict: line.verify!.status,
      label: line.resolved!,
    }));
  const compared = lines.filter((line) => line.checks && line.checks.regressions !== null);
  return {
    file,
    instances: executions.length,
    couldNotRun,
    environment: executions.filter((execution) => execution.environment_failures.length > 0).map((execution) => execution.instance_id),
    verified: graded.length,
    resolved: graded.filter((line) => line.verify!.resolved).length,
    agreement: labelled.length ? { agree: labelled.length - disagreements.length, total: labelled.length, disagreements } : null,
    regressionChecked: compared.length,
    regressed: compared.filter((line) => (line.checks!.regressions ?? 0) > 0).length,
    poolTests: {
      written: executions.reduce((sum, execution) => sum + (execution.checks?.pool_tests?.tests.length ?? 0), 0),
      valid: executions.reduce((sum, execution) => sum + (execution.checks?.pool_tests?.tests.filter((test) => test.valid).length ?? 0), 0),
      ranked: lines.filter((line) => line.checks?.pool !== undefined && line.checks.pool.total > 0).length,
    },
    sandboxMs: executions.reduce((sum, execution) => sum + execution.sandbox_ms, 0),
  };
}

/** The report's and the CLI's lines for an execution summary. */
export function describeExecution(summary: ExecutionSummary): string[] {
  const lines = [
    `ran code for ${summary.instances} instance(s): ${summary.verified} candidate(s) graded by the given tests (${summary.resolved} resolved), ${summary.regressionChecked} by the regression check (${summary.regressed} broke a test); ${(summary.sandboxMs / 1000).toFixed(1)} sandbox-seconds; evidence: ${summary.file}`,
  ];
  if (summary.poolTests.written > 0)
    lines.push(
      `pool tests: ${summary.poolTests.valid} valid of the ${summary.poolTests.written} the candidates wrote (failing on base, passed by at least one candidate); ${summary.poolTests.ranked} candidate(s) ranked by the others' tests they pass`,
    );
  if (summary.agreement)
    lines.push(
      `verification agrees with the labels on ${summary.agreement.agree}/${summary.agreement.total} graded candidates (${((100 * summary.agreement.agree) / summary.agreement.total).toFixed(1)}%)`,
    );
  if (summary.couldNotRun.length)
    lines.push(
      `${summary.couldNotRun.length} instance(s) could not run (no candidate called unresolved): ${summary.couldNotRun
        .slice(0, 3)
        .map((entry) => `${entry.instance_id}: ${entry.reason}`)
        .join('; ')}${summary.couldNotRun.length > 3 ? '; ...' : ''}`,
    );
  if (summary.environment.length)
    lines.push(
      `${summary.environment.length} instance(s) fail PASS_TO_PASS tests on the base here (environment): ${summary.environment.slice(0, 5).join(', ')}`,
    );
  return lines;
}
