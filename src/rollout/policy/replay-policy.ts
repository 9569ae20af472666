/**
 * Replays a recorded trajectory's assistant turns in order. The commands run for real in the
 * rollout's sandbox, so the observations are new; only the assistant side is recorded. Used by
 * the demo, by regression tests and to re-run a candidate.
 */
import { wnwError } from '../../errors.js';
import type { ChatMessage, Trajectory } from '../../types/trajectory.js';
import type { Policy, PolicyTurn, PolicyTurnRequest } from './types.js';

export function createReplayPolicy(recording: Trajectory, name = `replay:${recording.source}`): Policy {
  const turns: ChatMessage[] = recording.messages.filter((message) => message.role === 'assistant');
  if (turns.length === 0) {
    throw wnwError('WNW_ERR_POLICY_REPLAY', `trajectory ${recording.id} has no assistant turns to replay`, {
      details: { trajectory: recording.id },
    });
  }
  const mode = turns.some((turn) => (turn.tool_calls?.length ?? 0) > 0) ? 'tools' : 'text';
  let next = 0;
  return {
    name,
    mode,
    async next(request: PolicyTurnRequest): Promise<PolicyTurn> {
      request.signal?.throwIfAborted();
      const turn = turns[next];
      if (!turn) {
        throw wnwError('WNW_ERR_POLICY_REPLAY', `recording ${recording.id} ended after ${turns.length} turns without a submission`, {
          details: { trajectory: recording.id },
        });
      }
      next += 1;
      const usage = (turn.meta?.usage as PolicyTurn['usage'] | undefined) ?? { prompt_tokens: 0, completion_tokens: 0 };
      const { meta: _meta, ...message } = turn;
      return { message, usage, finishReason: message.tool_calls?.length ? 'tool_calls' : 'stop' };
    },
  };
}
