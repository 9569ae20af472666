import type { ExitReason } from '../types/trajectory.js';

/**
 * mini-swe-agent's `info.exit_status` (the name of the exception that ended the run) → ExitReason.
 * The original string is kept beside it as `exit_raw`.
 */
export function mapMiniSweAgentExit(exitStatus: string | null | undefined): ExitReason {
  switch (exitStatus) {
    case 'Submitted':
      return 'submitted';
    case 'LimitsExceeded':
      return 'step_limit';
    case 'ContextWindowExceededError':
      return 'token_limit';
    case 'TimeExceeded':
    case 'TimeoutError':
    case 'ExecutionTimeoutError':
    case 'Timeout':
      return 'timeout';
    case 'UserInterruption':
    case 'KeyboardInterrupt':
      return 'cancelled';
    case undefined:
    case null:
    case '':
      return 'unknown';
    default:
      // Any other exception name (InternalServerError, RateLimitError, FormatError, ...) ended the run in error.
      return 'error';
  }
}
