/**
 * Batch reranking: N candidates per instance (prediction files or trajectory dumps) in, one
 * prediction per instance out, with every candidate's score and a report. Results are appended
 * as each instance finishes, so a rerun with the same outputs resumes where it stopped.
 */
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import pLimit from 'p-limit';
import { toWinnowerError, wnwError } from '../errors.js';
import { repoNameOf, type Score, type Selection, type Strategy, type Task, type Trajectory } from '../types/index.js';
import { importLabels, importTasks, labelsFromTrajectories, lookupLabel, type ImportIssue, type Labels } from '../formats/index.js';
import { importRuns, namedInput } from '../formats/import-runs.js';
import { LineAppender } from './line-appender.js';
import { computeMetrics, type MetricRow } from '../metrics/ranking.js';
import { summarizeSelection, truncationStats, writeReports, type SelectionSummary } from './report/index.js';
import { DEFAULT_TEMPLATE, scoreCandidates } from '../scoring/score-candidates.js';
import { scoredBy } from '../scoring/scorer-identity.js';
import type { ValueModel } from '../scoring/value-model.js';
import { select } from '../select/index.js';
import { pushAll } from '../util/large-arrays.js';

export interface RerankBatchOptions {
  candidates: string[];
  tasks?: string[];
  labels?: string[];
  format?: string;
  /** `file`: each candidate file is one source (default when several files are given, globs counted as the files they match). */
  sourceFrom?: 'record' | 'file';
  valueModel: ValueModel;
  template?: string;
  budgetTokens?: number;
  strategy: Strategy;
  out: string;
  scores: string;
  report?: string;
  /** The inspector's index page for this run, relative to the report (the report links to it). */
  inspector?: string;
  onInvalid?: 'skip' | 'fail';
  /** Stop on what is otherwise a warning: candidates of an instance that has no task record. */
  strict?: boolean;
  /** Instances scored at once (their inputs are batched together by the scorer). */
  concurrency?: number;
  signal?: AbortSignal;
  onIssue?: (issue: ImportIssue) => void;
  onProgress?: (done: number, total: number, instanceId: string) => void;
}

/** One line of scores.jsonl: a candidate's score (or why it has none) and whether it was chosen. */
export interface ScoreLine {
  instance_id: string;
  trajectory_id: string;
  source: string;
  chosen: boolean;
  resolved: boolean | null;
  score: Score | null;
  error: { code: string; message: string } | null;
}

export interface RerankBatchResult {
  instances: number;
  resumed: number;
  candidates: number;
  predictions: string;
  scores: string;
  report?: { markdown: string; html: string };
  metrics?: ReturnType<typeof computeMetrics>;
  issues: ImportIssue[];
  /** Things the run went on despite (candidates scored without their task record). */
  warnings: RerankWarning[];
  /** Candidates of this run that have no score, and why. */
  unscored: Unscored;
  /** Instances of this run none of whose candidates is usable (empty model_patch), with the selection's reason. */
  noneUsable: Array<{ instance_id: string; reason: string }>;
  timings: Record<string, number>;
}

export interface RerankWarning {
  code: string;
  message: string;
  instances: string[];
}

export interface Unscored {
  /** Candidates without a score. */
  candidates: number;
  /** Instances none of whose candidates could be scored (their prediction is not a scored pick). */
  instances: string[];
  /** The first few failures, in instance order. */
  reasons: Array<{ instance_id: string; trajectory_id: string; code: string; message: string }>;
}

const UNSCORED_REASONS = 5;

const modelNameFor = (strategy: Strategy) => `winnower-${strategy}`;

function readJsonl<T>(file: string): T[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .flatMap((line) => {
      try {
        return [JSON.parse(line) as T];
      } catch {
        return []; // a line cut by a crash mid-write; that instance is redone
      }
    });
}

export async function rerankBatch(options: RerankBatchOptions): Promise<RerankBatchResult> {
  const timings: Record<string, number> = {};
  const issues: ImportIssue[] = [];
  const warnings: RerankWarning[] = [];
  const report = (list: ImportIssue[]) => {
    for (const issue of list) {
      issues.push(issue);
      options.onIssue?.(issue);
    }
  };
  let started = Date.now();

  // `NAME=PATH` names the source (run) of what PATH holds; plain paths take it from the records or files.
  const imported = await importRuns(options.candidates, {
    flag: '--candidates',
    format: options.format,
    sourceFrom: options.sourceFrom,
    onInvalid: options.onInvalid,
    signal: options.signal,
  });
  report(imported.issues);
  if (imported.items.length === 0)
    throw wnwError('WNW_ERR_INPUT_INVALID', `no candidates in ${options.candidates.join(', ')}`, { details: { field: 'candidates' } });
  const tasks = new Map<string, Task>();
  if (options.tasks?.length) {
    const result = await importTasks(options.tasks, { onInvalid: options.onInvalid, signal: options.signal });
    report(result.issues);
    for (const task of result.items) tasks.set(task.instance_id, task);
  }
  const labels: Labels = labelsFromTrajectories(imported.items);
  for (const input of (options.labels ?? []).map(namedInput)) {
    // A SWE-bench results.json names no run: `NAME=results.json` says which one it labels.
    const result = await importLabels(input.path, {
      onInvalid: options.onInvalid,
      signal: options.signal,
      ...(input.name ? { source: input.name } : {}),
    });
    report(result.issues);
    for (const [key, value] of result.labels) labels.set(key, value);
  }
  timings.import = Date.now() - started;

  const byInstance = new Map<string, Trajectory[]>();
  for (const trajectory of imported.items)
    byInstance.set(trajectory.instance_id, [...(byInstance.get(trajectory.instance_id) ?? []), trajectory]);
  if (tasks.size > 0) {
    const missing = [...byInstance.keys()].filter((id) => !tasks.has(id));
    if (missing.length) {
      if (options.strict) {
        const message = `${missing.length} instance(s) have candidates but no task record (e.g. ${missing[0]}); without --strict they are scored without the issue text`;
        throw wnwError('WNW_ERR_INPUT_INVALID', message, { details: { field: 'tasks', instances: missing.slice(0, 20) } });
      }
      warnings.push({
        code: 'WNW_ERR_INPUT_INVALID',
        message: `${missing.length} instance(s) have candidates but no task record (e.g. ${missing[0]}); they were scored without the issue text`,
        instances: missing,
      });
    }
  }

  // Resume: an instance is done when --out holds its prediction from this strategy and --scores a
  // line for each of its candidates now, scored by this model; those are kept and not scored
  // again. Anything else (another strategy or model, another --scores, a candidate added or
  // removed, a candidate left unscored by a scorer failure) is redone.
  const scoreLinesOf = new Map<string, Map<string, ScoreLine>>();
  for (const line of readJsonl<ScoreLine>(options.scores)) {
    if (!scoreLinesOf.has(line.instance_id)) scoreLinesOf.set(line.instance_id, new Map());
    scoreLinesOf.get(line.instance_id)!.set(line.trajectory_id, line);
  }
  const complete = (instanceId: string): boolean => {
    const saved = scoreLinesOf.get(instanceId);
    const candidates = byInstance.get(instanceId);
    if (!saved || !candidates || saved.size !== candidates.length || !candidates.every((trajectory) => saved.has(trajectory.id)))
      return false;
    // A candidate the scorer failed on (an outage, a timeout) is worth another try: redo its instance.
    return [...saved.values()].every(
      (line) =>
        line.score !== null &&
        line.score.backend === options.valueModel.scorer.backend &&
        line.score.model === options.valueModel.scorer.model,
    );
  };
  const kept = [
    ...new Map(
      readJsonl<{ instance_id: string; model_name_or_path?: string }>(options.out)
        .filter((row) => row.model_name_or_path === modelNameFor(options.strategy) && complete(row.instance_id))
        .map((row) => [row.instance_id, row]),
    ).values(),
  ];
  const done = new Set(kept.map((row) => row.instance_id));
  // Labels are this run's: a label file given now also labels the instances resumed.
  const previous = [...done].flatMap((instanceId) =>
    byInstance.get(instanceId)!.map((trajectory) => {
      const line = scoreLinesOf.get(instanceId)!.get(trajectory.id)!;
      return { ...line, resolved: lookupLabel(labels, instanceId, trajectory.source) ?? null };
    }),
  );
  await mkdir(dirname(options.out), { recursive: true });
  await mkdir(dirname(options.scores), { recursive: true });
  if (done.size === 0) {
    await writeFile(options.out, '');
    await writeFile(options.scores, '');
  } else {
    // Rewrite both from their complete rows: a line cut by a crash must not stay glued to the next one.
    const lines = (rows: unknown[]) => rows.map((row) => JSON.stringify(row)).join('\n') + (rows.length ? '\n' : '');
    await writeFile(options.out, lines(kept));
    await writeFile(options.scores, lines(previous));
  }

  const selections: Selection[] = [];
  const noneUsable: RerankBatchResult['noneUsable'] = [];
  const scoreLines: ScoreLine[] = [...previous];
  const todo = [...byInstance.keys()].filter((id) => !done.has(id));
  const limit = pLimit(options.concurrency ?? 4);
  // Instances finish together at any concurrency: one queue per file keeps every row whole.
  const scoresFile = new LineAppender(options.scores);
  const outFile = new LineAppender(options.out);
  let finished = 0;
  started = Date.now();
  await Promise.all(
    todo.map((instanceId) =>
      limit(async () => {
        options.signal?.throwIfAborted();
        const candidates = byInstance.get(instanceId)!;
        const task: Task = tasks.get(instanceId) ?? {
          instance_id: instanceId,
          problem_statement: '',
          fail_to_pass: [],
          pass_to_pass: [],
          meta: {},
        };
        const scored = await scoreCandidates(options.valueModel, task, candidates, {
          template: options.template,
          budgetTokens: options.budgetTokens,
          signal: options.signal,
        });
        const selection = select(
          options.strategy,
          candidates.map((trajectory, index) => ({ trajectory, score: scored[index]!.score })),
          { instanceId, selector: options.valueModel.selector, task },
        );
        const chosen = candidates.find((trajectory) => trajectory.id === selection.chosen);
        const lines: ScoreLine[] = candidates.map((trajectory, index) => ({
          instance_id: instanceId,
          trajectory_id: trajectory.id,
          source: trajectory.source,
          chosen: trajectory.id === selection.chosen,
          resolved: lookupLabel(labels, instanceId, trajectory.source) ?? null,
          score: scored[index]!.score ?? null,
          error: scored[index]!.error ? { code: scored[index]!.error!.code, message: scored[index]!.error!.message } : null,
        }));
        // Scores first, then the prediction: an instance counts as done only when both are written.
        await scoresFile.append(lines.map((line) => JSON.stringify(line)));
        // No usable candidate: an empty model_patch (the SWE-bench harness counts it as an empty
        // patch, unresolved) and the reason beside it, which the harness ignores.
        const prediction = {
          instance_id: instanceId,
          model_name_or_path: modelNameFor(options.strategy),
          model_patch: chosen?.patch ?? '',
          ...(chosen ? {} : { no_patch_reason: selection.reason }),
        };
        await outFile.append([JSON.stringify(prediction)]);
        if (!chosen) noneUsable.push({ instance_id: instanceId, reason: selection.reason });
        selections.push(selection);
        pushAll(scoreLines, lines);
        finished += 1;
        options.onProgress?.(finished, todo.length, instanceId);
      }),
    ),
  ).catch((error: unknown) => {
    throw toWinnowerError(error);
  });
  timings.score = Date.now() - started;

  // Selections of resumed instances are recomputed from their saved scores (selection is deterministic).
  for (const instanceId of done) {
    const candidates = byInstance.get(instanceId);
    if (!candidates) continue;
    const scoreOf = new Map(
      previous.filter((line) => line.instance_id === instanceId).map((line) => [line.trajectory_id, line.score ?? undefined]),
    );
    const task = tasks.get(instanceId);
    selections.push(
      select(
        options.strategy,
        candidates.map((trajectory) => ({ trajectory, score: scoreOf.get(trajectory.id) })),
        { instanceId, selector: options.valueModel.selector, ...(task ? { task } : {}) },
      ),
    );
  }

  const result: RerankBatchResult = {
    instances: byInstance.size,
    resumed: done.size,
    candidates: imported.items.length,
    predictions: options.out,
    scores: options.scores,
    issues,
    warnings,
    unscored: unscoredOf(scoreLines),
    noneUsable: noneUsable.sort((a, b) => (a.instance_id < b.instance_id ? -1 : a.instance_id > b.instance_id ? 1 : 0)),
    timings,
  };
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
            repo: repoNameOf(tasks.get(line.instance_id) ?? { instance_id: line.instance_id }),
            trajectory_id: line.trajectory_id,
            value: line.score?.value ?? null,
            resolved: line.resolved,
            selected: line.chosen,
          },
        ],
  );
  if (rows.length > 0) result.metrics = computeMetrics(rows);
  if (options.report) {
    const labelOf = new Map(scoreLines.flatMap((line) => (line.resolved === null ? [] : [[line.trajectory_id, line.resolved] as const])));
    const summaries: SelectionSummary[] = selections
      .sort((a, b) => (a.instance_id < b.instance_id ? -1 : 1))
      .map((selection) =>
        summarizeSelection(selection, repoNameOf(tasks.get(selection.instance_id) ?? { instance_id: selection.instance_id }), labelOf),
      );
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
          timings,
          ...(options.inspector ? { inspector: options.inspector } : {}),
          scored_by: scoredBy(options.valueModel.identity, options.strategy),
          notes: [
            ...(done.size ? [`resumed: ${done.size} instance(s) taken from the previous run`] : []),
            ...(issues.length ? [`${issues.length} input issue(s) skipped`] : []),
            ...(partlyLabelled.size
              ? [`${partlyLabelled.size} instance(s) left out of the metrics: some of their candidates have no label`]
              : []),
            ...warnings.map((warning) => `warning: ${warning.message}`),
            ...(result.unscored.candidates > 0 ? [describeUnscored(result.unscored)] : []),
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

function unscoredOf(lines: readonly ScoreLine[]): Unscored {
  const failed = lines
    .filter((line) => line.score === null)
    .sort((a, b) => (a.instance_id < b.instance_id ? -1 : a.instance_id > b.instance_id ? 1 : 0));
  const scored = new Set(lines.filter((line) => line.score !== null).map((line) => line.instance_id));
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
