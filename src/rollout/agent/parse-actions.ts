/** Reads the commands out of an assistant turn, in tools mode or text mode. */
import type { ChatMessage } from '../../types/trajectory.js';

export interface Action {
  command: string;
  /** The tool call this command answers (tools mode). */
  toolCallId?: string;
}

export type ParsedActions = { ok: true; actions: Action[] } | { ok: false; problem: string };

/** Every fenced block, opening fence with its info string to its closing fence (so a closing fence is never read as an opening one). */
const FENCE = /```([^\n`]*)\n([\s\S]*?)\n?```/g;
const SHELL_INFO = new Set(['', 'bash', 'sh', 'shell']);

export function parseActions(message: ChatMessage, mode: 'tools' | 'text'): ParsedActions {
  if (mode === 'tools') {
    const calls = message.tool_calls ?? [];
    if (calls.length === 0) return { ok: false, problem: 'no tool call' };
    const actions: Action[] = [];
    for (const call of calls) {
      if (call.function.name !== 'bash') return { ok: false, problem: `a call to an unknown tool "${call.function.name}"` };
      let command: unknown;
      try {
        command = (JSON.parse(call.function.arguments || '{}') as { command?: unknown }).command;
      } catch {
        return { ok: false, problem: 'tool arguments that are not valid JSON' };
      }
      if (typeof command !== 'string' || command.trim() === '') return { ok: false, problem: 'a bash call without a "command" string' };
      actions.push({ command, toolCallId: call.id });
    }
    return { ok: true, actions };
  }
  const blocks = [...message.content.matchAll(FENCE)]
    .filter((match) => SHELL_INFO.has(match[1]!.trim()))
    .map((match) => match[2]!.trim())
    .filter((block) => block !== '');
  if (blocks.length !== 1)
    return { ok: false, problem: blocks.length === 0 ? 'no bash code block' : `${blocks.length} bash code blocks instead of one` };
  return { ok: true, actions: [{ command: blocks[0]! }] };
}

/** Keeps the head and tail of long output, with a marker saying how much was cut. */
export function elideMiddle(text: string, headChars: number, tailChars: number): string {
  if (text.length <= headChars + tailChars) return text;
  const cut = text.length - headChars - tailChars;
  return `${text.slice(0, headChars)}\n[... ${cut} characters elided ...]\n${text.slice(text.length - tailChars)}`;
}
