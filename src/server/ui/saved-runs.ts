/**
 * What `winnower inspect` reads, as the job views the inspector draws: a saved job (`winnower
 * solve --out`, or `GET /jobs/:id?trajectories=true` saved to a file), or a `winnower rerank` run
 * (its scores file, with the candidate files it read for the trajectories and patches; each
 * instance a job), or bare trajectory files (grouped by instance, unscored).
 */
import { readFileSync, statSync } from 'node:fs';
import { wnwError } from '../../errors.js';
import { expandInputs } from '../../formats/index.js';
import { importRuns, namedInput } from '../../formats/import-runs.js';
import { configOf } from '../../select/priors.js';
import type { Trajectory } from '../../types/index.js';
import { resultOutcome } from '../views/job-overview.js';

export type JobJson = Record<string, unknown> & { job_id: string; candidates: Array<Record<string, unknown>> };

/** A line of a rerank scores file (src/rerank/rerank-batch.ts ScoreLine), as read back. */
interface ScoreLine {
  instance_id: string;
  trajectory_id: string;
  source?: string;
  chosen?: boolean;
  resolved?: boolean | null;
  score?: { value?: number } & Record<string, unknown>;
  error?: { code: string; message: string } | null;
}

export interface SavedRuns {
  jobs: JobJson[];
  /** Files read, by what they were taken for. */
  read: { jobs: string[]; scores: string[]; trajectories: string[] };
}

const isRecord = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);

/** The file's JSON values: one document, or one per line (JSONL); undefined when it is neither. */
function jsonValues(file: string): unknown[] | undefined {
  if (/\.gz$/i.test(file)) return undefined;
  const text = readFileSync(file, 'utf8');
  try {
    return [JSON.parse(text) as unknown];
  } catch {
    try {
      return text
        .split('\n')
        .filter((line) => line.trim() !== '')
        .map((line) => JSON.parse(line) as unknown);
    } catch {
      return undefined;
    }
  }
}

const isJobView = (value: unknown): value is JobJson =>
  isRecord(value) && typeof value.job_id === 'string' && Array.isArray(value.candidates);
const isScoreLine = (value: unknown): value is ScoreLine =>
  isRecord(value) &&
  typeof value.instance_id === 'string' &&
  typeof value.trajectory_id === 'string' &&
  'chosen' in value &&
  'score' in value;

/**
 * `arguments_` as `winnower rerank --candidates` takes them (files, folders, globs, `NAME=PATH`
 * naming a run), plus saved jobs and scores files, told apart by their content. Trajectories are
 * named by rerank's own rule (`importRuns`, `sourceFrom` as its --source-from), so their ids are the
 * ones in its scores file.
 */
export async function loadSavedRuns(arguments_: readonly string[], options: { sourceFrom?: 'record' | 'file' } = {}): Promise<SavedRuns> {
  const read: SavedRuns['read'] = { jobs: [], scores: [], trajectories: [] };
  const jobs: JobJson[] = [];
  const scores: ScoreLine[] = [];
  const trajectoryArguments: string[] = [];
  for (const argument of arguments_) {
    if (namedInput(argument).name !== undefined) {
      trajectoryArguments.push(argument);
      continue;
    }
    const files = await expandInputs([argument]);
    if (files.length === 0)
      throw wnwError('WNW_ERR_INPUT_NOT_FOUND', `nothing to inspect in ${argument}`, { details: { field: 'paths', path: argument } });
    const kinds = files.map((file) => {
      const values = jsonValues(file);
      return values?.length && values.every(isJobView)
        ? { file, jobs: values }
        : values?.length && values.every(isScoreLine)
          ? { file, scores: values }
          : { file };
    });
    if (kinds.every((kind) => kind.jobs || kind.scores)) {
      for (const kind of kinds) {
        if (kind.jobs) jobs.push(...kind.jobs), read.jobs.push(kind.file);
        if (kind.scores) scores.push(...kind.scores), read.scores.push(kind.file);
      }
    } else trajectoryArguments.push(argument);
  }
  let trajectories: Trajectory[] = [];
  if (trajectoryArguments.length) {
    const imported = await importRuns(trajectoryArguments, {
      flag: 'paths',
      onInvalid: 'skip',
      ...(options.sourceFrom ? { sourceFrom: options.sourceFrom } : {}),
    });
    trajectories = imported.items;
    read.trajectories.push(...trajectoryArguments);
    if (trajectories.length === 0 && imported.issues.length) {
      const first = imported.issues[0]!;
      throw wnwError(
        'WNW_ERR_INPUT_FORMAT',
        `${first.file}: neither a saved job, a rerank scores file nor trajectories: ${first.message}`,
        { details: { field: 'paths', file: first.file } },
      );
    }
  }
  const now = new Date().toISOString();
  const modified = (list: string[]) =>
    list.length ? new Date(Math.max(...list.map((file) => statSync(file).mtimeMs))).toISOString() : now;
  if (scores.length) jobs.push(...rerankJobs(scores, trajectories, modified(read.scores)));
  else if (trajectories.length) jobs.push(...trajectoryJobs(trajectories, now));
  return { jobs, read };
}

function candidateOf(index: number, trajectory: Trajectory | undefined, line: ScoreLine | undefined): Record<string, unknown> {
  const score = line?.score ?? null;
  return {
    index,
    status: trajectory || line ? 'finished' : 'pending',
    trajectory_id: trajectory?.id ?? line?.trajectory_id ?? null,
    exit: trajectory?.exit ?? null,
    steps:
      typeof trajectory?.meta.steps === 'number'
        ? trajectory.meta.steps
        : trajectory
          ? trajectory.messages.filter((message) => message.role === 'assistant').length
          : null,
    usage: trajectory?.usage ?? null,
    patch: trajectory?.patch ?? null,
    value: typeof score?.value === 'number' ? score.value : null,
    score,
    verify: null,
    error: line?.error ?? null,
    source: trajectory?.source ?? line?.source ?? null,
    // The configuration that made it (model, harness, temperature, run; docs/mixed-policies.md).
    config: trajectory ? configOf(trajectory) : null,
    ...(line && line.resolved !== undefined && line.resolved !== null ? { resolved: line.resolved } : {}),
    ...(trajectory ? { trajectory } : {}),
  };
}

/** One job per instance of a rerank run: its candidates in scores-file order, the chosen one, the labels. */
function rerankJobs(lines: ScoreLine[], trajectories: Trajectory[], at: string): JobJson[] {
  const byId = new Map(trajectories.map((trajectory) => [trajectory.id, trajectory]));
  const bySource = new Map(trajectories.map((trajectory) => [`${trajectory.instance_id}\u0000${trajectory.source}`, trajectory]));
  const instances = new Map<string, ScoreLine[]>();
  for (const line of lines) instances.set(line.instance_id, [...(instances.get(line.instance_id) ?? []), line]);
  return [...instances].map(([instanceId, group]) => {
    const candidates = group.map((line, index) =>
      candidateOf(index, byId.get(line.trajectory_id) ?? bySource.get(`${instanceId}\u0000${line.source ?? ''}`), line),
    );
    const chosenAt = group.findIndex((line) => line.chosen);
    const chosen = chosenAt >= 0 ? candidates[chosenAt]! : null;
    const labelled = group.filter((line) => typeof line.resolved === 'boolean');
    return {
      job_id: instanceId,
      kind: 'rerank',
      status: 'succeeded',
      progress: {},
      created_at: at,
      updated_at: at,
      error: null,
      candidates,
      result: {
        instance_id: instanceId,
        chosen: chosen
          ? {
              index: chosen.index,
              trajectory_id: chosen.trajectory_id,
              patch: chosen.patch ?? '',
              value: chosen.value,
              verify_status: null,
            }
          : null,
        labels: labelled.length
          ? {
              resolved: labelled.filter((line) => line.resolved).length,
              of: labelled.length,
              chosen_resolved: chosenAt >= 0 ? (group[chosenAt]!.resolved ?? null) : null,
            }
          : null,
      },
      overview: {
        instance_id: instanceId,
        n: candidates.length,
        policy: null,
        harness: null,
        strategy: null,
        chosen_index: chosen ? chosen.index : null,
        resolved: chosenAt >= 0 && typeof group[chosenAt]!.resolved === 'boolean' ? group[chosenAt]!.resolved : null,
      },
    } as JobJson;
  });
}

/** Trajectories alone: one job per instance, nothing scored or chosen. */
function trajectoryJobs(trajectories: Trajectory[], at: string): JobJson[] {
  const instances = new Map<string, Trajectory[]>();
  for (const trajectory of trajectories)
    instances.set(trajectory.instance_id, [...(instances.get(trajectory.instance_id) ?? []), trajectory]);
  return [...instances].map(([instanceId, group]) => ({
    job_id: instanceId,
    kind: 'trajectories',
    status: 'succeeded',
    progress: {},
    created_at: at,
    updated_at: at,
    error: null,
    candidates: group.map((trajectory, index) => candidateOf(index, trajectory, undefined)),
    result: null,
    overview: { instance_id: instanceId, n: group.length, policy: null, harness: null, strategy: null, chosen_index: null, resolved: null },
  }));
}

/** A saved job's headline for the list, from the view itself (a saved job has no request). */
export function savedOverview(job: JobJson): Record<string, unknown> {
  if (isRecord(job.overview)) return job.overview;
  const result = isRecord(job.result) ? job.result : {};
  const chosen = isRecord(result.chosen) ? result.chosen : null;
  const selection = isRecord(result.selection) ? result.selection : {};
  const status = chosen && typeof chosen.verify_status === 'string' ? chosen.verify_status : null;
  return {
    instance_id: typeof result.instance_id === 'string' ? result.instance_id : null,
    n: job.candidates.length,
    policy: null,
    harness: null,
    strategy: typeof selection.strategy === 'string' ? selection.strategy : null,
    chosen_index: chosen && typeof chosen.index === 'number' ? chosen.index : null,
    resolved: status === null ? null : status === 'resolved',
    outcome: resultOutcome(result),
  };
}
