/**
 * The policy seam: whatever proposes the agent's next turn. An OpenAI-compatible chat server
 * (SGLang, vLLM, llama.cpp, hosted APIs) or the replay of a recorded trajectory.
 */
import type { ChatMessage } from '../../types/trajectory.js';

export interface PolicyTurnRequest {
  /** The conversation so far (system, user, assistant, tool messages). */
  messages: ChatMessage[];
  /** Distinct per rollout so that N rollouts differ. */
  seed?: number;
  signal?: AbortSignal;
}

export interface PolicyTurn {
  /** The assistant message, with `tool_calls` in tools mode. */
  message: ChatMessage;
  usage: { prompt_tokens: number; completion_tokens: number };
  /** The server's finish reason (`stop`, `tool_calls`, `length`, ...). */
  finishReason: string;
}

export interface Policy {
  /** Shown as the trajectory's source. */
  readonly name: string;
  /** `tools`: one `bash` function; `text`: one fenced bash block per turn. */
  readonly mode: 'tools' | 'text';
  next(request: PolicyTurnRequest): Promise<PolicyTurn>;
  /** Releases its connections (HTTP policies); whoever created the policy calls it. */
  close?(): Promise<void>;
}

/** The one tool the built-in agent offers, as an OpenAI function spec. */
export const BASH_TOOL = {
  type: 'function',
  function: {
    name: 'bash',
    description: 'Run one bash command in the repository and return its exit code and output.',
    parameters: {
      type: 'object',
      properties: { command: { type: 'string', description: 'The command to run.' } },
      required: ['command'],
    },
  },
} as const;
