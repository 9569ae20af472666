/**
 * Stage 3, verification: one finished candidate's patch applied in a fresh sandbox and the
 * request's tests run (`verify.fail_to_pass`/`pass_to_pass`/`test_command`, or a Harbor task's
 * tests/test.sh graded by its reward: src/verify/harbor-verifier.ts), at most
 * `verify.concurrency` at once within the job's sandbox budget. A failure to verify is noted on
 * the candidate, never a failed job.
 */
import { availableParallelism } from 'node:os';
import { toWinnowerError } from '../errors.js';
import { describeOtherFailures } from '../verify/other-failures.js';
import { verifyHarborCandidate } from '../verify/harbor-verifier.js';
import { verifyCandidate } from '../verify/verify-candidate.js';
import { unusablePatch } from './scoring.js';
import type { SolveContext, Slot } from './solve-context.js';

/** Whether the request gives tests to verify against (a test command or test ids); without them only the checks run. */
export function givenTests(context: SolveContext): boolean {
  const { verify } = context.request;
  return context.harbor !== undefined || verify.test_command !== undefined || verify.fail_to_pass.length + verify.pass_to_pass.length > 0;
}

/** The verification lane of one job: call once per job, then `verifySlot` with it. */
export function verificationLane(context: SolveContext): <T>(work: () => Promise<T>) => Promise<T> {
  return context.budget.lane(verifyConcurrency(context.request));
}

/**
 * Candidates verified at once: the request's, else one per core within the job's sandbox budget.
 * Test runs are CPU-bound, so more than the cores only queue inside the sandboxes; a fixed 4 left
 * most cores of a large host idle while candidates waited (issue 31's makespan).
 */
export function verifyConcurrency(
  request: Pick<SolveContext['request'], 'verify' | 'max_sandboxes'>,
  cores = availableParallelism(),
): number {
  return request.verify.concurrency ?? Math.max(1, Math.min(cores, request.max_sandboxes ?? cores));
}

export async function verifySlot(context: SolveContext, slot: Slot, lane: <T>(work: () => Promise<T>) => Promise<T>): Promise<void> {
  const { deps, request, hooks } = context;
  const trajectory = slot.trajectory;
  // A patch that can never be chosen is not worth a sandbox (the scoring stage announced it).
  if (!context.verifying || !trajectory || hooks.signal.aborted || unusablePatch(slot)) return;
  const candidate = { id: trajectory.id, patch: trajectory.patch };
  const harbor = context.harbor;
  slot.verify = await lane(() =>
    context.budget.hold(async () => {
      // A Harbor task: its own verifier, in a sandbox it makes with the task's folders bound in.
      if (harbor)
        return verifyHarborCandidate(deps.sandboxes, context.spec, harbor, candidate, {
          timeoutMs: request.verify.timeout_s * 1000,
          signal: hooks.signal,
          ...(request.verify.reward_threshold !== undefined ? { threshold: request.verify.reward_threshold } : {}),
        });
      const sandbox = await context.sandboxes.open({ signal: hooks.signal });
      try {
        return await verifyCandidate(sandbox, context.task, candidate, {
          testTimeoutMs: request.verify.timeout_s * 1000,
          signal: hooks.signal,
          ...(request.verify.parser ? { parser: request.verify.parser } : {}),
          ...(request.verify.harness_compat ? { harnessCompat: true } : {}),
        });
      } finally {
        await sandbox.close().catch((error: unknown) => context.noteCloseFailure(slot, error));
      }
    }),
  ).catch((error: unknown) => {
    const failure = toWinnowerError(error);
    slot.error = { code: failure.code, message: `verification failed: ${failure.message}` };
    return undefined;
  });
  if (!slot.verify) return;
  const otherFailures = describeOtherFailures(slot.verify);
  hooks.emit({
    type: 'verify-finish',
    index: slot.index,
    status: slot.verify.status,
    resolved: slot.verify.resolved,
    exit_code: slot.verify.exit_code,
    ...(otherFailures ? { other_failures: otherFailures } : {}),
  });
}
