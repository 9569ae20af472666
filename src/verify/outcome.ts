/**
 * What a test run says about a patch (docs/formats.md#the-candidate-with-evidence-record): `resolved`
 * passed, `unresolved` and `apply_failed` failed, and `timeout` and `error` (the sandbox or the
 * runner failed, the run ran past its limit, the output such as a Harbor reward file could not be
 * read) could not run: they say nothing about the patch, so selection, the stop rule and training
 * labels read them as no run at all, never as a failure.
 */
import type { VerifyStatus } from '../types/verify.js';

export type RunOutcome = 'passed' | 'failed' | 'could_not_run';

const OUTCOME: Record<VerifyStatus, RunOutcome> = {
  resolved: 'passed',
  unresolved: 'failed',
  apply_failed: 'failed',
  timeout: 'could_not_run',
  error: 'could_not_run',
};

export function runOutcome(status: VerifyStatus): RunOutcome {
  return OUTCOME[status];
}

/** Whether a test run with `status` could not run: no evidence for or against the patch. */
export function couldNotRun(status: VerifyStatus): boolean {
  return OUTCOME[status] === 'could_not_run';
}
