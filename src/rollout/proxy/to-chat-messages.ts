/**
 * Recorded requests and answers of each protocol as winnower's OpenAI-chat messages: Anthropic
 * content blocks (text, tool_use, tool_result, thinking) and Responses items (message,
 * function_call, custom_tool_call, their outputs, reasoning) become system / user / assistant /
 * tool messages with tool calls, so scoring reads a harness's trajectory like the built-in agent's.
 */
import type { ChatMessage, ToolCall } from '../../types/trajectory.js';
import type { HarnessProtocol } from './protocols.js';

type Json = Record<string, unknown>;

const asArray = (value: unknown): Json[] => (Array.isArray(value) ? (value as Json[]) : []);

/** Text of a content value: a string, or parts with `text` (images and files named, not inlined). */
function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  return asArray(content)
    .map((part) =>
      typeof part.text === 'string'
        ? part.text
        : typeof part.type === 'string' && part.type !== 'tool_result' && part.type !== 'tool_use'
          ? `[${part.type}]`
          : '',
    )
    .filter(Boolean)
    .join('\n');
}

function chatMessage(message: Json): ChatMessage {
  const role = message.role === 'developer' ? 'system' : (message.role as ChatMessage['role']);
  const calls = asArray(message.tool_calls).map((call): ToolCall => {
    const fn = (call.function ?? {}) as Json;
    return {
      id: String(call.id ?? ''),
      type: 'function',
      function: {
        name: String(fn.name ?? ''),
        arguments: typeof fn.arguments === 'string' ? fn.arguments : JSON.stringify(fn.arguments ?? {}),
      },
    };
  });
  return {
    role: ['system', 'user', 'assistant', 'tool'].includes(role) ? role : 'user',
    content: textOf(message.content),
    ...(typeof message.reasoning_content === 'string' && message.reasoning_content ? { reasoning: message.reasoning_content } : {}),
    ...(calls.length ? { tool_calls: calls } : {}),
    ...(typeof message.tool_call_id === 'string' ? { tool_call_id: message.tool_call_id } : {}),
    ...(typeof message.name === 'string' ? { name: message.name } : {}),
  };
}

/** One Anthropic message (request turn or answer) as chat messages: tool results become tool messages. */
function anthropicMessages(role: string, content: unknown): ChatMessage[] {
  if (typeof content === 'string') return [{ role: role === 'assistant' ? 'assistant' : 'user', content }];
  const blocks = asArray(content);
  if (role === 'assistant') {
    const calls = blocks
      .filter((block) => block.type === 'tool_use')
      .map(
        (block): ToolCall => ({
          id: String(block.id),
          type: 'function',
          function: { name: String(block.name), arguments: JSON.stringify(block.input ?? {}) },
        }),
      );
    const reasoning = blocks
      .filter((block) => block.type === 'thinking')
      .map((block) => String(block.thinking ?? ''))
      .join('\n');
    const text = blocks
      .filter((block) => block.type === 'text')
      .map((block) => String(block.text ?? ''))
      .join('\n');
    return [{ role: 'assistant', content: text, ...(reasoning ? { reasoning } : {}), ...(calls.length ? { tool_calls: calls } : {}) }];
  }
  const out: ChatMessage[] = blocks
    .filter((block) => block.type === 'tool_result')
    .map((block) => ({
      role: 'tool',
      tool_call_id: String(block.tool_use_id),
      content: textOf(block.content),
      ...(block.is_error ? { meta: { is_error: true } } : {}),
    }));
  const text = textOf(blocks.filter((block) => block.type !== 'tool_result'));
  if (text) out.push({ role: 'user', content: text });
  return out;
}

/** Responses items in order; consecutive assistant items (text, calls, reasoning) merge into one message. */
function responsesItems(items: Json[]): ChatMessage[] {
  const out: ChatMessage[] = [];
  let pendingReasoning = '';
  const assistant = (): ChatMessage => {
    const last = out.at(-1);
    if (last?.role === 'assistant') return last;
    const message: ChatMessage = { role: 'assistant', content: '' };
    out.push(message);
    return message;
  };
  const addCall = (id: string, name: string, args: string) => {
    const message = assistant();
    message.tool_calls = [...(message.tool_calls ?? []), { id, type: 'function', function: { name, arguments: args } }];
    if (pendingReasoning) message.reasoning = pendingReasoning;
    pendingReasoning = '';
  };
  for (const item of items) {
    if (item.type === 'reasoning') {
      pendingReasoning = asArray(item.summary)
        .map((part) => String(part.text ?? ''))
        .join('\n');
    } else if (item.type === 'function_call') {
      addCall(
        String(item.call_id ?? item.id),
        String(item.name),
        typeof item.arguments === 'string' ? item.arguments : JSON.stringify(item.arguments ?? {}),
      );
    } else if (item.type === 'custom_tool_call') {
      addCall(String(item.call_id ?? item.id), String(item.name), String(item.input ?? ''));
    } else if (item.type === 'local_shell_call') {
      addCall(String(item.call_id ?? item.id), 'local_shell', JSON.stringify(item.action ?? {}));
    } else if (item.type === 'function_call_output' || item.type === 'custom_tool_call_output' || item.type === 'local_shell_call_output') {
      out.push({ role: 'tool', tool_call_id: String(item.call_id), content: textOf(item.output) });
    } else if (item.type === 'message' || (item.type === undefined && typeof item.role === 'string')) {
      const role = item.role === 'developer' ? 'system' : (item.role as ChatMessage['role']);
      if (role === 'assistant') {
        const message = assistant();
        message.content = [message.content, textOf(item.content)].filter(Boolean).join('\n');
        if (pendingReasoning) message.reasoning = pendingReasoning;
        pendingReasoning = '';
      } else {
        out.push({ role: role === 'system' ? 'system' : 'user', content: textOf(item.content) });
      }
    }
  }
  return out;
}

/** The conversation a request carries (its system prompt first). */
export function requestMessages(protocol: HarnessProtocol, body: Json): ChatMessage[] {
  if (protocol === 'openai-chat') return asArray(body.messages).map(chatMessage);
  if (protocol === 'anthropic-messages') {
    const system = textOf(body.system);
    return [
      ...(system ? [{ role: 'system' as const, content: system }] : []),
      ...asArray(body.messages).flatMap((message) => anthropicMessages(String(message.role), message.content)),
    ];
  }
  const instructions =
    typeof body.instructions === 'string' && body.instructions ? [{ role: 'system' as const, content: body.instructions }] : [];
  const input = typeof body.input === 'string' ? [{ role: 'user' as const, content: body.input }] : responsesItems(asArray(body.input));
  return [...instructions, ...input];
}

/** The assistant turn an answer holds. */
export function responseMessages(protocol: HarnessProtocol, response: Json): ChatMessage[] {
  if (protocol === 'openai-chat') {
    const message = (asArray(response.choices)[0]?.message ?? {}) as Json;
    return [chatMessage({ ...message, role: 'assistant' })];
  }
  if (protocol === 'anthropic-messages') return anthropicMessages('assistant', response.content);
  return responsesItems(asArray(response.output));
}
