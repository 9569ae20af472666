/**
 * A recorded assistant turn (winnower's chat format) as an answer of a given protocol, for
 * replaying recordings to a harness: a chat completion, an Anthropic message (tool_use blocks
 * with parsed input) or a Responses object (message and function_call items).
 */
import type { ChatMessage } from '../../types/trajectory.js';
import type { HarnessProtocol } from './protocols.js';

type Json = Record<string, unknown>;

const parseArguments = (text: string): unknown => {
  try {
    return JSON.parse(text);
  } catch {
    return {};
  }
};

export function answerFromMessage(
  protocol: HarnessProtocol,
  message: ChatMessage,
  options: { id: string; model: string; usage: { prompt_tokens: number; completion_tokens: number } },
): Json {
  const calls = message.tool_calls ?? [];
  const { usage } = options;
  if (protocol === 'openai-chat') {
    return {
      id: options.id,
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model: options.model,
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: message.content, ...(calls.length ? { tool_calls: calls } : {}) },
          finish_reason: calls.length ? 'tool_calls' : 'stop',
        },
      ],
      usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
    };
  }
  if (protocol === 'anthropic-messages') {
    return {
      id: options.id,
      type: 'message',
      role: 'assistant',
      model: options.model,
      content: [
        ...(message.content ? [{ type: 'text', text: message.content }] : []),
        ...calls.map((call) => ({
          type: 'tool_use',
          id: call.id,
          name: call.function.name,
          input: parseArguments(call.function.arguments),
        })),
      ],
      stop_reason: calls.length ? 'tool_use' : 'end_turn',
      stop_sequence: null,
      usage: { input_tokens: usage.prompt_tokens, output_tokens: usage.completion_tokens },
    };
  }
  return {
    id: options.id,
    object: 'response',
    created_at: Math.floor(Date.now() / 1000),
    status: 'completed',
    model: options.model,
    output: [
      ...(message.content
        ? [
            {
              type: 'message',
              id: `${options.id}-msg`,
              role: 'assistant',
              status: 'completed',
              content: [{ type: 'output_text', text: message.content, annotations: [] }],
            },
          ]
        : []),
      ...calls.map((call, index) => ({
        type: 'function_call',
        id: `${options.id}-fc${index}`,
        call_id: call.id,
        name: call.function.name,
        arguments: call.function.arguments,
        status: 'completed',
      })),
    ],
    usage: {
      input_tokens: usage.prompt_tokens,
      output_tokens: usage.completion_tokens,
      total_tokens: usage.prompt_tokens + usage.completion_tokens,
    },
  };
}
