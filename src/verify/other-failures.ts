/**
 * "Other tests failed": a run whose tests the task does not name failed, or, with every named
 * test passed, whose test command still exited non-zero. SWE-bench grades on the named tests
 * alone, so such a run can be `resolved`; selection ranks it below a resolved run without other
 * failures, and the stop rule does not stop on it.
 */
import type { VerifyResult } from '../types/verify.js';

type Evidence = Pick<VerifyResult, 'status' | 'exit_code' | 'other_failed' | 'other_failed_count'>;

export function otherTestsFailed(result: Evidence): boolean {
  return result.other_failed_count > 0 || (result.status === 'resolved' && result.exit_code !== null && result.exit_code !== 0);
}

/** `exit 1, 2 other tests failed (test_a, test_b)`, or undefined when nothing else failed. */
export function describeOtherFailures(result: Evidence, names = 3): string | undefined {
  if (!otherTestsFailed(result)) return undefined;
  const exit = result.exit_code === null ? 'no exit code' : `exit ${result.exit_code}`;
  const count = result.other_failed_count;
  if (count === 0) return `${exit} although every named test passed`;
  const shown = result.other_failed.slice(0, names);
  const more = count > shown.length ? `, +${count - shown.length} more` : '';
  return `${exit}, ${count} other test${count === 1 ? '' : 's'} failed (${shown.join(', ')}${more})`;
}
