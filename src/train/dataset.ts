/**
 * Training inputs: the same files `winnower rerank` reads (predictions or trajectory dumps, label
 * files, task records), joined into labelled candidates grouped into pools (one pool = the
 * candidates of one instance under one harness).
 */
import { wnwError } from '../errors.js';
import { importLabels, importTasks, labelsFromTrajectories, lookupLabel, type ImportIssue, type Labels } from '../formats/index.js';
import { importRuns, namedInput } from '../formats/import-runs.js';
import { repoNameOf, type Task, type Trajectory } from '../types/index.js';

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
  /** Keep only rows whose `permissive` flag is true (rows without the flag are refused). */
  permissiveOnly?: boolean;
  /** A malformed record: stop (default) or skip it and report it in `issues`. */
  onInvalid?: 'skip' | 'fail';
  signal?: AbortSignal;
}

export interface Dataset {
  candidates: LabelledCandidate[];
  /** Candidates dropped: no label, or not permissive when asked. */
  dropped: { unlabelled: number; not_permissive: number; no_task: number };
  issues: ImportIssue[];
}

const str = (value: unknown): string | null => (typeof value === 'string' && value !== '' ? value : null);

export async function loadDataset(options: DatasetOptions): Promise<Dataset> {
  // The same inputs and the same --source-from rule as `winnower rerank --candidates`.
  const imported = await importRuns(options.rollouts, {
    flag: '--rollouts',
    sourceFrom: options.sourceFrom,
    onInvalid: options.onInvalid,
    signal: options.signal,
  });
  const issues: ImportIssue[] = imported.issues;
  const trajectories: Trajectory[] = imported.items;
  if (trajectories.length === 0)
    throw wnwError('WNW_ERR_INPUT_INVALID', `no candidates in ${options.rollouts.join(', ')}`, { details: { field: 'rollouts' } });

  const labels: Labels = labelsFromTrajectories(trajectories);
  for (const input of (options.labels ?? []).map(namedInput)) {
    const result = await importLabels(input.path, {
      signal: options.signal,
      onInvalid: options.onInvalid,
      ...(input.name ? { source: input.name } : {}),
    });
    issues.push(...result.issues);
    for (const [key, value] of result.labels) labels.set(key, value);
  }
  const tasks = new Map<string, Task>();
  if (options.tasks?.length) {
    const result = await importTasks(options.tasks, { signal: options.signal, onInvalid: options.onInvalid });
    issues.push(...result.issues);
    for (const task of result.items) tasks.set(task.instance_id, task);
  }

  const dropped = { unlabelled: 0, not_permissive: 0, no_task: 0 };
  const candidates: LabelledCandidate[] = [];
  for (const trajectory of trajectories) {
    // A row's own label (meta.resolved) is per candidate, while label files key by (source,
    // instance) and cannot tell two rollouts of one policy on one instance apart (exported job
    // rows): the row's own label wins unless label files were given.
    const own = typeof trajectory.meta.resolved === 'boolean' ? trajectory.meta.resolved : undefined;
    const resolved = options.labels?.length
      ? (lookupLabel(labels, trajectory.instance_id, trajectory.source) ?? own)
      : (own ?? lookupLabel(labels, trajectory.instance_id, trajectory.source));
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
  if (candidates.length === 0)
    throw wnwError('WNW_ERR_INPUT_INVALID', 'no labelled candidates to train on (give --labels, or rows with "resolved")', {
      details: { field: 'labels' },
    });
  return { candidates, dropped, issues };
}
