/**
 * A trajectory as the conversation the OpenHands SDK gives its critic (docs/design/07-openhands-critic.md#2):
 * the system prompt, then every message reduced to `{role, content}` (text only: no reasoning, no
 * other keys), and the tool definitions apart, for the chat template's `tools`. At the SDK commit
 * of the contract, assistant tool calls travel in a key the normalisation drops, so the critic
 * never sees their arguments; `toolCalls: 'keep'` passes them on for the named variant that does.
 *
 * Tool definitions come from the trajectory (`meta.tools`, which the importers fill from an
 * OpenHands system event or an OpenAI-chat record's `tools`). A format that records none
 * (SWE-agent, mini-swe-agent) gets one per tool it called, its parameters read off the calls'
 * arguments; a trajectory without tool calls renders without tools. Both are a shift from the
 * critic's training input, which always had the OpenHands tools.
 */
import type { Task } from '../types/task.js';
import type { ChatMessage, Trajectory } from '../types/trajectory.js';
import { isRecord } from '../formats/chat-input.js';

/** One message as the critic's chat template receives it. */
export interface CriticMessage {
  role: ChatMessage['role'];
  content: string;
  /** Only with `toolCalls: 'keep'`: the OpenAI tool calls, arguments as the JSON string the model wrote. */
  tool_calls?: Array<{ type: 'function'; function: { name: string; arguments: string } }>;
}

/** An OpenAI tool definition (`{type: 'function', function: {name, description?, parameters?}}`). */
export type ToolDefinition = Record<string, unknown>;

export interface CriticConversation {
  messages: CriticMessage[];
  tools: ToolDefinition[];
  /** True when the tool definitions were inferred from the calls rather than recorded. */
  toolsInferred: boolean;
  /** Index of the issue (the first user message); the system prompt, if any, is before it. */
  issueIndex: number;
}

export interface ConversationOptions {
  toolCalls: 'drop' | 'keep';
}

function isToolDefinition(value: unknown): value is ToolDefinition {
  if (!isRecord(value)) return false;
  const fn = value.function;
  return value.type === 'function' && isRecord(fn) && typeof fn.name === 'string';
}

/** JSON-schema type of a parsed argument value. */
function schemaType(value: unknown): string {
  if (Array.isArray(value)) return 'array';
  if (value === null) return 'null';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value === 'object' ? 'object' : typeof value;
}

/** One definition per tool the trajectory called, in order of first call, parameters from the arguments seen. */
export function inferTools(messages: readonly ChatMessage[]): ToolDefinition[] {
  const tools = new Map<string, Map<string, string>>();
  for (const message of messages) {
    for (const call of message.tool_calls ?? []) {
      const properties = tools.get(call.function.name) ?? new Map<string, string>();
      tools.set(call.function.name, properties);
      let parsed: unknown;
      try {
        parsed = JSON.parse(call.function.arguments);
      } catch {
        continue;
      }
      if (!isRecord(parsed)) continue;
      for (const [key, value] of Object.entries(parsed)) if (!properties.has(key)) properties.set(key, schemaType(value));
    }
  }
  return [...tools].map(([name, properties]) => ({
    type: 'function',
    function: {
      name,
      parameters: { type: 'object', properties: Object.fromEntries([...properties].map(([key, type]) => [key, { type }])), required: [] },
    },
  }));
}

/**
 * The SDK's normalisation of one message: text content as it is (an assistant turn that only
 * calls tools has whitespace-only text, which the SDK drops to ""), every other key left out.
 */
function normalise(message: ChatMessage, options: ConversationOptions): CriticMessage {
  const calls = message.role === 'assistant' ? (message.tool_calls ?? []) : [];
  const content = calls.length > 0 && message.content.trim() === '' ? '' : message.content;
  if (options.toolCalls === 'drop' || calls.length === 0) return { role: message.role, content };
  return {
    role: message.role,
    content,
    tool_calls: calls.map((call) => ({ type: 'function', function: { name: call.function.name, arguments: call.function.arguments } })),
  };
}

export function criticConversation(task: Task, trajectory: Trajectory, options: ConversationOptions): CriticConversation {
  const recorded = trajectory.meta.tools;
  const recordedTools = Array.isArray(recorded) ? recorded.filter(isToolDefinition) : [];
  const tools = recordedTools.length > 0 ? recordedTools : inferTools(trajectory.messages);
  const messages = trajectory.messages.map((message) => normalise(message, options));
  let issueIndex = messages.findIndex((message) => message.role === 'user');
  if (issueIndex < 0) {
    // No user turn recorded (a bare agent log): the task's issue stands in for it, after any system prompt.
    issueIndex = messages[0]?.role === 'system' ? 1 : 0;
    messages.splice(issueIndex, 0, { role: 'user', content: task.problem_statement });
  }
  return { messages, tools, toolsInferred: recordedTools.length === 0 && tools.length > 0, issueIndex };
}
