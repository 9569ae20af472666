/**
 * Training inputs: the same files `winnower rerank` reads (predictions or trajectory dumps, label
 * files, task records), joined into labelled candidates grouped into pools (one pool = the
 * candidates of one instance under one harness).
 */
import { wnwError } from '../errors.js';
import {
  applyLabelFiles,
  importLabels,
  importTasks,
  labelsFromTrajectories,
  labelKey,
  lookupLabel,
  type ImportIssue,
  type Labels,
  type LabelsResult,
} from '../formats/index.js';
import { importRuns, namedInput } from '../formats/import-runs.js';
import { repoNameOf, type Task, type Trajectory } from '../types/index.js';
import { reusedCopies } from './reused-copies.js';

export interface LabelledCandidate {
  trajectory: Trajectory;
  task: Task;
  resolved: boolean;
  /** `<benchmark>|<instance_id>` when the row names its benchmark, else the instance id. */
  pool: string;
  repo: string;
  benchmark: string;
  /** The row's licence as its source states it, or null when the row says nothing. */
  license: string | null;
  /** The row's `permissive` flag, or null when absent. */
  permissive: boolean | null;
  /** Where the row came from (`source_repo` when present, else the file). */
  origin: string;
}

export interface DatasetOptions {
  rollouts: string[];
  labels?: string[];
  tasks?: string[];
  /** How plain rollout paths name their source, as `rerank --source-from` (default: `file` when they are several files). */
  sourceFrom?: 'record' | 'file';
  /** Read every rollout file as this format instead of detecting it (`atif`, `openai-chat`, …). */
  format?: string;
  /** Keep only rows whose `permissive` flag is true (rows without the flag are refused). */
  permissiveOnly?: boolean;
  /** A malformed record: stop (default) or skip it and report it in `issues`. */
  onInvalid?: 'skip' | 'fail';
  signal?: AbortSignal;
}

export interface Dataset {
  candidates: LabelledCandidate[];
  /**
   * Candidates dropped: no label, their evaluation could not run (never unresolved rows), not
   * permissive when asked, or a retry's reused copy of a run the input already holds (reused-copies.ts).
   */
  dropped: { unlabelled: number; could_not_run: number; not_permissive: number; no_task: number; reused: number };
  issues: ImportIssue[];
}

const str = (value: unknown): string | null => (typeof value === 'string' && value !== '' ? value : null);

export async function loadDataset(options: DatasetOptions): Promise<Dataset> {
  // The same inputs and the same --source-from rule as `winnower rerank --candidates`.
  const imported = await importRuns(options.rollouts, {
    flag: '--rollouts',
    format: options.format,
    sourceFrom: options.sourceFrom,
    onInvalid: options.onInvalid,
    signal: options.signal,
  });
  const issues: ImportIssue[] = imported.issues;
  const trajectories: Trajectory[] = imported.items;
  if (trajectories.length === 0)
    throw wnwError('WNW_ERR_INPUT_INVALID', `no candidates in ${options.rollouts.join(', ')}`, { details: { field: 'rollouts' } });

  const labels: Labels = labelsFromTrajectories(trajectories);
  const files: LabelsResult[] = [];
  for (const input of (options.labels ?? []).map(namedInput)) {
    const result = await importLabels(input.path, {
      signal: options.signal,
      onInvalid: options.onInvalid,
      ...(input.name ? { source: input.name } : {}),
    });
    issues.push(...result.issues);
    files.push(result);
  }
  applyLabelFiles(labels, files);
  // Candidates a label file says could not run, with no verdict from any file: found the way labels are.
  const notRun: Labels = new Map(
    files
      .flatMap((file) => [...file.couldNotRun])
      .filter((key) => !labels.has(key))
      .map((key) => [key, true]),
  );
  const tasks = new Map<string, Task>();
  if (options.tasks?.length) {
    const result = await importTasks(options.tasks, { signal: options.signal, onInvalid: options.onInvalid });
    issues.push(...result.issues);
    for (const task of result.items) tasks.set(task.instance_id, task);
  }

  const dropped = { unlabelled: 0, could_not_run: 0, not_permissive: 0, no_task: 0, reused: 0 };
  const copies = reusedCopies(trajectories);
  const candidates: LabelledCandidate[] = [];
  const labelOf = recordNameLookup(labels, trajectories);
  const couldNotRun = recordNameLookup(notRun, trajectories);
  for (const trajectory of trajectories) {
    if (copies.has(trajectory)) {
      dropped.reused++;
      continue;
    }
    // A row's own label (meta.resolved) is per candidate, while label files key by (source,
    // instance) and cannot tell two rollouts of one policy on one instance apart (exported job
    // rows): the row's own label wins unless label files were given.
    const own = typeof trajectory.meta.resolved === 'boolean' ? trajectory.meta.resolved : undefined;
    if (labelOf(trajectory) === undefined && couldNotRun(trajectory)) {
      dropped.could_not_run++;
      continue;
    }
    const resolved = options.labels?.length ? (labelOf(trajectory) ?? own) : (own ?? labelOf(trajectory));
    if (resolved === undefined) {
      dropped.unlabelled++;
      continue;
    }
    const permissive = typeof trajectory.meta.permissive === 'boolean' ? trajectory.meta.permissive : null;
    if (options.permissiveOnly) {
      if (permissive === null) {
        throw wnwError('WNW_ERR_INPUT_INVALID', `--permissive-only: candidate ${trajectory.id} has no "permissive" field`, {
          details: { field: 'permissive', id: trajectory.id },
        });
      }
      if (!permissive) {
        dropped.not_permissive++;
        continue;
      }
    }
    let task = tasks.get(trajectory.instance_id);
    if (!task) {
      dropped.no_task += 1; // kept: scored without the issue text, as rerank does
      task = { instance_id: trajectory.instance_id, problem_statement: '', fail_to_pass: [], pass_to_pass: [], meta: {} };
    }
    const benchmark = str(trajectory.meta.benchmark) ?? 'unknown';
    candidates.push({
      trajectory,
      task,
      resolved,
      pool: benchmark === 'unknown' ? trajectory.instance_id : `${benchmark}|${trajectory.instance_id}`,
      repo: repoNameOf(task),
      benchmark,
      license: str(trajectory.meta.dataset_license),
      permissive,
      origin: str(trajectory.meta.source_repo) ?? trajectory.source,
    });
  }
  if (candidates.length === 0) throw noLabelledCandidates(labels, trajectories);
  return { candidates, dropped, issues };
}

/**
 * A candidate's label: by its source, else by the name its record gave (`model_name_or_path`,
 * kept when --source-from file or NAME=PATH renamed the source) when that name belongs to one
 * source only on that instance, so several prediction files of one labels file still match.
 */
function recordNameLookup(labels: Labels, trajectories: Trajectory[]): (trajectory: Trajectory) => boolean | undefined {
  const recordName = (trajectory: Trajectory) => str(trajectory.meta.model_name_or_path);
  const sourcesOf = new Map<string, Set<string>>();
  for (const trajectory of trajectories) {
    const name = recordName(trajectory);
    if (!name) continue;
    const key = labelKey(name, trajectory.instance_id);
    sourcesOf.set(key, (sourcesOf.get(key) ?? new Set()).add(trajectory.source));
  }
  return (trajectory) => {
    const bySource = lookupLabel(labels, trajectory.instance_id, trajectory.source);
    if (bySource !== undefined) return bySource;
    const name = recordName(trajectory);
    if (!name || sourcesOf.get(labelKey(name, trajectory.instance_id))?.size !== 1) return undefined;
    return lookupLabel(labels, trajectory.instance_id, name);
  };
}

/** No candidate matched a label: say which sources each side names, and how to make them meet. */
function noLabelledCandidates(labels: Labels, trajectories: Trajectory[]): Error {
  const list = (names: Iterable<string>) => {
    const sorted = [...new Set(names)].sort();
    return sorted.length > 8 ? `${sorted.slice(0, 8).join(', ')}, … (${sorted.length})` : sorted.join(', ');
  };
  // A label key is `source/instance_id`; instance ids carry no slash (SWE-bench's owner__repo-N).
  const labelSources = [...labels.keys()].map((key) => key.slice(0, key.lastIndexOf('/')));
  const candidateSources = trajectories.map((trajectory) => trajectory.source);
  const message =
    labels.size === 0
      ? 'no labelled candidates to train on (give --labels, or rows with "resolved")'
      : `no labelled candidates to train on: the labels name the sources ${list(labelSources)}, the candidates have ${list(candidateSources)}; ` +
        'use --source-from record (the names inside the records), or name each run as the labels do (--rollouts NAME=PATH, --labels NAME=PATH)';
  return wnwError('WNW_ERR_INPUT_INVALID', message, {
    details: {
      field: 'labels',
      label_sources: [...new Set(labelSources)].sort(),
      candidate_sources: [...new Set(candidateSources)].sort(),
    },
  });
}
