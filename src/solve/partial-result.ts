/**
 * The result of a solve job that stopped before its end — the server shut down or died while it
 * ran: a selection among the candidates it had finished, with the evidence they had (score,
 * tests), marked `partial` with the reason. Built from the job store alone, so it works after a
 * restart as well as at shutdown.
 */
import { scoredBy, type ScoredBy, type ScorerIdentity } from '../scoring/scorer-identity.js';
import { select, defaultStrategy, type SelectOptions } from '../select/index.js';
import type { CandidateRecord, JobRecord, JobStore } from '../store/types.js';
import type { Selection, Strategy } from '../types/index.js';
import { CheckEvidence } from './evidence.js';
import { candidateSummary, chosenView, outcomeOf, usageTotals } from './result-view.js';
import type { SolveResult } from './run-solve.js';

export interface PartialSolveResult
  extends Pick<SolveResult, 'instance_id' | 'outcome' | 'chosen' | 'selection' | 'candidates' | 'rollouts' | 'checks'> {
  /** Always true: the job did not run to its end; `chosen` is the best of what had finished. */
  partial: true;
  reason: string;
  /** Which model and selector scored the job (null: no value model, or a job started before this was recorded). */
  scored_by: ScoredBy | null;
  /** What the finished rollouts used; the job's other figures (time, savings) are not known. */
  compute: { policy_calls: number; tokens: number; saved_rollouts: number; saved_fraction: number };
}

/** The fields of a stored /solve request the selection needs; anything else is ignored. */
interface StoredRequest {
  instance_id?: string;
  issue?: string;
  n?: number;
  strategy?: Strategy;
  verify?: {
    enabled?: boolean;
    test_command?: string;
    test_patch?: string;
    fail_to_pass?: string[];
    pass_to_pass?: string[];
  };
}

/** The task's tests as the stored request named them, so the tamper checks see what the job saw. */
function storedTask(request: StoredRequest): SelectOptions['task'] {
  const verify = request.verify ?? {};
  const strings = (value: unknown) => (Array.isArray(value) && value.every((item) => typeof item === 'string') ? value : undefined);
  const text = (value: unknown) => (typeof value === 'string' ? value : undefined);
  const task = {
    problem_statement: text(request.issue) ?? '',
    test_command: text(verify.test_command),
    test_patch: text(verify.test_patch),
    fail_to_pass: strings(verify.fail_to_pass),
    pass_to_pass: strings(verify.pass_to_pass),
  };
  return Object.fromEntries(Object.entries(task).filter(([, value]) => value !== undefined)) as SelectOptions['task'];
}

export async function partialSolveResult(store: JobStore, job: JobRecord, reason: string): Promise<PartialSolveResult> {
  const request = (job.request ?? {}) as StoredRequest;
  const candidates = await store.listCandidates(job.id);
  const finished = candidates.filter((candidate) => candidate.status === 'finished' && candidate.trajectory);
  // The checks' evidence so far, from the job's stored events (as the running job built it).
  const evidence = new CheckEvidence({ regression: false, reproduction: false });
  const events = await store.listEvents(job.id);
  for (const event of events) evidence.apply(event);
  // The model the job had pinned, as its job-start event recorded it (src/server/solve-job.ts).
  const scorer = events.find((event) => event.type === 'job-start')?.scorer as ScorerIdentity | null | undefined;
  const instanceId = request.instance_id ?? finished[0]?.trajectory?.instance_id ?? 'task';
  // As the job would have chosen; without its value model at hand a learned selector is not available.
  const strategy = request.strategy ?? defaultStrategy(request.verify?.enabled === true);
  const selection: Selection = select(
    strategy,
    finished.map((candidate) => {
      const checks = evidence.forCandidate(candidate.index);
      return {
        trajectory: candidate.trajectory!,
        ...(candidate.score ? { score: candidate.score } : {}),
        ...(candidate.verify ? { verify: candidate.verify } : {}),
        ...(checks ? { checks } : {}),
      };
    }),
    { instanceId, task: storedTask(request) },
  );
  const chosen = finished.find((candidate) => candidate.trajectory!.id === selection.chosen);
  const count = (status: CandidateRecord['status']) => candidates.filter((candidate) => candidate.status === status).length;
  const planned = request.n ?? candidates.length;
  const trajectories = candidates.flatMap((candidate) => (candidate.trajectory ? [candidate.trajectory] : []));
  return {
    partial: true,
    reason,
    instance_id: instanceId,
    outcome: outcomeOf(chosenView(chosen)),
    chosen: chosenView(chosen),
    selection,
    candidates: candidates.map((candidate) => candidateSummary(candidate, job.id, evidence.forCandidate(candidate.index))),
    rollouts: {
      planned,
      finished: count('finished'),
      failed: count('failed'),
      // Rollouts never started count as cancelled too: the interruption stopped them.
      cancelled: count('cancelled') + Math.max(0, planned - candidates.length),
      skipped: count('skipped'),
    },
    compute: {
      ...usageTotals(trajectories),
      saved_rollouts: 0,
      saved_fraction: 0,
    },
    checks: evidence.view(),
    scored_by: scoredBy(scorer ?? undefined, selection.strategy),
  };
}

/**
 * At start-up: marks the jobs a previous process left running as interrupted (src/store) and
 * gives each solve job its partial result. Returns their ids.
 */
export async function recoverInterrupted(store: JobStore): Promise<string[]> {
  const ids = await store.markInterrupted();
  for (const id of ids) {
    const job = await store.getJob(id);
    if (job?.kind === 'solve')
      await store.updateJob(id, {
        result: await partialSolveResult(
          store,
          job,
          'the server stopped while this job was running (found at restart); chosen among the candidates that had finished',
        ),
      });
  }
  return ids;
}
