/**
 * Step 1 of every verification: the candidate's patch applied in a fresh sandbox, after the patch
 * rules (src/sandbox/patch-rules.ts). An empty, refused or non-applying patch is `apply_failed`;
 * a sandbox that fails otherwise is `error`; cancellation propagates.
 */
import { type WinnowerError, throwIfAborted, toWinnowerError } from '../errors.js';
import { describeDroppedGitlinks } from '../sandbox/patch-gitlinks.js';
import { patchViolation } from '../sandbox/patch-rules.js';
import type { GitlinkChange, Sandbox } from '../sandbox/types.js';

export type ApplyOutcome =
  | { status: 'applied'; dropped: GitlinkChange[]; note?: string }
  | { status: 'apply_failed'; apply_error: string }
  | { status: 'error'; error: string };

export async function applyCandidatePatch(sandbox: Sandbox, patch: string, signal?: AbortSignal): Promise<ApplyOutcome> {
  if (patch.trim() === '') return { status: 'apply_failed', apply_error: 'candidate patch is empty' };
  // git apply makes a symbolic link to any target; the patch rules refuse one that leaves the repository.
  const violation = patchViolation(patch);
  if (violation) return { status: 'apply_failed', apply_error: `refused by the patch rules: the patch ${violation.what}` };
  try {
    const applied = await sandbox.applyPatch(patch, { signal });
    const note = describeDroppedGitlinks(applied.dropped);
    return { status: 'applied', dropped: applied.dropped, ...(note ? { note } : {}) };
  } catch (error) {
    const failure = rethrowIfAborted(error, signal);
    if (failure.code !== 'WNW_ERR_SBX_PATCH') return { status: 'error', error: `applying the candidate patch: ${failure.message}` };
    return { status: 'apply_failed', apply_error: failure.message };
  }
}

/** Cancellation propagates; anything else becomes a WinnowerError to record. */
export function rethrowIfAborted(error: unknown, signal: AbortSignal | undefined): WinnowerError {
  throwIfAborted(signal);
  const failure = toWinnowerError(error);
  if (failure.code === 'WNW_ERR_OP_ABORTED') throw failure;
  return failure;
}
