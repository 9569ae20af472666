import { basename } from 'node:path';
import type { Task } from '../types/task.js';
import type { Trajectory } from '../types/trajectory.js';
import { wnwError } from '../errors.js';
import { importAtif } from './atif/import-atif.js';
import { detectFormat, isTrajectoryFormat, TRAJECTORY_FORMATS, type TrajectoryFormat } from './detect.js';
import { expandInputs } from './expand-inputs.js';
import { IssueCollector } from './issues.js';
import { importSwebenchLabels, type LabelOptions, type Labels, type LabelsResult } from './labels.js';
import { importMiniSweAgent } from './mini-swe-agent.js';
import { importOpenAIChat, importWinnowerTrajectories } from './openai-chat.js';
import { importOpenHands } from './openhands.js';
import { importSweAgent } from './swe-agent.js';
import { importSwebenchPredictions } from './swebench-predictions.js';
import { importSwebenchTasks } from './tasks.js';
import type { ImportOptions, ImportResult } from './types.js';
import { pushAll } from '../util/large-arrays.js';

export * from './types.js';
export { TRAJECTORY_FORMATS, detectFormat, detectValueFormat, type TrajectoryFormat } from './detect.js';
export { expandInputs, isGlob } from './expand-inputs.js';
export {
  applyLabelFiles,
  labelKey,
  lookupLabel,
  labelsFromTrajectories,
  type Labels,
  type LabelOptions,
  type LabelsResult,
} from './labels.js';
export { formatPath } from './issues.js';

const IMPORTERS: Record<TrajectoryFormat, (file: string, options: ImportOptions) => Promise<ImportResult<Trajectory>>> = {
  'swebench-predictions': importSwebenchPredictions,
  'openai-chat': importOpenAIChat,
  winnower: importWinnowerTrajectories,
  'mini-swe-agent': importMiniSweAgent,
  'swe-agent': importSweAgent,
  openhands: importOpenHands,
  atif: importAtif,
};

export interface ImportTrajectoriesOptions extends ImportOptions {
  /** Skip detection and read every file as this format. */
  format?: string;
  /**
   * `record` (default): the source the input names (model_name_or_path, run_id, model), unless
   * `source` is given. `file`: each file's name without its extension, for several prediction files
   * that share one model name.
   */
  sourceFrom?: 'record' | 'file';
}

/** `runs/gpt4o-seed1.jsonl` → `gpt4o-seed1`. */
export function sourceNameOf(file: string): string {
  return basename(file).replace(/(\.traj)?\.(jsonl|json|traj)(\.gz)?$/, '');
}

function unknownFormat(name: string): Error {
  return wnwError('WNW_ERR_INPUT_FORMAT', `unknown format "${name}"; valid formats: ${TRAJECTORY_FORMATS.join(', ')}`, {
    details: { field: 'format', format: name, valid: [...TRAJECTORY_FORMATS] },
  });
}

/**
 * Imports candidates from files, folders or globs. Each file's format is detected from its content
 * (or forced with `format`); bad records are issues (`onInvalid: 'skip'`) or thrown (default).
 * A trajectory id seen twice is an issue too: pass `source` or `sourceFrom: 'file'` to tell runs apart.
 */
export async function importTrajectories(
  paths: string | readonly string[],
  options: ImportTrajectoriesOptions = {},
): Promise<ImportResult<Trajectory>> {
  checkFormat(options.format);
  return importTrajectoryFiles(await expandInputs(typeof paths === 'string' ? [paths] : paths), options);
}

/** Throws WNW_ERR_INPUT_FORMAT for a `format` no importer reads. */
export function checkFormat(format: string | undefined): void {
  if (format !== undefined && !isTrajectoryFormat(format)) throw unknownFormat(format);
}

/** `importTrajectories` of files already expanded (`expandInputs`): each is read as named, never as a glob. */
export async function importTrajectoryFiles(
  files: readonly string[],
  options: ImportTrajectoriesOptions = {},
): Promise<ImportResult<Trajectory>> {
  checkFormat(options.format);
  const issues = new IssueCollector(options.onInvalid);
  const items: Trajectory[] = [];
  const firstFile = new Map<string, string>();
  for (const file of files) {
    const format = (options.format as TrajectoryFormat | undefined) ?? (await detectFormat(file, options.signal));
    if (format === undefined) {
      issues.report(
        { file },
        'format',
        `matches no importer; pass a format, one of: ${TRAJECTORY_FORMATS.join(', ')}`,
        'WNW_ERR_INPUT_FORMAT',
      );
      continue;
    }
    const fileOptions: ImportOptions = {
      ...options,
      ...(options.sourceFrom === 'file' && options.source === undefined ? { source: sourceNameOf(file) } : {}),
    };
    const take = (trajectory: Trajectory): void => {
      const seen = firstFile.get(trajectory.id);
      if (seen !== undefined) {
        issues.report(
          { file, record: trajectory.id },
          'id',
          `duplicate trajectory id ${trajectory.id} (first in ${seen}); give each run its own source`,
        );
        return;
      }
      firstFile.set(trajectory.id, file);
      if (options.onItem) options.onItem(trajectory);
      else items.push(trajectory);
    };
    // With a sink, each record passes the duplicate check as it is read (after the issues before it).
    const result = await IMPORTERS[format](
      file,
      options.onItem ? { ...fileOptions, onItem: (item) => take(item as Trajectory) } : fileOptions,
    );
    pushAll(issues.issues, result.issues);
    for (const trajectory of result.items) take(trajectory);
  }
  return { items, issues: issues.issues };
}

/** Imports SWE-bench task records from files, folders or globs; an instance id seen twice is an issue. */
export async function importTasks(
  paths: string | readonly string[],
  options: Pick<ImportOptions, 'onInvalid' | 'signal'> & { onItem?: (task: Task) => void } = {},
): Promise<ImportResult<Task>> {
  const issues = new IssueCollector(options.onInvalid);
  const items: Task[] = [];
  const seen = new Set<string>();
  for (const file of await expandInputs(typeof paths === 'string' ? [paths] : paths)) {
    const take = (task: Task): void => {
      if (seen.has(task.instance_id)) {
        issues.report({ file, record: task.instance_id }, 'instance_id', `duplicate task ${task.instance_id}`);
        return;
      }
      seen.add(task.instance_id);
      if (options.onItem) options.onItem(task);
      else items.push(task);
    };
    const { onItem, ...rest } = options;
    const result = await importSwebenchTasks(file, onItem ? { ...rest, onItem: (item: unknown) => take(item as Task) } : rest);
    pushAll(issues.issues, result.issues);
    for (const task of result.items) take(task);
  }
  return { items, issues: issues.issues };
}

/** Imports labels from files, folders or globs and merges them; a conflicting label is an issue. */
export async function importLabels(paths: string | readonly string[], options: LabelOptions = {}): Promise<LabelsResult> {
  const issues = new IssueCollector(options.onInvalid);
  const labels: Labels = new Map();
  const couldNotRun = new Set<string>();
  for (const file of await expandInputs(typeof paths === 'string' ? [paths] : paths)) {
    const result = await importSwebenchLabels(file, options);
    pushAll(issues.issues, result.issues);
    for (const key of result.couldNotRun) couldNotRun.add(key);
    for (const [key, resolved] of result.labels) {
      const previous = labels.get(key);
      if (previous !== undefined && previous !== resolved) {
        issues.report({ file, record: key }, 'resolved', `conflicting labels for ${key}: ${previous} and ${resolved}`);
        continue;
      }
      labels.set(key, resolved);
    }
  }
  for (const key of labels.keys()) couldNotRun.delete(key);
  return { labels, couldNotRun, issues: issues.issues };
}

export { importSwebenchPredictions, predictionToTrajectory } from './swebench-predictions.js';
export { importOpenAIChat, importWinnowerTrajectories, openAIChatToTrajectory, winnowerRecordToTrajectory } from './openai-chat.js';
export { importMiniSweAgent, miniSweAgentRunToTrajectory, miniSweAgentMessagesToTrajectory } from './mini-swe-agent.js';
export { mapMiniSweAgentExit } from './map-mini-swe-agent-exit.js';
export { importSweAgent, sweAgentToTrajectory } from './swe-agent.js';
export { mapSweAgentExit } from './map-swe-agent-exit.js';
export { importOpenHands, openHandsOutputToTrajectory, openHandsEventsToTrajectory } from './openhands.js';
export { mapOpenHandsExit } from './map-openhands-exit.js';
export { importSwebenchTasks, taskFromRecord } from './tasks.js';
export { importSwebenchLabels } from './labels.js';
