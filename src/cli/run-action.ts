/** What `winnower run` does once its flags are parsed; loaded only when it runs (run.ts registers it). */
import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { loadConfig } from '../config.js';
import { ERROR_CATALOG, type ErrorCode, wnwError } from '../errors.js';
import { trialName, writeJobResult, writeTrial } from '../formats/harbor/job-layout.js';
import { readHarborTask } from '../formats/harbor/read-task.js';
import { importTrajectories } from '../formats/index.js';
import type { Trajectory, VerifyResult } from '../types/index.js';
import type { RunFlags } from './run.js';
import { createRuntime } from './runtime.js';

/** The job folder's record of the tasks it finished, one JSON line each: what a resumed run skips. */
const PROGRESS_FILE = 'winnower-tasks.jsonl';
const VERSION = '0.1.0';

interface CandidateView {
  index: number;
  status: string;
  trajectory: Trajectory | null;
  verify: VerifyResult | null;
  error: { code: string; message: string } | null;
}

interface JobView {
  job_id: string;
  status: string;
  created_at: string;
  updated_at: string;
  error: { message: string } | null;
  candidates: CandidateView[];
  result: { chosen: { index: number } | null; selection: { reason: string } } | null;
}

export async function runTasks(flags: RunFlags): Promise<void> {
  const root = resolve(flags.tasks);
  const tasks = existsSync(root)
    ? readdirSync(root, { withFileTypes: true })
        .filter((entry) => entry.isDirectory() && existsSync(join(root, entry.name, 'task.toml')))
        .map((entry) => entry.name)
        .sort()
    : [];
  if (tasks.length === 0)
    throw wnwError('WNW_ERR_INPUT_INVALID', `--tasks: no Harbor task folder (with task.toml) in ${root}`, {
      details: { field: '--tasks' },
    });
  // Every task is read before anything runs: a bad one is named now, not after hours of the others.
  const harbor = new Map(tasks.map((name) => [name, readHarborTask(join(root, name), { field: `--tasks ${name}`, env: process.env })]));
  const repos = flags.repos ? resolve(flags.repos) : undefined;
  for (const [name, task] of harbor) {
    if (repos && !existsSync(join(repos, name)))
      throw wnwError('WNW_ERR_INPUT_INVALID', `--repos: no checkout ${join(repos, name)} for task ${name}`, {
        details: { field: '--repos' },
      });
    if (!repos && !task.environment.image)
      throw wnwError(
        'WNW_ERR_INPUT_INVALID',
        `--tasks ${name}: its environment/Dockerfile builds an image, which winnower does not do: give the tasks' code with --repos`,
        { details: { field: '--repos' } },
      );
  }
  const jobName = flags.jobName ?? new Date().toISOString().slice(0, 19).replace('T', '__').replaceAll(':', '-');
  const jobDir = join(resolve(flags.jobsDir), jobName);
  mkdirSync(jobDir, { recursive: true });
  const progress = join(jobDir, PROGRESS_FILE);
  const done = new Set(
    existsSync(progress)
      ? readFileSync(progress, 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((line) => (JSON.parse(line) as { task: string }).task)
      : [],
  );
  const configFile = join(jobDir, 'config.json');
  const job = existsSync(configFile)
    ? (JSON.parse(readFileSync(configFile, 'utf8')) as { id: string; started_at: string })
    : { id: jobName, started_at: new Date().toISOString() };
  writeFileSync(configFile, `${JSON.stringify({ ...job, tasks: root, n: flags.n, repos: repos ?? null }, null, 2)}\n`);

  const config = loadConfig({
    file: flags.config,
    overrides: { policy: { url: flags.policyUrl, model: flags.policyModel, api_key: flags.policyKey }, log_level: 'warn' },
  });
  const recordings = flags.replay ? (await importTrajectories(flags.replay, { sourceFrom: 'file' })).items : undefined;
  const agent = { name: 'winnower', version: VERSION, ...(recordings ? {} : config.policy.model ? { model: config.policy.model } : {}) };
  const runtime = await createRuntime(config, { logger: false, harborHostEnv: true });
  try {
    for (const name of tasks) {
      if (done.has(name)) {
        console.error(`${name}: done in an earlier run, skipped`);
        continue;
      }
      const task = harbor.get(name)!;
      // A run cut off during this task left trials of a job that never finished: they go, the task runs anew.
      removeTrialsOf(jobDir, task.dir);
      const body = {
        harbor_task: task.dir,
        n: flags.n,
        ...(repos ? { repo: { path: join(repos, name) } } : {}),
        ...(recordings ? { policy: { kind: 'replay', recordings } } : {}),
        verify: {
          enabled: true,
          ...(flags.regression === false ? { regression: { enabled: false } } : {}),
          ...(flags.rewardThreshold !== undefined ? { reward_threshold: flags.rewardThreshold } : {}),
        },
      };
      const posted = await runtime.app.inject({ method: 'POST', url: '/solve?wait=true', payload: body });
      const view = posted.json() as JobView & { error?: { code: string; message: string; details?: { field?: string } } };
      if (!view.job_id) {
        const code = view.error?.code && view.error.code in ERROR_CATALOG ? (view.error.code as ErrorCode) : 'WNW_ERR_INPUT_INVALID';
        throw wnwError(code, `${name}: ${view.error?.message ?? `answered ${posted.statusCode}`}`, {
          details: { field: view.error?.details?.field ?? '--tasks' },
        });
      }
      const full = (await runtime.app.inject({ method: 'GET', url: `/jobs/${view.job_id}?trajectories=true` })).json() as JobView;
      for (const candidate of full.candidates)
        writeTrial(jobDir, {
          jobId: full.job_id,
          index: candidate.index,
          task: { name: task.name, dir: task.dir },
          agent,
          trajectory: candidate.trajectory,
          verify: candidate.verify,
          error: candidate.error ?? (candidate.status === 'failed' ? { code: 'rollout-failed', message: 'the rollout failed' } : null),
          startedAt: full.created_at,
          finishedAt: full.updated_at,
        });
      const chosen = full.result?.chosen ? trialName(task.name, full.job_id, full.result.chosen.index) : null;
      const resolved = full.candidates.find((candidate) => candidate.index === full.result?.chosen?.index)?.verify?.resolved ?? false;
      appendFileSync(
        progress,
        `${JSON.stringify({ task: name, job_id: full.job_id, status: full.status, chosen_trial: chosen, resolved, reason: full.result?.selection.reason ?? full.error?.message ?? null })}\n`,
      );
      console.error(`${name}: ${full.status}; chose ${chosen ?? 'nothing'}${resolved ? ' (resolved)' : ''}`);
    }
  } finally {
    await runtime.close();
    writeJobResult(jobDir, {
      id: job.id,
      startedAt: job.started_at,
      finishedAt: new Date().toISOString(),
      evalKey: `winnower__${agent.model ?? 'replay'}__adhoc`,
    });
  }
  console.log(jobDir);
}

/** Trial folders under `jobDir` written for the task at `taskDir` (their result.json says so). */
function removeTrialsOf(jobDir: string, taskDir: string): void {
  for (const entry of readdirSync(jobDir, { withFileTypes: true })) {
    const result = join(jobDir, entry.name, 'result.json');
    if (!entry.isDirectory() || !existsSync(result)) continue;
    const written = JSON.parse(readFileSync(result, 'utf8')) as { task_id?: { path?: string } };
    if (written.task_id?.path === taskDir) rmSync(join(jobDir, entry.name), { recursive: true, force: true });
  }
}
