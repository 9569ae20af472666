/**
 * Harbor's job and trial layout for `winnower run` (docs/harbor.md#job-and-trial-layout): one
 * trial folder per candidate, `<task[:32]>__<7 chars>/` with `result.json`,
 * `agent/trajectory.json` (ATIF) and `verifier/` (the reward file and the verifier's output), and
 * the job's `result.json` with its counts and reward statistics, so Harbor's viewers and scripts
 * read a winnower run as one of theirs.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Trajectory } from '../../types/trajectory.js';
import type { VerifyResult } from '../../types/verify.js';
import { checkedAtif } from '../atif/index.js';

export interface TrialRecord {
  /** The winnower job the candidate belongs to, and its rollout index: with the task, the trial's identity. */
  jobId: string;
  index: number;
  task: { name: string; dir: string };
  agent: { name: string; version: string; model?: string };
  trajectory: Trajectory | null;
  verify: VerifyResult | null;
  error: { code: string; message: string } | null;
  startedAt: string;
  finishedAt: string;
}

/** `<task[:32]>__<7 chars>`, the 7 chars from the job id and index, so a rerun names the same trial alike. */
export function trialName(taskName: string, jobId: string, index: number): string {
  const safe = taskName.replace(/[^A-Za-z0-9._-]+/g, '-').slice(0, 32);
  return `${safe}__${createHash('sha256').update(`${jobId}/${index}`).digest('hex').slice(0, 7)}`;
}

/** The task folder's fingerprint: its task.toml and instruction.md. */
export function taskChecksum(dir: string): string {
  const hash = createHash('sha256');
  for (const file of ['task.toml', 'instruction.md']) hash.update(readFileSync(join(dir, file)));
  return hash.digest('hex');
}

/** Writes one trial folder under `jobDir` and returns its path. */
export function writeTrial(jobDir: string, record: TrialRecord): string {
  const name = trialName(record.task.name, record.jobId, record.index);
  const dir = join(jobDir, name);
  mkdirSync(join(dir, 'agent'), { recursive: true });
  mkdirSync(join(dir, 'verifier'), { recursive: true });
  if (record.trajectory) writeJson(join(dir, 'agent', 'trajectory.json'), checkedAtif(record.trajectory));
  const { verify } = record;
  if (verify?.reward) {
    if (verify.reward.file === 'reward.json') writeJson(join(dir, 'verifier', 'reward.json'), verify.reward.rewards);
    else writeFileSync(join(dir, 'verifier', 'reward.txt'), `${verify.reward.value}\n`);
  }
  if (verify) writeFileSync(join(dir, 'verifier', 'test-stdout.txt'), verify.log_tail);
  const exception = exceptionOf(record);
  writeJson(join(dir, 'result.json'), {
    id: `${record.jobId}/${record.index}`,
    task_name: record.task.name,
    trial_name: name,
    trial_uri: pathToFileURL(dir).href,
    task_id: { path: record.task.dir },
    source: null,
    task_checksum: taskChecksum(record.task.dir),
    config: { job_id: record.jobId, rollout_index: record.index },
    agent_info: {
      name: record.agent.name,
      version: record.agent.version,
      ...(record.agent.model ? { model_info: { name: record.agent.model } } : {}),
    },
    agent_result: {
      n_input_tokens: record.trajectory?.usage?.prompt_tokens ?? null,
      n_cache_tokens: null,
      n_output_tokens: record.trajectory?.usage?.completion_tokens ?? null,
      cost_usd: record.trajectory?.usage?.cost ?? null,
    },
    verifier_result: verify?.reward ? { rewards: verify.reward.rewards } : null,
    verifier_environment_mode: 'separate',
    exception_info: exception ? { ...exception, exception_traceback: '', occurred_at: record.finishedAt } : null,
    started_at: record.startedAt,
    finished_at: record.finishedAt,
  });
  return dir;
}

/** Why a trial has no reward: its rollout failed, or its verifier timed out or could not be graded. */
function exceptionOf(record: TrialRecord): { exception_type: string; exception_message: string } | null {
  if (record.error) return { exception_type: record.error.code, exception_message: record.error.message };
  const verify = record.verify;
  if (verify?.status === 'timeout')
    return { exception_type: 'VerifierTimeoutError', exception_message: verify.error ?? 'verifier timed out' };
  if (verify && !verify.reward)
    return { exception_type: `verify:${verify.status}`, exception_message: verify.error ?? verify.apply_error ?? verify.status };
  return null;
}

/** The job's result.json from every trial folder under `jobDir` (trial results are not repeated in it, as in Harbor). */
export function writeJobResult(jobDir: string, job: { id: string; startedAt: string; finishedAt: string; evalKey: string }): void {
  const trials = readdirSync(jobDir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(join(jobDir, entry.name, 'result.json')))
    .map((entry) => JSON.parse(readFileSync(join(jobDir, entry.name, 'result.json'), 'utf8')) as TrialResultFile)
    .sort((a, b) => a.trial_name.localeCompare(b.trial_name));
  const errored = trials.filter((trial) => trial.exception_info !== null);
  const rewardStats: Record<string, Record<string, string[]>> = {};
  for (const trial of trials)
    for (const [key, value] of Object.entries(trial.verifier_result?.rewards ?? {})) {
      rewardStats[key] ??= {};
      (rewardStats[key][String(value)] ??= []).push(trial.trial_name);
    }
  const exceptionStats: Record<string, string[]> = {};
  for (const trial of errored) (exceptionStats[trial.exception_info!.exception_type] ??= []).push(trial.trial_name);
  writeJson(join(jobDir, 'result.json'), {
    id: job.id,
    started_at: job.startedAt,
    updated_at: job.finishedAt,
    finished_at: job.finishedAt,
    n_total_trials: trials.length,
    stats: {
      n_completed_trials: trials.length - errored.length,
      n_errored_trials: errored.length,
      n_running_trials: 0,
      n_pending_trials: 0,
      n_cancelled_trials: 0,
      n_retries: 0,
      evals: {
        [job.evalKey]: {
          n_trials: trials.length,
          n_errors: errored.length,
          metrics: [],
          reward_stats: rewardStats,
          exception_stats: exceptionStats,
        },
      },
    },
  });
}

interface TrialResultFile {
  trial_name: string;
  verifier_result: { rewards: Record<string, number> } | null;
  exception_info: { exception_type: string } | null;
}

function writeJson(path: string, value: unknown): void {
  writeFileSync(path, `${JSON.stringify(value, null, 2)}\n`);
}
