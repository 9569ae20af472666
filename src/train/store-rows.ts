/**
 * `winnower train --from-store <data_dir>`: the verified candidates of past `/solve` and `/rerank`
 * jobs in a server's job store, as labelled rows. A candidate is a row when it has a trajectory and
 * a test outcome that says whether it resolved the task: `resolved` (label true), `unresolved` or
 * `apply_failed` (false); `error` and `timeout` say nothing about the patch and are left out. One
 * job's candidates form one pool; trajectory ids are prefixed with the job id so that jobs never
 * collide, unless they already start with it: a rollout's id, `<job_id>/<index>` (the index is its
 * seed), is its identity in the job and stays the same in every export. The task is the job's own: its issue text (or rerank task) and repository.
 */
import { existsSync } from 'node:fs';
import { basename, join } from 'node:path';
import { wnwError } from '../errors.js';
import { createPostgresStore } from '../store/postgres-store.js';
import { createSqliteStore } from '../store/sqlite-store.js';
import { isPostgresUrl } from '../store/store-url.js';
import type { CandidateRecord, JobRecord } from '../store/types.js';
import { repoNameOf, type Task, type VerifyResult } from '../types/index.js';
import { runOutcome } from '../verify/outcome.js';
import type { LabelledCandidate } from './dataset.js';

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
}

/** Every candidate with a trajectory of every finished solve and rerank job in `dataDir`'s store (or the Postgres store at that URL), newest job first. */
export async function candidatesFromStore(dataDir: string, options: StoreRowsOptions = {}): Promise<StoredCandidate[]> {
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
    let before: { created_at: string; id: string } | undefined;
    for (;;) {
      const jobs =
        options.jobId !== undefined
          ? [await store.getJob(options.jobId)].filter((job) => job !== undefined)
          : await store.listJobs({ limit: 500, ...(before ? { before } : {}) });
      if (jobs.length === 0) break;
      for (const job of jobs) {
        if (job.kind !== 'solve' && job.kind !== 'rerank') continue;
        // Which model and selector scored the job, so exported rows say what their values came from.
        const scoredBy = (job.result as { scored_by?: unknown } | null | undefined)?.scored_by;
        for (const candidate of await store.listCandidates(job.id)) {
          const resolved = labelOf(candidate.verify);
          if (!candidate.trajectory || (labelledOnly && resolved === undefined)) continue;
          rows.push({
            trajectory: {
              ...candidate.trajectory,
              id: candidate.trajectory.id.startsWith(`${job.id}/`) ? candidate.trajectory.id : `${job.id}/${candidate.trajectory.id}`,
              meta: {
                ...candidate.trajectory.meta,
                job_id: job.id,
                ...(resolved !== undefined ? { resolved } : {}),
                ...(scoredBy ? { scored_by: scoredBy } : {}),
              },
            },
            task: taskOf(job.request, candidate.trajectory.instance_id),
            resolved,
            pool: `${job.id}|${candidate.trajectory.instance_id}`,
            job,
            record: candidate,
          });
        }
      }
      if (options.jobId !== undefined) break;
      const last = jobs.at(-1)!;
      before = { created_at: last.created_at, id: last.id };
    }
  } finally {
    await store.close();
  }
  return rows;
}

/** Every verified candidate of every finished job in `dataDir`'s store, newest job first. */
export async function labelledFromStore(dataDir: string): Promise<LabelledCandidate[]> {
  return (await candidatesFromStore(dataDir)).map((row) => ({
    trajectory: row.trajectory,
    task: row.task,
    resolved: row.resolved!,
    pool: row.pool,
    repo: repoNameOf(row.task),
    benchmark: 'store',
    license: null,
    permissive: null,
    origin: `store ${dataDir}`,
  }));
}
