/**
 * A shared prefix of the built-in agent (`fork.at: "first-edit"` or a step number;
 * docs/solve.md#shared-setup-and-forks): one prefix rollout runs until its first file edit (or
 * step k), its sandbox is snapshotted and its conversation kept, and every rollout of the job goes
 * on from both: a fork of the snapshot, the prefix's messages (marked `meta.shared`) and its own
 * seed. The policy sees the same prompt prefix in every continuation, so a server with prefix
 * caching reuses it. A prefix rollout that ends before its fork point (it submitted, hit a limit,
 * failed) leaves nothing to share: the rollouts then start from the beginning, and the job says why.
 * The snapshot is released when the job ends.
 */
import { toWinnowerError } from '../errors.js';
import { runAgentLoop, type AgentPrefix, type PausePoint } from '../rollout/agent/agent-loop.js';
import type { Sandbox, SandboxSnapshot } from '../sandbox/types.js';
import type { Trajectory, Usage } from '../types/index.js';
import { sharedPrefixUsage, usageTotals } from './result-view.js';
import type { PrefixOutcome, SharedPrefix, SolveContext } from './solve-context.js';

/** Runs the prefix rollout (seed 0) in a sandbox of the job and snapshots it at `at`. */
export async function runSharedPrefix(context: SolveContext, at: PausePoint): Promise<PrefixOutcome> {
  const { deps, signal } = context;
  const provider = deps.sandboxes;
  const planned = context.plan[0]!;
  const started = Date.now();
  context.emit({ type: 'prefix-start', at });
  let usage: Usage = { prompt_tokens: 0, completion_tokens: 0, calls: 0 };
  let steps = 0;
  const finish = (
    shared: SharedPrefix | undefined,
    reason: string,
    extra: { snapshot_bytes?: number; error?: string } = {},
  ): PrefixOutcome => {
    const durationMs = Date.now() - started;
    context.emit({ type: 'prefix-finish', at, shared: shared !== undefined, reason, duration_ms: durationMs, steps, ...extra });
    return { shared, reason, usage, steps, durationMs };
  };
  if (!provider.fork)
    return finish(undefined, `the ${provider.name} provider cannot fork a sandbox: every rollout starts from the beginning`);
  return context.budget.hold(async () => {
    let sandbox: Sandbox | undefined;
    try {
      sandbox = await context.sandboxes.open({ signal });
      const policy = deps.createPolicy(planned.policy, 0);
      const run = await runAgentLoop({
        policy,
        sandbox,
        task: context.task,
        config: context.agentConfigs[0]!,
        trajectoryId: `${context.jobId}/prefix`,
        seed: 0,
        signal,
        pauseAt: at,
      });
      steps = Number(run.trajectory.meta.steps ?? 0);
      usage = { ...(run.trajectory.usage ?? usage) };
      if (!run.paused || !sandbox.snapshot)
        return finish(
          undefined,
          run.paused
            ? `the ${provider.name} provider's sandboxes cannot be snapshotted: every rollout starts from the beginning`
            : `the prefix rollout ended (${run.trajectory.exit}: ${run.trajectory.exit_raw}) before ${at === 'first-edit' ? 'its first edit' : `step ${at}`}: every rollout starts from the beginning`,
        );
      const snapshot: SandboxSnapshot = await sandbox.snapshot({ signal });
      const state: AgentPrefix = { messages: run.trajectory.messages, usage, steps };
      return finish(
        {
          state,
          open: ({ mounts, signal: openSignal }) => provider.fork!(snapshot, { signal: openSignal, ...(mounts?.length ? { mounts } : {}) }),
          release: () => snapshot.release(),
        },
        `forked at ${at === 'first-edit' ? 'the first edit' : `step ${at}`} (step ${steps} of the prefix rollout)`,
        { snapshot_bytes: snapshot.bytes },
      );
    } catch (error) {
      const failure = toWinnowerError(error);
      if (signal.aborted) throw failure;
      return finish(undefined, `the prefix rollout failed (${failure.code}: ${failure.message}): every rollout starts from the beginning`, {
        error: `${failure.code}: ${failure.message}`,
      });
    } finally {
      await sandbox?.close().catch(() => undefined);
    }
  });
}

/**
 * The prefix in the job's compute, counted once: its steps, calls, tokens and time, and what
 * forking saved against every continuation having run the prefix itself ((k − 1) × the prefix, k
 * the trajectories that carry it; sandbox time estimated from the prefix's wall time). A prefix that
 * was not shared still spent its calls: they are added to the job's totals.
 */
export function prefixCompute(prefix: PrefixOutcome | undefined, trajectories: readonly Trajectory[]): Record<string, number> {
  if (!prefix) return {};
  const carried = trajectories.filter((trajectory) => sharedPrefixUsage(trajectory) !== undefined).length;
  const calls = prefix.usage.calls ?? 0;
  const tokens = prefix.usage.prompt_tokens + prefix.usage.completion_tokens;
  const totals = usageTotals(trajectories);
  const repeats = Math.max(0, carried - 1);
  return {
    ...(carried === 0 ? { policy_calls: totals.policy_calls + calls, tokens: totals.tokens + tokens } : {}),
    prefix_steps: prefix.steps,
    prefix_policy_calls: calls,
    prefix_tokens: tokens,
    prefix_ms: prefix.durationMs,
    fork_saved_policy_calls: repeats * calls,
    fork_saved_tokens: repeats * tokens,
    fork_saved_prefix_ms: repeats * prefix.durationMs,
  };
}
