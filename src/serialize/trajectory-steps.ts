/**
 * Reads a trajectory's chat messages as steps: an assistant turn (thought + action) and the
 * observations that answer it (tool messages, or user messages marked `meta.observation`).
 * System messages and other user messages (the agent's own task prompt) are not steps.
 */
import type { ChatMessage, ToolCall } from '../types/trajectory.js';

export interface Step {
  /** 1-based position among the trajectory's steps; kept when neighbours are dropped. */
  index: number;
  thought: string;
  /** Tool calls, or the fenced block taken from the content; '' when the turn has none. */
  action: string;
  observations: string[];
}

export interface StepOptions {
  /** Put `reasoning` before the content in the thought. */
  includeReasoning: boolean;
  /** Without tool calls, take the last fenced code block of the content as the action. */
  splitFencedAction: boolean;
  /** Renders one tool call (name and parsed parameters) as action text. */
  formatToolCall: (call: ToolCall) => string;
}

const FENCED_BLOCK = /```[^\n`]*\n[\s\S]*?```/g;

export function toSteps(messages: ChatMessage[], options: StepOptions): Step[] {
  const steps: Step[] = [];
  for (const message of messages) {
    if (message.role === 'assistant') {
      steps.push({ index: steps.length + 1, ...splitTurn(message, options), observations: [] });
    } else if (message.role === 'tool' || (message.role === 'user' && isObservation(message))) {
      steps.at(-1)?.observations.push(trimNewlines(message.content));
    }
  }
  return steps;
}

function isObservation(message: ChatMessage): boolean {
  return Boolean(message.meta?.observation);
}

function splitTurn(message: ChatMessage, options: StepOptions): { thought: string; action: string } {
  let content = message.content;
  let action = '';
  if (message.tool_calls && message.tool_calls.length > 0) {
    action = message.tool_calls.map(options.formatToolCall).join('\n');
  } else if (options.splitFencedAction) {
    const last = [...content.matchAll(FENCED_BLOCK)].at(-1);
    if (last?.index !== undefined) {
      action = last[0];
      content = content.slice(0, last.index) + content.slice(last.index + last[0].length);
    }
  }
  const parts = [options.includeReasoning ? message.reasoning?.trim() : undefined, content.trim()];
  return { thought: parts.filter((part): part is string => Boolean(part)).join('\n\n'), action: action.trim() };
}

/** A tool call's arguments as [name, value] pairs, or undefined when they are not a JSON object. */
export function toolCallParameters(call: ToolCall): Array<[string, string]> | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(call.function.arguments);
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return undefined;
  return Object.entries(parsed).map(([key, value]) => [key, typeof value === 'string' ? value : JSON.stringify(value)]);
}

export function trimNewlines(text: string): string {
  // From the end: the regex /[\r\n]+$/ tries every position of a long output before it matches.
  let end = text.length;
  while (end > 0 && (text.charCodeAt(end - 1) === 10 || text.charCodeAt(end - 1) === 13)) end -= 1;
  return end === text.length ? text : text.slice(0, end);
}
