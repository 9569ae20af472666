/**
 * A whole upstream answer re-sent as the protocol's server-sent events, for a harness that asked
 * to stream: chat-completion chunks ending in `[DONE]`, Anthropic's message_start … message_stop,
 * or the Responses API's response.created … response.completed. The content is exactly the
 * recorded answer's; only its framing changes.
 */
import type { HarnessProtocol } from './protocols.js';

type Json = Record<string, unknown>;

const frame = (data: unknown, event?: string): string => `${event ? `event: ${event}\n` : ''}data: ${JSON.stringify(data)}\n\n`;

function chatEvents(response: Json, includeUsage: boolean): string[] {
  const choice = ((response.choices as Json[] | undefined) ?? [])[0] ?? {};
  const message = (choice.message ?? {}) as Json;
  const base = {
    id: response.id ?? 'chatcmpl-winnower',
    object: 'chat.completion.chunk',
    created: response.created ?? Math.floor(Date.now() / 1000),
    model: response.model,
  };
  const chunk = (delta: Json, finish: unknown = null) => frame({ ...base, choices: [{ index: 0, delta, finish_reason: finish }] });
  const out = [chunk({ role: 'assistant', content: '' })];
  if (typeof message.reasoning_content === 'string' && message.reasoning_content)
    out.push(chunk({ reasoning_content: message.reasoning_content }));
  if (typeof message.content === 'string' && message.content) out.push(chunk({ content: message.content }));
  ((message.tool_calls as Json[] | undefined) ?? []).forEach((call, index) =>
    out.push(chunk({ tool_calls: [{ index, id: call.id, type: 'function', function: call.function }] })),
  );
  out.push(chunk({}, choice.finish_reason ?? 'stop'));
  if (includeUsage && response.usage) out.push(frame({ ...base, choices: [], usage: response.usage }));
  out.push('data: [DONE]\n\n');
  return out;
}

function anthropicEvents(response: Json): string[] {
  const usage = (response.usage ?? {}) as Json;
  const out = [
    frame(
      {
        type: 'message_start',
        message: { ...response, content: [], stop_reason: null, stop_sequence: null, usage: { ...usage, output_tokens: 0 } },
      },
      'message_start',
    ),
  ];
  ((response.content as Json[] | undefined) ?? []).forEach((block, index) => {
    const event = (data: Json, name: string) => out.push(frame({ ...data, index }, name));
    if (block.type === 'text') {
      event({ type: 'content_block_start', content_block: { type: 'text', text: '' } }, 'content_block_start');
      event({ type: 'content_block_delta', delta: { type: 'text_delta', text: block.text ?? '' } }, 'content_block_delta');
    } else if (block.type === 'tool_use') {
      event({ type: 'content_block_start', content_block: { ...block, input: {} } }, 'content_block_start');
      event(
        { type: 'content_block_delta', delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input ?? {}) } },
        'content_block_delta',
      );
    } else if (block.type === 'thinking') {
      event({ type: 'content_block_start', content_block: { type: 'thinking', thinking: '', signature: '' } }, 'content_block_start');
      event({ type: 'content_block_delta', delta: { type: 'thinking_delta', thinking: block.thinking ?? '' } }, 'content_block_delta');
      if (block.signature)
        event({ type: 'content_block_delta', delta: { type: 'signature_delta', signature: block.signature } }, 'content_block_delta');
    } else {
      // redacted_thinking and server-side blocks arrive whole in their start event.
      event({ type: 'content_block_start', content_block: block }, 'content_block_start');
    }
    event({ type: 'content_block_stop' }, 'content_block_stop');
  });
  out.push(
    frame(
      {
        type: 'message_delta',
        delta: { stop_reason: response.stop_reason ?? 'end_turn', stop_sequence: response.stop_sequence ?? null },
        usage: { output_tokens: usage.output_tokens ?? 0 },
      },
      'message_delta',
    ),
  );
  out.push(frame({ type: 'message_stop' }, 'message_stop'));
  return out;
}

function responsesEvents(response: Json): string[] {
  let sequence = 0;
  const event = (name: string, data: Json) => frame({ type: name, sequence_number: sequence++, ...data }, name);
  const completed = { ...response, status: response.status ?? 'completed' };
  const out = [event('response.created', { response: { ...completed, status: 'in_progress', output: [] } })];
  ((response.output as Json[] | undefined) ?? []).forEach((item, outputIndex) => {
    out.push(
      event('response.output_item.added', { output_index: outputIndex, item: item.type === 'message' ? { ...item, content: [] } : item }),
    );
    if (item.type === 'message') {
      ((item.content as Json[] | undefined) ?? []).forEach((part, contentIndex) => {
        const where = { item_id: item.id, output_index: outputIndex, content_index: contentIndex };
        out.push(event('response.content_part.added', { ...where, part: { ...part, text: '' } }));
        if (part.type === 'output_text')
          out.push(
            event('response.output_text.delta', { ...where, delta: part.text ?? '' }),
            event('response.output_text.done', { ...where, text: part.text ?? '' }),
          );
        out.push(event('response.content_part.done', { ...where, part }));
      });
    } else if (item.type === 'function_call') {
      out.push(
        event('response.function_call_arguments.done', { item_id: item.id, output_index: outputIndex, arguments: item.arguments ?? '' }),
      );
    }
    out.push(event('response.output_item.done', { output_index: outputIndex, item }));
  });
  out.push(event('response.completed', { response: completed }));
  return out;
}

/** The events of one answer, each a complete SSE frame. */
export function sseEvents(protocol: HarnessProtocol, response: Json, request: Json): string[] {
  if (protocol === 'openai-chat')
    return chatEvents(response, (request.stream_options as { include_usage?: boolean } | undefined)?.include_usage === true);
  if (protocol === 'anthropic-messages') return anthropicEvents(response);
  return responsesEvents(response);
}
