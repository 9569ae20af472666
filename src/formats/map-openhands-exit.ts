import type { ExitReason } from '../types/trajectory.js';

/**
 * How an OpenHands run ended, as one raw string: the record's `error` when there is one, else
 * `finish` when the last action was a finish, else the last agent state (`agent_state:stopped`).
 */
export function openHandsExitRaw(
  error: string | null | undefined,
  lastAction: string | undefined,
  agentState: string | undefined,
): string | undefined {
  if (error) return error;
  if (lastAction === 'finish') return 'finish';
  return agentState ? `agent_state:${agentState}` : undefined;
}

/** That raw string → ExitReason (OpenHands reports limits as error text, hence the patterns). */
export function mapOpenHandsExit(raw: string | undefined): ExitReason {
  switch (true) {
    case raw === undefined || raw === '':
      return 'unknown';
    case raw === 'finish' || raw === 'agent_state:finished':
      return 'submitted';
    case raw === 'agent_state:stopped' || raw === 'agent_state:user_rejected':
      return 'cancelled';
    case /maximum iteration|max_iterations|iteration limit/i.test(raw!):
      return 'step_limit';
    case /budget|cost limit/i.test(raw!):
      return 'step_limit';
    case /context ?window|ContextWindowExceeded|too many tokens/i.test(raw!):
      return 'token_limit';
    case /timeout|timed out/i.test(raw!):
      return 'timeout';
    default:
      return 'error';
  }
}
