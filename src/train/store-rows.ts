/**
 * `winnower train --from-store <data_dir>`: the verified candidates of past `/solve` and `/rerank`
 * jobs in a server's job store, as labelled rows. A candidate is a row when it has a trajectory and
 * a test outcome that says whether it resolved the task: `resolved` (label true), `unresolved` or
 * `apply_failed` (false); `error` and `timeout` say nothing about the patch and are left out. One
 * job's candidates form one pool; trajectory ids are prefixed with the job id so that jobs never
 * collide, unless they already start with it: a rollout's id, `<job_id>/<index>` (the index is its
 * seed), is its identity in the job and stays the same in every export. The task is the job's own: its issue text (or rerank task) and repository.
 * A retry's candidate taken from the earlier job says so in `meta.reused_from`; training reads each
 * retry family once (retry-families.ts), an export every job.
 */
import { existsSync } from 'node:fs';
import { basename, join } from 'node:path';
import { wnwError } from '../errors.js';
import { createPostgresStore } from '../store/postgres-store.js';
import { createSqliteStore } from '../store/sqlite-store.js';
import { isPostgresUrl, redactStoreUrl } from '../store/store-url.js';
import type { CandidateRecord, JobRecord, JobStore } from '../store/types.js';
import { repoNameOf, type Task, type Trajectory, type VerifyResult } from '../types/index.js';
import { runOutcome } from '../verify/outcome.js';
import type { LabelledCandidate } from './dataset.js';
import { leftOutOfFamilies } from './retry-families.js';

/** A test outcome's label: a run that could not run (src/verify/outcome.ts) has none, so it is never an unresolved row. */
export function labelOf(verify: Pick<VerifyResult, 'status'> | null): boolean | undefined {
  if (!verify) return undefined;
  const outcome = runOutcome(verify.status);
  return outcome === 'could_not_run' ? undefined : outcome === 'passed';
}

function taskOf(request: unknown, instanceId: string): Task {
  const body = (request ?? {}) as {
    issue?: unknown;
    task?: { problem_statement?: unknown; repo?: { name?: unknown } };
    repo?: { url?: unknown; path?: unknown };
  };
  const statement =
    typeof body.issue === 'string' ? body.issue : typeof body.task?.problem_statement === 'string' ? body.task.problem_statement : '';
  const location = typeof body.repo?.url === 'string' ? body.repo.url : typeof body.repo?.path === 'string' ? body.repo.path : undefined;
  const name =
    typeof body.task?.repo?.name === 'string' ? body.task.repo.name : location ? basename(location).replace(/\.git$/, '') : undefined;
  return {
    instance_id: instanceId,
    problem_statement: statement,
    fail_to_pass: [],
    pass_to_pass: [],
    meta: {},
    ...(name ? { repo: { name } } : {}),
  } as Task;
}

/** A stored candidate with its job's task; `resolved` only when a test outcome says (labelOf). */
export interface StoredCandidate {
  trajectory: LabelledCandidate['trajectory'];
  task: Task;
  resolved: boolean | undefined;
  pool: string;
  /** The stored job and candidate it came from (for the evidence record). */
  job: JobRecord;
  record: CandidateRecord;
}

export interface StoreRowsOptions {
  /** Only candidates whose test outcome labels them (default true: the rows training reads). */
  labelledOnly?: boolean;
  /** Only this job's candidates. */
  jobId?: string;
  /** Each retry family's one counted job only (retry-families.ts), as training reads them (default false: an export records every job). */
  leaveOutSuperseded?: boolean;
}

export interface StoreRows {
  rows: StoredCandidate[];
  /** The jobs of retry families left out (with leaveOutSuperseded), newest first. */
  leftOut: string[];
}

/** Every job of the store, newest first, read page by page. */
async function allJobs(store: JobStore): Promise<JobRecord[]> {
  const jobs: JobRecord[] = [];
  let before: { created_at: string; id: string } | undefined;
  for (;;) {
    const page = await store.listJobs({ limit: 500, ...(before ? { before } : {}) });
    if (page.length === 0) return jobs;
    jobs.push(...page);
    const last = page.at(-1)!;
    before = { created_at: last.created_at, id: last.id };
  }
}

/** A stored candidate's row: its id prefixed with its job's unless it is a rollout of the job, its job, label and provenance in `meta`. */
function storedRow(
  job: JobRecord,
  candidate: CandidateRecord & { trajectory: Trajectory },
  resolved: boolean | undefined,
): StoredCandidate {
  // Which model and selector scored the job, so exported rows say what their values came from.
  const scoredBy = (job.result as { scored_by?: unknown } | null | undefined)?.scored_by;
  return {
    trajectory: {
      ...candidate.trajectory,
      id: candidate.trajectory.id.startsWith(`${job.id}/`) ? candidate.trajectory.id : `${job.id}/${candidate.trajectory.id}`,
      meta: {
        ...candidate.trajectory.meta,
        job_id: job.id,
        ...(resolved !== undefined ? { resolved } : {}),
        ...(scoredBy ? { scored_by: scoredBy } : {}),
        // A retry's candidate taken from the earlier job: the same run as that job's candidate.
        ...(candidate.reused_from ? { reused_from: candidate.reused_from } : {}),
      },
    },
    task: taskOf(job.request, candidate.trajectory.instance_id),
    resolved,
    pool: `${job.id}|${candidate.trajectory.instance_id}`,
    job,
    record: candidate,
  };
}

/** The store's rows and, with leaveOutSuperseded, the jobs of retry families that were left out. */
export async function readStoreRows(dataDir: string, options: StoreRowsOptions = {}): Promise<StoreRows> {
  // Opening the store creates it: a misspelt folder would become an empty store, and the answer
  // "no candidates" would hide the typo. A postgres:// URL is the shared store of several replicas.
  if (!isPostgresUrl(dataDir) && !existsSync(join(dataDir, 'winnower.db')))
    throw wnwError(
      'WNW_ERR_INPUT_INVALID',
      `no job store at ${dataDir} (no winnower.db there): give the data dir \`winnower serve\` stored its jobs in (server.data_dir, default .winnower)`,
      { details: { field: 'data_dir' } },
    );
  const labelledOnly = options.labelledOnly ?? true;
  const store = isPostgresUrl(dataDir) ? await createPostgresStore(dataDir) : createSqliteStore(dataDir);
  const rows: StoredCandidate[] = [];
  try {
    const jobs =
      options.jobId !== undefined ? [await store.getJob(options.jobId)].filter((job) => job !== undefined) : await allJobs(store);
    // A job id that is not there is a typo to name, not an empty answer.
    if (options.jobId !== undefined && jobs.length === 0)
      throw wnwError(
        'WNW_ERR_INPUT_INVALID',
        `no job ${options.jobId} in the job store at ${isPostgresUrl(dataDir) ? redactStoreUrl(dataDir) : dataDir}`,
        {
          details: { field: 'job' },
        },
      );
    const leftOut = options.leaveOutSuperseded ? leftOutOfFamilies(jobs) : new Set<string>();
    for (const job of jobs) {
      if ((job.kind !== 'solve' && job.kind !== 'rerank') || leftOut.has(job.id)) continue;
      for (const candidate of await store.listCandidates(job.id)) {
        const resolved = labelOf(candidate.verify);
        if (!candidate.trajectory || (labelledOnly && resolved === undefined)) continue;
        rows.push(storedRow(job, { ...candidate, trajectory: candidate.trajectory }, resolved));
      }
    }
    return { rows, leftOut: jobs.filter((job) => leftOut.has(job.id)).map((job) => job.id) };
  } finally {
    await store.close();
  }
}

/** Every candidate with a trajectory of every solve and rerank job in `dataDir`'s store (or the Postgres store at that URL), newest job first. */
export async function candidatesFromStore(dataDir: string, options: StoreRowsOptions = {}): Promise<StoredCandidate[]> {
  return (await readStoreRows(dataDir, options)).rows;
}

/** The rows `train --from-store` learns from: each retry family once (retry-families.ts), and the jobs left out. */
export async function trainingRowsFromStore(dataDir: string): Promise<{ candidates: LabelledCandidate[]; leftOut: string[] }> {
  const { rows, leftOut } = await readStoreRows(dataDir, { leaveOutSuperseded: true });
  return {
    leftOut,
    candidates: rows.map((row) => ({
      trajectory: row.trajectory,
      task: row.task,
      resolved: row.resolved!,
      pool: row.pool,
      repo: repoNameOf(row.task),
      benchmark: 'store',
      license: null,
      permissive: null,
      origin: `store ${dataDir}`,
    })),
  };
}

/** Every verified candidate of `dataDir`'s store as training reads them (each retry family once), newest job first. */
export async function labelledFromStore(dataDir: string): Promise<LabelledCandidate[]> {
  return (await trainingRowsFromStore(dataDir)).candidates;
}
