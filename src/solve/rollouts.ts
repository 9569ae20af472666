/**
 * Stage 1, rollouts: N agent rollouts in their own sandboxes, in waves, at most `concurrency` of
 * a wave at once. A failed rollout is a failed candidate, never a failed job; every sandbox is
 * closed; a rollout still queued when the job or the stop rule stops is skipped, not left pending.
 * Each finished candidate goes to `evaluate` (the per-candidate stages) as soon as it is ready.
 * In a mixed job each rollout runs its own policy and harness (policy-plan.ts), and its trajectory
 * carries that configuration (`meta.config`) from its first stored step on.
 */
import { WinnowerError, toWinnowerError, type ErrorCode } from '../errors.js';
import type { Sandbox } from '../sandbox/types.js';
import type { ErrorRecord } from '../store/types.js';
import type { Trajectory } from '../types/index.js';
import { jobWaves } from './policy-plan.js';
import { releasePendingStop } from './stop-rule.js';
import { prepareRollout, type PreparedRollout } from '../rollout/prepare-rollout.js';
import type { SolveContext, Slot } from './solve-context.js';

export async function skipRollout(context: SolveContext, slot: Slot): Promise<void> {
  slot.status = context.hooks.signal.aborted ? 'cancelled' : 'skipped';
  await context.save(slot);
  context.hooks.emit({
    type: 'rollout-skip',
    index: slot.index,
    reason: context.stoppedEarly ? `stop rule: ${context.stoppedEarly}` : 'job cancelled',
  });
}

/** The trajectory with the rollout's configuration in `meta.config` (over what the agent put there, e.g. its policy mode). */
export function withConfig(slot: Slot, trajectory: Trajectory): Trajectory {
  const own = trajectory.meta.config;
  const base = own && typeof own === 'object' && !Array.isArray(own) ? (own as Record<string, unknown>) : {};
  return { ...trajectory, meta: { ...trajectory.meta, config: { ...base, ...slot.config } } };
}

/**
 * A retry's rollout that finished in the earlier job: its trajectory (id and seed those of the
 * earlier job's candidate) is this job's candidate, evaluated again like any other; no sandbox, no policy.
 */
async function reuseRollout(context: SolveContext, slot: Slot, reused: Trajectory, evaluate: (slot: Slot) => Promise<void>): Promise<void> {
  slot.trajectory = reused;
  slot.status = 'finished';
  context.hooks.emit({ type: 'rollout-reuse', index: slot.index, from: reused.id });
  await context.save(slot);
  await context.progress();
  await evaluate(slot);
  slot.settled = true;
  releasePendingStop(context);
}

/** One rollout: its sandbox, its agent, its candidate's status; then `evaluate` when it finished. */
export async function runRollout(context: SolveContext, slot: Slot, wave: number, evaluate: (slot: Slot) => Promise<void>): Promise<void> {
  const { deps, hooks, signal } = context;
  const planned = context.plan[slot.policy]!;
  // Taken over with its rollout ended: never run (or counted) twice; a finished one is evaluated
  // here for what its scoring and verification had not stored yet (run-solve.ts).
  if (slot.kept) {
    if (slot.status === 'finished') await evaluate(slot);
    slot.settled = true;
    releasePendingStop(context);
    return;
  }
  if (signal.aborted) return skipRollout(context, slot);
  if (slot.reused) return reuseRollout(context, slot, slot.reused, evaluate);
  slot.status = 'running';
  await context.save(slot);
  await context.progress();
  hooks.emit({ type: 'rollout-start', index: slot.index, wave, policy: slot.policy, config: slot.config });
  const rolloutStarted = Date.now();
  await context.budget.hold(async () => {
    let prepared: PreparedRollout | undefined;
    let sandbox: Sandbox | undefined;
    try {
      prepared = await prepareRollout(deps, planned, {
        task: context.task,
        agentConfig: context.agentConfigs[slot.policy]!,
        trajectoryId: `${context.jobId}/${slot.index}`,
        index: slot.index,
        policyIndex: slot.index - planned.first,
        signal,
        // Stored after every step: a running candidate shows its progress, an interrupted job keeps it.
        onStep: (partial) =>
          context.writes.fire(() => deps.store.putCandidate(context.jobId, slot.index, { trajectory: withConfig(slot, partial) })),
        resume: context.prefix?.shared?.state,
      });
      // With a shared prefix (agent-prefix.ts) the rollout goes on from a fork of its sandbox.
      const from = context.prefix?.shared ?? context.sandboxes;
      sandbox = await from.open({ mounts: prepared.mounts, signal }).catch((error: unknown) => {
        throw toWinnowerError(error, 'WNW_ERR_SBX_CREATE');
      });
      slot.trajectory = withConfig(slot, await prepared.run(sandbox));
      const exit = slot.trajectory.exit;
      slot.status = exit === 'cancelled' ? 'cancelled' : exit === 'error' || exit === 'timeout' ? 'failed' : 'finished';
      // A rollout that submitted but whose patch could not be read (over the size cap, disk full)
      // is a failed candidate with that error, not a finished one with an empty patch.
      if (slot.status === 'finished' && slot.trajectory.meta.error) slot.status = 'failed';
      // One that broke off because the job stopped (its sandbox closed under it) was cancelled, not
      // failed: a replica taking the job over runs it again (docs/deployment.md).
      if (slot.status === 'failed' && hooks.signal.aborted) slot.status = 'cancelled';
      if (slot.status !== 'finished') {
        const recorded = slot.trajectory.meta.error as ErrorRecord | undefined;
        slot.error = recorded ?? {
          code: exit === 'timeout' ? 'WNW_ERR_POLICY_TIMEOUT' : 'WNW_ERR_OP_ABORTED',
          message: slot.trajectory.exit_raw || exit,
        };
      }
    } catch (error) {
      slot.status = signal.aborted ? 'cancelled' : 'failed';
      const failure = toWinnowerError(error);
      slot.error = { code: failure.code, message: failure.message };
    } finally {
      if (sandbox) await sandbox.close().catch((error: unknown) => context.noteCloseFailure(slot, error));
      await prepared?.close().catch((error: unknown) => context.noteCloseFailure(slot, error));
      context.rolloutMs += Date.now() - rolloutStarted;
    }
  });
  await finishRollout(context, slot, evaluate);
}

async function finishRollout(context: SolveContext, slot: Slot, evaluate: (slot: Slot) => Promise<void>): Promise<void> {
  await context.save(slot);
  await context.progress();
  context.hooks.emit({
    type: 'rollout-finish',
    index: slot.index,
    status: slot.status as 'finished' | 'failed' | 'cancelled',
    exit: slot.trajectory?.exit ?? 'error',
    steps: Number(slot.trajectory?.meta.steps ?? 0),
    patch_bytes: slot.trajectory?.patch.length ?? 0,
    ...(slot.error ? { error: `${slot.error.code}: ${slot.error.message}` } : {}),
  });
  if (slot.status === 'finished') await evaluate(slot);
  slot.settled = true;
  releasePendingStop(context);
}

/**
 * Every wave in order; a wave not started when the job or the stop rule stops is skipped whole.
 * Wave k of a mixed job is wave k of every policy, interleaved (policy-plan.ts `jobWaves`).
 */
export async function runRolloutWaves(context: SolveContext, evaluate: (slot: Slot) => Promise<void>): Promise<void> {
  for (const [wave, indexes] of jobWaves(context.plan).entries()) {
    const members = indexes.map((index) => context.slots[index]!);
    const size = members.length;
    if (context.signal.aborted) {
      for (const slot of members) await skipRollout(context, slot);
      continue;
    }
    const lane = context.budget.lane(context.request.concurrency ?? size);
    await Promise.all(members.map((slot) => lane(() => runRollout(context, slot, wave, evaluate))));
  }
}

/** Every rollout failed (a missing repository, an unreachable policy): the job failed, and says why. */
export function throwIfAllFailed(context: SolveContext): void {
  const failures = context.slots.filter((slot) => slot.status === 'failed');
  if (failures.length !== context.request.n) return;
  const first = failures[0]!.error!;
  throw new WinnowerError(first.code as ErrorCode, `all ${context.request.n} rollouts failed; the first: ${first.message}`, {
    details: { errors: failures.map((slot) => slot.error) },
  });
}
