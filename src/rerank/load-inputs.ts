/**
 * Stage 1 of batch reranking: the candidates (prediction files or trajectory dumps), the task
 * records and the labels, read once and grouped by instance. Each input issue is reported as it
 * is found. Candidates of an instance with no task record are a warning (scored without the issue
 * text), or an error under `strict`.
 */
import { wnwError } from '../errors.js';
import { importLabels, importTasks, labelsFromTrajectories, type ImportIssue, type Labels } from '../formats/index.js';
import { atifUnknownWarning } from '../formats/atif/atif-warnings.js';
import { importRuns, namedInput } from '../formats/import-runs.js';
import type { Task, Trajectory } from '../types/index.js';
import type { RerankBatchOptions, RerankInputs, RerankWarning } from './types.js';

export async function loadInputs(options: RerankBatchOptions): Promise<RerankInputs> {
  const issues: ImportIssue[] = [];
  const report = (list: ImportIssue[]) => {
    for (const issue of list) {
      issues.push(issue);
      options.onIssue?.(issue);
    }
  };

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

  const byInstance = new Map<string, Trajectory[]>();
  for (const trajectory of imported.items)
    byInstance.set(trajectory.instance_id, [...(byInstance.get(trajectory.instance_id) ?? []), trajectory]);
  const atif = atifUnknownWarning(imported.items);
  const warnings = [
    ...missingTasks(options, byInstance, tasks),
    ...(atif
      ? [
          {
            code: 'atif_unknown_keys',
            message: atif.message,
            instances: [...new Set(imported.items.filter((t) => atif.ids.includes(t.id)).map((t) => t.instance_id))],
          },
        ]
      : []),
  ];
  return { candidates: imported.items, byInstance, tasks, labels, issues, warnings };
}

/** The warning for candidates whose instance has no task record (none when no task file was given); under `strict`, the error. */
function missingTasks(options: RerankBatchOptions, byInstance: Map<string, Trajectory[]>, tasks: Map<string, Task>): RerankWarning[] {
  if (tasks.size === 0) return [];
  const missing = [...byInstance.keys()].filter((id) => !tasks.has(id));
  if (!missing.length) return [];
  if (options.strict) {
    const message = `${missing.length} instance(s) have candidates but no task record (e.g. ${missing[0]}); without --strict they are scored without the issue text`;
    throw wnwError('WNW_ERR_INPUT_INVALID', message, { details: { field: 'tasks', instances: missing.slice(0, 20) } });
  }
  return [
    {
      code: 'WNW_ERR_INPUT_INVALID',
      message: `${missing.length} instance(s) have candidates but no task record (e.g. ${missing[0]}); they were scored without the issue text`,
      instances: missing,
    },
  ];
}
