/**
 * A policy served by any OpenAI-compatible chat-completions endpoint (SGLang, vLLM, llama.cpp,
 * hosted APIs). Shares the scorers' HTTP client: keep-alive pools, one deadline per call,
 * retries with backoff on 408/429/500/502/503/504 and connection errors only, cancellation through AbortSignal.
 */
import { z } from 'zod';
import { HttpClient } from '../../http/http-client.js';
import type { ChatMessage } from '../../types/trajectory.js';
import { BASH_TOOL, type Policy, type PolicyTurn, type PolicyTurnRequest } from './types.js';

export interface OpenAIPolicyOptions {
  /** Base URL including the API prefix, e.g. `http://localhost:30000/v1`. */
  url: string;
  model: string;
  apiKey?: string;
  temperature?: number;
  topP?: number;
  maxTokens?: number;
  mode?: 'tools' | 'text';
  /** Deadline of one completion, retries included. */
  timeoutMs?: number;
  retries?: number;
  /** Shown as the trajectory's source (default `openai:<model>`). */
  name?: string;
}

const ResponseToolCall = z.object({
  id: z.string(),
  type: z.literal('function').optional(),
  function: z.object({ name: z.string(), arguments: z.string() }),
});

const ChatCompletion = z.object({
  choices: z
    .array(
      z.object({
        message: z.object({
          content: z.string().nullish(),
          reasoning_content: z.string().nullish(),
          tool_calls: z.array(ResponseToolCall).nullish(),
        }),
        finish_reason: z.string().nullish(),
      }),
    )
    .min(1),
  usage: z.object({ prompt_tokens: z.number().int().nonnegative(), completion_tokens: z.number().int().nonnegative() }).nullish(),
});

/** Our messages in the wire format: no `meta`, no `reasoning`, tool calls as given. */
function toWire(message: ChatMessage): Record<string, unknown> {
  return {
    role: message.role,
    content: message.content,
    ...(message.tool_calls?.length ? { tool_calls: message.tool_calls } : {}),
    ...(message.tool_call_id ? { tool_call_id: message.tool_call_id } : {}),
    ...(message.role === 'tool' && message.name ? { name: message.name } : {}),
  };
}

export function createOpenAIPolicy(options: OpenAIPolicyOptions): Policy {
  const mode = options.mode ?? 'tools';
  const base = new URL(options.url);
  const prefix = base.pathname.replace(/\/+$/, '');
  const client = new HttpClient({
    urls: [base.origin],
    apiKey: options.apiKey,
    timeoutMs: options.timeoutMs ?? 300_000,
    retries: options.retries ?? 4,
    errorCodes: { upstream: 'WNW_ERR_POLICY_UPSTREAM', response: 'WNW_ERR_POLICY_RESPONSE', timeout: 'WNW_ERR_POLICY_TIMEOUT' },
  });
  return {
    name: options.name ?? `openai:${options.model}`,
    mode,
    async next(request: PolicyTurnRequest): Promise<PolicyTurn> {
      const response = await client.postJson({
        path: `${prefix}/chat/completions`,
        body: {
          model: options.model,
          messages: request.messages.map(toWire),
          temperature: options.temperature ?? 0.7,
          top_p: options.topP ?? 1,
          max_tokens: options.maxTokens ?? 4096,
          ...(request.seed === undefined ? {} : { seed: request.seed }),
          ...(mode === 'tools' ? { tools: [BASH_TOOL], tool_choice: 'auto' } : {}),
        },
        schema: ChatCompletion,
        signal: request.signal,
      });
      const choice = response.choices[0]!;
      const toolCalls = choice.message.tool_calls ?? [];
      return {
        message: {
          role: 'assistant',
          content: choice.message.content ?? '',
          ...(choice.message.reasoning_content ? { reasoning: choice.message.reasoning_content } : {}),
          ...(toolCalls.length
            ? { tool_calls: toolCalls.map((call) => ({ id: call.id, type: 'function' as const, function: call.function })) }
            : {}),
        },
        usage: response.usage ?? { prompt_tokens: 0, completion_tokens: 0 },
        finishReason: choice.finish_reason ?? 'stop',
      };
    },
    close: () => client.close(),
  };
}
