/**
 * The three wire protocols the recording proxy speaks, as data: where each one's requests arrive,
 * where they go upstream, the shape an upstream answer must have (checked with zod, loose), and
 * what each protocol lets the proxy set per rollout (seed, temperature).
 */
import { z } from 'zod';

export const HarnessProtocol = z.enum(['openai-chat', 'openai-responses', 'anthropic-messages']);
export type HarnessProtocol = z.infer<typeof HarnessProtocol>;

export interface ProtocolSpec {
  /** Request path the harness posts to, below the proxy's base URL (which ends in /v1). */
  path: string;
  /** Request headers passed on upstream as the harness sent them (lower case; never credentials). */
  forwardHeaders: string[];
  /** Path below the upstream's base URL (which includes its API prefix, e.g. /v1). */
  upstreamPath: string;
  /** Checks an upstream answer before it is recorded and passed on. */
  response: z.ZodType<Record<string, unknown>>;
}

const ChatResponse = z.looseObject({
  choices: z
    .array(
      z.looseObject({
        message: z.looseObject({
          content: z.string().nullish(),
          tool_calls: z
            .array(z.looseObject({ id: z.string(), function: z.looseObject({ name: z.string(), arguments: z.string() }) }))
            .nullish(),
        }),
        finish_reason: z.string().nullish(),
      }),
    )
    .min(1),
  usage: z.looseObject({ prompt_tokens: z.number().int().nonnegative(), completion_tokens: z.number().int().nonnegative() }).nullish(),
});

const AnthropicResponse = z.looseObject({
  type: z.literal('message'),
  content: z.array(z.looseObject({ type: z.string() })),
  stop_reason: z.string().nullish(),
  usage: z.looseObject({ input_tokens: z.number().int().nonnegative(), output_tokens: z.number().int().nonnegative() }),
});

const ResponsesResponse = z.looseObject({
  output: z.array(z.looseObject({ type: z.string() })),
  usage: z.looseObject({ input_tokens: z.number().int().nonnegative(), output_tokens: z.number().int().nonnegative() }).nullish(),
});

export const PROTOCOLS: Record<HarnessProtocol, ProtocolSpec> = {
  'openai-chat': { path: '/v1/chat/completions', forwardHeaders: [], upstreamPath: '/chat/completions', response: ChatResponse },
  'openai-responses': { path: '/v1/responses', forwardHeaders: ['openai-beta'], upstreamPath: '/responses', response: ResponsesResponse },
  'anthropic-messages': {
    path: '/v1/messages',
    forwardHeaders: ['anthropic-version', 'anthropic-beta'],
    upstreamPath: '/messages',
    response: AnthropicResponse,
  },
};

/** Tokens an answer cost, in the chat-completions names whatever the protocol. */
export function usageOf(
  protocol: HarnessProtocol,
  response: Record<string, unknown>,
): { prompt_tokens: number; completion_tokens: number } {
  const usage = (response.usage ?? {}) as Record<string, number | undefined>;
  if (protocol === 'openai-chat') return { prompt_tokens: usage.prompt_tokens ?? 0, completion_tokens: usage.completion_tokens ?? 0 };
  // Anthropic counts cached prompt tokens apart from input_tokens; they were sent all the same.
  const cached = protocol === 'anthropic-messages' ? (usage.cache_read_input_tokens ?? 0) + (usage.cache_creation_input_tokens ?? 0) : 0;
  return { prompt_tokens: (usage.input_tokens ?? 0) + cached, completion_tokens: usage.output_tokens ?? 0 };
}

/** The names of the tools a request offers (function tools, custom tools, Anthropic tools). */
export function toolNamesOf(body: Record<string, unknown>): string[] {
  const tools = Array.isArray(body.tools) ? (body.tools as Array<Record<string, unknown>>) : [];
  return tools.flatMap((tool) => {
    const fn = tool.function as { name?: unknown } | undefined;
    const name = typeof fn?.name === 'string' ? fn.name : tool.name;
    return typeof name === 'string' ? [name] : [];
  });
}

export interface Sampling {
  seed?: number;
  temperature?: number;
}

/**
 * The body sent upstream: the policy's model, no streaming (the proxy records whole answers and
 * streams them to the harness itself), and the rollout's sampling where the protocol has it:
 * chat completions take a seed and a temperature, Responses a temperature unless the request
 * asks for reasoning, Anthropic a temperature unless extended thinking is on (both refuse one).
 */
export function upstreamBody(
  protocol: HarnessProtocol,
  body: Record<string, unknown>,
  model: string,
  sampling: Sampling,
): Record<string, unknown> {
  const { stream: _stream, stream_options: _streamOptions, ...rest } = body;
  const out: Record<string, unknown> = { ...rest, model };
  if (protocol === 'openai-chat' && sampling.seed !== undefined) out.seed = sampling.seed;
  const thinking = (body.thinking as { type?: string } | undefined)?.type;
  // Reasoning requests refuse a temperature: Anthropic with extended thinking, Responses with `reasoning`.
  const temperatureAllowed =
    protocol === 'openai-chat' ||
    (protocol === 'anthropic-messages' && (thinking === undefined || thinking === 'disabled')) ||
    (protocol === 'openai-responses' && body.reasoning == null);
  if (sampling.temperature !== undefined && temperatureAllowed) out.temperature = sampling.temperature;
  return out;
}
