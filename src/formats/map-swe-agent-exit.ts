import type { ExitReason } from '../types/trajectory.js';

/**
 * SWE-agent's `info.exit_status` → ExitReason. `submitted (exit_cost)` and the like are
 * autosubmissions after a limit or an error: they map to the limit or error, not to `submitted`
 * (the agent did not choose to stop); the raw string is kept as `exit_raw`.
 */
export function mapSweAgentExit(exitStatus: string | null | undefined): ExitReason {
  const reason = /^submitted \((.+)\)$/.exec(exitStatus ?? '')?.[1] ?? exitStatus;
  switch (reason) {
    case 'submitted':
      return 'submitted';
    case 'exit_cost':
    case 'exit_api_calls':
    case 'exit_step_limit':
      return 'step_limit';
    case 'exit_context':
      return 'token_limit';
    case 'exit_command_timeout':
    case 'exit_total_execution_time':
    case 'exit_timeout':
      return 'timeout';
    case 'exit_forfeit':
    case 'exit_user':
      return 'cancelled';
    case 'exit_format':
    case 'exit_error':
    case 'exit_environment_error':
    case 'early_exit':
      return 'error';
    case undefined:
    case null:
    case '':
      return 'unknown';
    default:
      return reason.startsWith('exit_') ? 'error' : 'unknown';
  }
}
