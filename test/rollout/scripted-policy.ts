/**
 * ScriptedPolicy: a Policy test double that answers from a script, one entry per turn, and
 * records every call (a copy of the messages it was shown, the seed, the signal). An entry is a
 * bash command (a tool call, or a fenced block in text mode), a raw assistant message, or a
 * function of the request that may throw or wait on the signal.
 */
import type { Policy, PolicyTurn, PolicyTurnRequest } from '../../src/rollout/policy/types.js';
import type { ChatMessage } from '../../src/types/trajectory.js';

export type ScriptEntry =
  | string
  | { message: Omit<ChatMessage, 'role'>; usage?: PolicyTurn['usage'] }
  | ((request: PolicyTurnRequest, turn: number) => Promise<PolicyTurn> | PolicyTurn);

export interface RecordedCall {
  messages: ChatMessage[];
  seed: number | undefined;
  signal: AbortSignal | undefined;
}

export class ScriptedPolicy implements Policy {
  readonly calls: RecordedCall[] = [];
  readonly name: string;
  readonly mode: 'tools' | 'text';
  readonly #script: ScriptEntry[];
  readonly #usage: PolicyTurn['usage'];

  /** After the script ends, the last entry repeats. */
  constructor(script: ScriptEntry[], options: { mode?: 'tools' | 'text'; name?: string; usage?: PolicyTurn['usage'] } = {}) {
    this.#script = script;
    this.mode = options.mode ?? 'tools';
    this.name = options.name ?? 'scripted';
    this.#usage = options.usage ?? { prompt_tokens: 10, completion_tokens: 5 };
  }

  async next(request: PolicyTurnRequest): Promise<PolicyTurn> {
    const turn = this.calls.length;
    this.calls.push({ messages: structuredClone(request.messages), seed: request.seed, signal: request.signal });
    const entry = this.#script[Math.min(turn, this.#script.length - 1)]!;
    if (typeof entry === 'function') return entry(request, turn);
    if (typeof entry === 'string') return this.#command(entry, turn);
    const message: ChatMessage = { role: 'assistant', ...entry.message };
    return { message, usage: entry.usage ?? this.#usage, finishReason: message.tool_calls?.length ? 'tool_calls' : 'stop' };
  }

  #command(command: string, turn: number): PolicyTurn {
    const message: ChatMessage =
      this.mode === 'text'
        ? { role: 'assistant', content: `Turn ${turn}.\n\n\`\`\`bash\n${command}\n\`\`\`` }
        : { role: 'assistant', content: `Turn ${turn}.`, tool_calls: [bashCall(`call_${turn}`, command)] };
    return { message, usage: this.#usage, finishReason: this.mode === 'text' ? 'stop' : 'tool_calls' };
  }
}

/** A `bash` tool call as the OpenAI wire format spells it. */
export function bashCall(id: string, command: string): NonNullable<ChatMessage['tool_calls']>[number] {
  return { id, type: 'function', function: { name: 'bash', arguments: JSON.stringify({ command }) } };
}

/** A turn that resolves only when the request's signal fires, then rejects with its reason. */
export function waitForAbort(request: PolicyTurnRequest): Promise<PolicyTurn> {
  return new Promise((_resolve, reject) => {
    const signal = request.signal;
    if (!signal) return;
    if (signal.aborted) return reject(signal.reason);
    signal.addEventListener('abort', () => reject(signal.reason), { once: true });
  });
}
