/**
 * Stage 3 of batch reranking: each instance not resumed is scored (its candidates in one scorer
 * call), selected, and written — its score lines first, then its prediction, so an instance counts
 * as done only when both are there. Instances run `concurrency` at a time; they finish together at
 * any concurrency, so each output file has one queue and every row stays whole.
 */
import pLimit from 'p-limit';
import { toWinnowerError } from '../errors.js';
import { lookupLabel } from '../formats/index.js';
import { scoreCandidates } from '../scoring/score-candidates.js';
import { judgePass } from '../judge/judge-pass.js';
import { JUDGE_STRATEGIES } from '../judge/judge-options.js';
import { select, type Candidate, type JudgeScores } from '../select/index.js';
import type { JudgeReport, Selection, Strategy, Task } from '../types/index.js';
import { pushAll } from '../util/large-arrays.js';
import { executeInstance, type InstanceExecution } from './execute-instance.js';
import { LineAppender } from './line-appender.js';
import { summaryLine } from './summarize.js';
import type { RerankBatchOptions, RerankBatchResult, RerankInputs, ScoreLine, SummaryLine } from './types.js';

/** The `model_name_or_path` of this run's predictions. */
export const modelNameFor = (strategy: Strategy) => `winnower-${strategy}`;

export interface ScoredInstances {
  /** In the order the instances finished; only with a report (`options.report`), which reads them. */
  selections: Selection[];
  /** What the summary reads of each line written (types.ts). */
  lines: SummaryLine[];
  noneUsable: RerankBatchResult['noneUsable'];
  /** With --verify: what running each instance's code found, in finishing order. */
  executions: InstanceExecution[];
  /** One per instance the judge took part in. */
  judge: JudgeReport[];
}

/** One instance: its candidates scored and selected, its score lines and its prediction. */
export async function scoreInstance(options: RerankBatchOptions, inputs: RerankInputs, instanceId: string) {
  // Read back from the spool now, and let go once this instance is written.
  const candidates = inputs.spool.candidatesOf(instanceId);
  const task: Task = inputs.spool.task(instanceId) ?? {
    instance_id: instanceId,
    problem_statement: '',
    fail_to_pass: [],
    pass_to_pass: [],
    meta: {},
  };
  // The code runs while the value model scores: neither waits for the other.
  const [scored, executed] = await Promise.all([
    scoreCandidates(options.valueModel, task, candidates, {
      template: options.template,
      budgetTokens: options.budgetTokens,
      signal: options.signal,
    }),
    options.execution ? executeInstance(options.execution, task, candidates, options.signal) : undefined,
  ]);
  const pool: Candidate[] = candidates.map((trajectory, index) => ({
    trajectory,
    score: scored[index]!.score,
    ...(executed?.verify.get(trajectory.id) ? { verify: executed.verify.get(trajectory.id) } : {}),
    ...(executed?.checks.get(trajectory.id) ? { checks: executed.checks.get(trajectory.id) } : {}),
  }));
  const selectOptions = { instanceId, selector: options.valueModel.selector, task };
  // The judge's verdicts first (asynchronous), then the synchronous ranking reads them.
  const judged =
    options.judge && JUDGE_STRATEGIES.includes(options.strategy)
      ? await judgePass(options.judge.judge, {
          strategy: options.strategy,
          candidates: pool,
          issue: task.problem_statement,
          options: selectOptions,
          k: options.judge.k,
          ...(options.signal ? { signal: options.signal } : {}),
        })
      : undefined;
  const selection = select(options.strategy, pool, {
    ...selectOptions,
    ...(judged?.scores ? { judge: judged.scores } : {}),
    ...(judged?.unavailable ? { judgeUnavailable: judged.unavailable } : {}),
  });
  const chosen = candidates.find((trajectory) => trajectory.id === selection.chosen);
  const tamperOf = new Map(selection.ranking.map((entry) => [entry.trajectory_id, entry.tamper] as const));
  const lines: ScoreLine[] = candidates.map((trajectory, index) => ({
    instance_id: instanceId,
    trajectory_id: trajectory.id,
    source: trajectory.source,
    chosen: trajectory.id === selection.chosen,
    resolved: lookupLabel(inputs.labels, instanceId, trajectory.source) ?? null,
    score: scored[index]!.score ?? null,
    error: scored[index]!.error ? { code: scored[index]!.error!.code, message: scored[index]!.error!.message } : null,
    ...(executed ? { verify: executed.verify.get(trajectory.id) ?? null, checks: executed.checks.get(trajectory.id) ?? null } : {}),
    ...(tamperOf.get(trajectory.id) ? { tamper: tamperOf.get(trajectory.id) } : {}),
    ...judgeLine(judged?.scores, trajectory.id),
  }));
  // No usable candidate: an empty model_patch (the SWE-bench harness counts it as an empty
  // patch, unresolved) and the reason beside it, which the harness ignores.
  const prediction = {
    instance_id: instanceId,
    model_name_or_path: modelNameFor(options.strategy),
    model_patch: chosen?.patch ?? '',
    ...(chosen ? {} : { no_patch_reason: selection.reason }),
  };
  return { selection, chosen, lines, prediction, execution: executed?.evidence, judge: judged?.report };
}

/** Every instance of `todo`, appended to --scores and --out as each finishes. */
export async function scoreInstances(options: RerankBatchOptions, inputs: RerankInputs, todo: string[]): Promise<ScoredInstances> {
  const result: ScoredInstances = { selections: [], lines: [], noneUsable: [], executions: [], judge: [] };
  const limit = pLimit(options.concurrency ?? 4);
  const scoresFile = new LineAppender(options.scores);
  const outFile = new LineAppender(options.out);
  const checksFile = options.execution && options.checksFile ? new LineAppender(options.checksFile) : undefined;
  let finished = 0;
  await Promise.all(
    todo.map((instanceId) =>
      limit(async () => {
        options.signal?.throwIfAborted();
        const { selection, chosen, lines, prediction, execution, judge } = await scoreInstance(options, inputs, instanceId);
        // The evidence first: an instance is done once its prediction is written (resume.ts).
        if (execution) {
          await checksFile?.append([JSON.stringify(execution)]);
          result.executions.push(execution);
        }
        if (judge) result.judge.push(judge);
        await scoresFile.append(lines.map((line) => JSON.stringify(line)));
        await outFile.append([JSON.stringify(prediction)]);
        if (!chosen) result.noneUsable.push({ instance_id: instanceId, reason: selection.reason });
        // Kept only for the report: a run without one holds no instance's ranking past its write.
        if (options.report) result.selections.push(selection);
        pushAll(
          result.lines,
          lines.map((line) => summaryLine(line, options.report !== undefined)),
        );
        finished += 1;
        options.onProgress?.(finished, todo.length, instanceId);
      }),
    ),
  ).catch((error: unknown) => {
    throw toWinnowerError(error);
  });
  return result;
}

function judgeLine(scores: JudgeScores | undefined, id: string): Pick<ScoreLine, 'judge'> {
  const games = scores?.byId.get(id);
  return scores && games ? { judge: { model: scores.model, wins: games.wins, games: games.games } } : {};
}
