import { z } from 'zod';
import type { ChatMessage, ToolCall } from '../types/trajectory.js';

/** Message content as agents store it: a string, null (tool-only turns), or OpenAI content parts. */
export const InputContent = z
  .union([
    z.string(),
    z.null(),
    z.array(z.union([z.string(), z.looseObject({ type: z.string().optional(), text: z.string().optional() })])),
  ])
  .optional();

/** An OpenAI-style tool call as recorded by agents (extra keys such as `index` are ignored). */
export const InputToolCall = z.looseObject({
  id: z.string(),
  type: z.string().nullish(),
  function: z.looseObject({
    name: z.string(),
    /** A JSON string; some recorders store the parsed object. */
    arguments: z.union([z.string(), z.record(z.string(), z.unknown())]).nullish(),
  }),
});
export type InputToolCall = z.infer<typeof InputToolCall>;

/** `null` and content parts → plain text ("" when there is none). */
export function contentText(content: z.infer<typeof InputContent>): string {
  if (content === null || content === undefined) return '';
  if (typeof content === 'string') return content;
  return content.map((part) => (typeof part === 'string' ? part : (part.text ?? ''))).join('');
}

export function toToolCalls(calls: readonly InputToolCall[] | null | undefined): ToolCall[] | undefined {
  if (!calls || calls.length === 0) return undefined;
  return calls.map((call) => ({
    id: call.id,
    type: 'function' as const,
    function: {
      name: call.function.name,
      arguments: typeof call.function.arguments === 'string' ? call.function.arguments : JSON.stringify(call.function.arguments ?? {}),
    },
  }));
}

/** `<returncode>2</returncode>...` → 2 (mini-swe-agent and similar observation encodings). */
export function parseReturnCode(content: string): number | undefined {
  const match = /^\s*<returncode>\s*(-?\d+)\s*<\/returncode>/.exec(content);
  return match ? Number(match[1]) : undefined;
}

/** Drops undefined fields so messages stay minimal and compare cleanly. */
export function compactMessage(message: ChatMessage): ChatMessage {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(message)) if (value !== undefined) out[key] = value;
  return out as ChatMessage;
}

/** The name of the last tool the assistant called, if its last turn called one. */
export function lastToolCallName(messages: readonly ChatMessage[]): string | undefined {
  for (let index = messages.length - 1; index >= 0; index -= 1) {
    const message = messages[index]!;
    if (message.role !== 'assistant') continue;
    return message.tool_calls?.at(-1)?.function.name;
  }
  return undefined;
}

/** A plain object, for `meta` records (zod's looseObject output widened to a record). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
