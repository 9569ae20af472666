/**
 * One best-of-N job end to end: N rollouts in their own sandboxes (in waves, bounded
 * concurrency), each finished candidate scored and verified as soon as it is ready, an optional
 * stop rule that cancels what still runs and skips waves not started, then selection.
 * A failed rollout is a failed candidate, never a failed job; every sandbox is closed.
 */
import pLimit from 'p-limit';
import { loadAgentConfig } from '../candidates/agent-config.js';
import type { HarnessCatalog } from '../harness/harness-catalog.js';
import type { DefaultPolicy } from '../candidates/policy-factory.js';
import type { Policy } from '../candidates/types.js';
import { WinnowerError, toWinnowerError, type ErrorCode } from '../errors.js';
import { scoreCandidates } from '../rerank/score-candidates.js';
import type { Scorer } from '../rerank/scorers/types.js';
import { defaultStrategy, select } from '../rerank/select/index.js';
import type { SandboxProvider, SandboxSpec } from '../sandbox/types.js';
import type { CandidateStatus, ErrorRecord, JobStore } from '../store/types.js';
import type { Score, Selection, Task, Trajectory, VerifyResult } from '../types/index.js';
import { verifyCandidate } from '../verify/verify-candidate.js';
import type { JobEventBody } from './events.js';
import type { SolveRequest } from './solve-request.js';
import { prepareRollout, type PreparedRollout } from './prepare-rollout.js';
import { candidateSummary, chosenView, usageTotals, type ChosenView, type SolveCandidateSummary } from './result-view.js';
import { stopRuleMet } from './stop-rule.js';

export interface SolveDeps {
  sandboxes: SandboxProvider;
  /** Absent when no value model is configured: selection then uses consensus or tests. */
  scorer?: Scorer;
  /** The policy for rollout `index` (distinct seed per rollout). */
  createPolicy(policy: SolveRequest["policy"], index: number): Policy;
  store: JobStore;
  /** The harnesses this server can run (default: config/harnesses and the installed CLIs). */
  harnesses?: HarnessCatalog;
  /** The server's default policy, which harness rollouts without `policy` call through their proxy. */
  policyDefaults?: DefaultPolicy;
}

export type { SolveCandidateSummary } from './result-view.js';

export interface SolveResult {
  instance_id: string;
  chosen: ChosenView | null;
  selection: Selection;
  candidates: SolveCandidateSummary[];
  rollouts: { planned: number; finished: number; failed: number; cancelled: number; skipped: number };
  compute: { policy_calls: number; tokens: number; rollout_ms: number; saved_rollouts: number; saved_fraction: number };
  stopped_early: string | null;
  duration_ms: number;
}

interface Slot {
  index: number;
  status: CandidateStatus;
  trajectory?: Trajectory;
  score?: Score;
  verify?: VerifyResult;
  error?: ErrorRecord;
}

export function taskFromRequest(request: SolveRequest): Task {
  return {
    instance_id: request.instance_id,
    problem_statement: request.issue,
    repo: request.repo ? { url: request.repo.url, path: request.repo.path, base_commit: request.repo.commit } : undefined,
    image: request.image,
    test_command: request.verify.test_command,
    fail_to_pass: request.verify.fail_to_pass,
    pass_to_pass: request.verify.pass_to_pass,
    test_patch: request.verify.test_patch,
    meta: {},
  };
}

export async function runSolve(
  deps: SolveDeps,
  jobId: string,
  request: SolveRequest,
  hooks: { signal: AbortSignal; emit: (event: JobEventBody) => void },
): Promise<SolveResult> {
  const started = Date.now();
  const task = taskFromRequest(request);
  const spec: SandboxSpec = { repo: task.repo, image: task.image, network: false, label: jobId };
  const agentConfig = loadAgentConfig(request.agent.config, {
    ...(request.agent.step_limit ? { step_limit: request.agent.step_limit } : {}),
    ...(request.agent.time_limit_s ? { time_limit_s: request.agent.time_limit_s } : {}),
    ...(request.agent.command_timeout_s ? { command_timeout_s: request.agent.command_timeout_s } : {}),
  });
  const waves = request.waves ?? [request.n];
  const verifying = request.verify.enabled;
  const scorer = request.scoring.enabled ? deps.scorer : undefined;
  const slots: Slot[] = Array.from({ length: request.n }, (_, index) => ({ index, status: 'pending' }));
  const stopController = new AbortController();
  const signal = AbortSignal.any([hooks.signal, stopController.signal]);
  const verifyLimit = pLimit(request.verify.concurrency);
  let stoppedEarly: string | null = null;
  let rolloutMs = 0;

  const save = (slot: Slot) =>
    deps.store.putCandidate(jobId, slot.index, {
      status: slot.status,
      trajectory: slot.trajectory ?? null,
      score: slot.score ?? null,
      verify: slot.verify ?? null,
      error: slot.error ?? null,
    });
  const progress = () => {
    const count = (status: CandidateStatus) => slots.filter((slot) => slot.status === status).length;
    deps.store.updateJob(jobId, {
      progress: {
        rollouts_total: request.n,
        rollouts_running: count('running'),
        rollouts_finished: count('finished'),
        rollouts_failed: count('failed'),
        scored: slots.filter((slot) => slot.score).length,
        verified: slots.filter((slot) => slot.verify).length,
      },
    });
  };

  // A sandbox that fails to close after its work is done must not lose that work: noted on the candidate.
  const noteCloseFailure = (slot: Slot, error: unknown): void => {
    const failure = toWinnowerError(error);
    const note = `sandbox close failed: ${failure.code}: ${failure.message}`;
    slot.error = slot.error ? { ...slot.error, message: `${slot.error.message}; ${note}` } : { code: failure.code, message: note };
  };

  const skip = (slot: Slot): void => {
    slot.status = hooks.signal.aborted ? 'cancelled' : 'skipped';
    save(slot);
    hooks.emit({ type: 'rollout-skip', index: slot.index, reason: stoppedEarly ? `stop rule: ${stoppedEarly}` : 'job cancelled' });
  };

  const rollout = async (slot: Slot, wave: number): Promise<void> => {
    // A rollout still queued (concurrency below the wave size) when the stop rule fires is skipped, not left pending.
    if (signal.aborted) return skip(slot);
    slot.status = 'running';
    save(slot);
    progress();
    hooks.emit({ type: 'rollout-start', index: slot.index, wave });
    const rolloutStarted = Date.now();
    let prepared: PreparedRollout | undefined;
    let sandbox: Awaited<ReturnType<SandboxProvider['create']>> | undefined;
    try {
      prepared = await prepareRollout(deps, request, {
        task,
        agentConfig,
        trajectoryId: `${jobId}/${slot.index}`,
        index: slot.index,
        signal,
        // Stored after every step: a running candidate shows its progress, an interrupted job keeps it.
        onStep: (partial) => deps.store.putCandidate(jobId, slot.index, { trajectory: partial }),
      });
      sandbox = await deps.sandboxes.create(prepared.mounts.length ? { ...spec, mounts: prepared.mounts } : spec, { signal }).catch((error: unknown) => {
        throw toWinnowerError(error, 'WNW_ERR_SBX_CREATE');
      });
      slot.trajectory = await prepared.run(sandbox);
      const exit = slot.trajectory.exit;
      slot.status = exit === 'cancelled' ? 'cancelled' : exit === 'error' || exit === 'timeout' ? 'failed' : 'finished';
      // A rollout that submitted but whose patch could not be read (over the size cap, disk full)
      // is a failed candidate with that error, not a finished one with an empty patch.
      if (slot.status === 'finished' && slot.trajectory.meta.error) slot.status = 'failed';
      if (slot.status !== 'finished') {
        const recorded = slot.trajectory.meta.error as ErrorRecord | undefined;
        slot.error = recorded ?? { code: exit === 'timeout' ? 'WNW_ERR_POLICY_TIMEOUT' : 'WNW_ERR_OP_ABORTED', message: slot.trajectory.exit_raw || exit };
      }
    } catch (error) {
      slot.status = signal.aborted ? 'cancelled' : 'failed';
      const failure = toWinnowerError(error);
      slot.error = { code: failure.code, message: failure.message };
    } finally {
      if (sandbox) await sandbox.close().catch((error: unknown) => noteCloseFailure(slot, error));
      await prepared?.close().catch((error: unknown) => noteCloseFailure(slot, error));
      rolloutMs += Date.now() - rolloutStarted;
    }
    save(slot);
    progress();
    hooks.emit({
      type: 'rollout-finish',
      index: slot.index,
      status: slot.status as 'finished' | 'failed' | 'cancelled',
      exit: slot.trajectory?.exit ?? 'error',
      steps: Number(slot.trajectory?.meta.steps ?? 0),
      patch_bytes: slot.trajectory?.patch.length ?? 0,
      ...(slot.error ? { error: `${slot.error.code}: ${slot.error.message}` } : {}),
    });
    if (slot.status === 'finished') await evaluate(slot);
  };

  const evaluate = async (slot: Slot): Promise<void> => {
    const trajectory = slot.trajectory!;
    if (scorer) {
      const [scored] = await scoreCandidates(scorer, task, [trajectory], { template: request.scoring.template, budgetTokens: request.scoring.budget_tokens, signal: hooks.signal });
      slot.score = scored?.score;
      hooks.emit({ type: 'score-available', index: slot.index, value: slot.score?.value ?? null, ...(scored?.error ? { error: scored.error.message } : {}) });
    }
    if (verifying && !hooks.signal.aborted) {
      slot.verify = await verifyLimit(async () => {
        const sandbox = await deps.sandboxes.create(spec, { signal: hooks.signal });
        try {
          return await verifyCandidate(sandbox, task, { id: trajectory.id, patch: trajectory.patch }, { testTimeoutMs: request.verify.timeout_s * 1000, signal: hooks.signal });
        } finally {
          await sandbox.close().catch((error: unknown) => noteCloseFailure(slot, error));
        }
      }).catch((error: unknown) => {
        const failure = toWinnowerError(error);
        slot.error = { code: failure.code, message: `verification failed: ${failure.message}` };
        return undefined;
      });
      if (slot.verify) hooks.emit({ type: 'verify-finish', index: slot.index, status: slot.verify.status, resolved: slot.verify.resolved });
    }
    save(slot);
    progress();
    const reason = stopRuleMet(request.stop_rule, slot.score, slot.verify, verifying);
    if (reason && !stoppedEarly) {
      stoppedEarly = reason;
      hooks.emit({ type: 'stop-rule', index: slot.index, reason });
      stopController.abort(new Error(`stop rule: ${reason}`));
    }
  };

  hooks.emit({ type: 'job-start', n: request.n, waves });
  let next = 0;
  for (const [wave, size] of waves.entries()) {
    const members = slots.slice(next, next + size);
    next += size;
    if (signal.aborted) {
      members.forEach(skip);
      continue;
    }
    const limit = pLimit(request.concurrency ?? size);
    await Promise.all(members.map((slot) => limit(() => rollout(slot, wave))));
  }
  hooks.signal.throwIfAborted();
  const failures = slots.filter((slot) => slot.status === 'failed');
  if (failures.length === request.n) {
    // Every rollout failed (a missing repository, an unreachable policy): the job failed, and says why.
    const first = failures[0]!.error!;
    throw new WinnowerError(first.code as ErrorCode, `all ${request.n} rollouts failed; the first: ${first.message}`, {
      details: { errors: failures.map((slot) => slot.error) },
    });
  }

  const usable = slots.filter((slot) => slot.status === 'finished' && slot.trajectory);
  const strategy = request.strategy ?? defaultStrategy(verifying, scorer);
  const selection = select(
    strategy,
    usable.map((slot) => ({ trajectory: slot.trajectory!, score: slot.score, verify: slot.verify })),
    { instanceId: task.instance_id, selector: scorer?.selector, task },
  );
  const chosenSlot = usable.find((slot) => slot.trajectory!.id === selection.chosen);
  hooks.emit({ type: 'selection', chosen_index: chosenSlot?.index ?? null, trajectory_id: selection.chosen, reason: selection.reason });

  const count = (status: CandidateStatus) => slots.filter((slot) => slot.status === status).length;
  const saved = count('skipped') + (stoppedEarly ? count('cancelled') : 0);
  const trajectories = slots.flatMap((slot) => (slot.trajectory ? [slot.trajectory] : []));
  return {
    instance_id: task.instance_id,
    chosen: chosenView(chosenSlot),
    selection,
    candidates: slots.map((slot) => candidateSummary(slot, jobId)),
    rollouts: { planned: request.n, finished: count('finished'), failed: count('failed'), cancelled: count('cancelled'), skipped: count('skipped') },
    compute: {
      ...usageTotals(trajectories),
      rollout_ms: rolloutMs,
      saved_rollouts: saved,
      saved_fraction: saved / request.n,
    },
    stopped_early: stoppedEarly,
    duration_ms: Date.now() - started,
  };
}
