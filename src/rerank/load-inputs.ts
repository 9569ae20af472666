/**
 * Stage 1 of batch reranking: the candidates (prediction files or trajectory dumps), the task
 * records and the labels, read once as a stream into the run's spool (candidate-spool.ts) and
 * indexed by instance. Each input issue is reported as it
 * is found. Candidates of an instance with no task record are a warning (scored without the issue
 * text), or an error under `strict`.
 */
import { wnwError } from '../errors.js';
import {
  applyLabelFiles,
  importLabels,
  importTasks,
  labelsFromTrajectories,
  type ImportIssue,
  type Labels,
  type LabelsResult,
} from '../formats/index.js';
import { atifUnknownWarning } from '../formats/atif/atif-warnings.js';
import { importRuns, namedInput } from '../formats/import-runs.js';
import type { Trajectory } from '../types/index.js';
import { createCandidateSpool, type CandidateSpool } from './candidate-spool.js';
import type { RerankBatchOptions, RerankInputs, RerankWarning } from './types.js';

export async function loadInputs(options: RerankBatchOptions): Promise<RerankInputs> {
  const issues: ImportIssue[] = [];
  const report = (list: ImportIssue[]) => {
    for (const issue of list) {
      issues.push(issue);
      options.onIssue?.(issue);
    }
  };

  const spool = createCandidateSpool();
  try {
    const labels: Labels = new Map();
    // ATIF candidates with keys winnower does not know: counted as they pass, named in one warning.
    const atif: Trajectory[] = [];
    // `NAME=PATH` names the source (run) of what PATH holds; plain paths take it from the records or files.
    // Each candidate goes to the spool as it is read: the run never holds every candidate at once.
    const imported = await importRuns(options.candidates, {
      flag: '--candidates',
      format: options.format,
      sourceFrom: options.sourceFrom,
      onInvalid: options.onInvalid,
      signal: options.signal,
      onItem: (trajectory) => {
        spool.add(trajectory);
        for (const [key, value] of labelsFromTrajectories([trajectory])) labels.set(key, value);
        if (atifUnknownWarning([trajectory])) atif.push({ ...trajectory, messages: [], patch: '' });
      },
    });
    report(imported.issues);
    if (spool.candidateCount === 0)
      throw wnwError('WNW_ERR_INPUT_INVALID', `no candidates in ${options.candidates.join(', ')}`, { details: { field: 'candidates' } });
    if (options.tasks?.length) {
      const result = await importTasks(options.tasks, {
        onInvalid: options.onInvalid,
        signal: options.signal,
        onItem: (task) => spool.addTask(task),
      });
      report(result.issues);
    }
    const files: LabelsResult[] = [];
    for (const input of (options.labels ?? []).map(namedInput)) {
      // A SWE-bench results.json names no run: `NAME=results.json` says which one it labels.
      const result = await importLabels(input.path, {
        onInvalid: options.onInvalid,
        signal: options.signal,
        ...(input.name ? { source: input.name } : {}),
      });
      report(result.issues);
      files.push(result);
    }
    applyLabelFiles(labels, files);

    const atifWarning = atifUnknownWarning(atif);
    const warnings = [
      ...missingTasks(options, spool),
      ...(atifWarning
        ? [
            {
              code: 'atif_unknown_keys',
              message: atifWarning.message,
              instances: [...new Set(atif.map((t) => t.instance_id))],
            },
          ]
        : []),
    ];
    return { spool, labels, issues, warnings };
  } catch (error) {
    spool.close();
    throw error;
  }
}

/**
 * The warning for candidates whose instance has no task record, also when no task file was given
 * at all (a silent score without the issue text is a worse score nobody asked for); under
 * `strict`, the error.
 */
function missingTasks(options: RerankBatchOptions, spool: CandidateSpool): RerankWarning[] {
  const missing = [...spool.instances.keys()].filter((id) => !spool.hasTask(id));
  if (!missing.length) return [];
  const none = spool.taskCount === 0 && !options.tasks?.length ? ' (no --tasks given)' : '';
  if (options.strict) {
    const message = `${missing.length} instance(s) have candidates but no task record${none} (e.g. ${missing[0]}); without --strict they are scored without the issue text`;
    throw wnwError('WNW_ERR_INPUT_INVALID', message, { details: { field: 'tasks', instances: missing.slice(0, 20) } });
  }
  return [
    {
      code: 'WNW_ERR_INPUT_INVALID',
      message: `${missing.length} instance(s) have candidates but no task record${none} (e.g. ${missing[0]}); they were scored without the issue text`,
      instances: missing,
    },
  ];
}
