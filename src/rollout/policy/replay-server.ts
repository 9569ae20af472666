/**
 * `winnower policy serve`: an OpenAI-compatible chat-completions server that answers from recorded
 * trajectories, so `/solve` can be tried, and a platform integration-tested, without a GPU. The
 * server keeps no state: each request carries the conversation so far, and the number of
 * assistant turns in it says which recorded turn comes next. The recording is the one the request's
 * `model` names (a trajectory id or source), else the one its `seed` picks (seed modulo the number
 * of recordings, in id order), so N rollouts with seeds 0..N-1 replay N different recordings.
 * Commands still run for real in the rollout's sandbox; only the assistant side is recorded.
 */
import Fastify, { type FastifyInstance, type FastifyReply } from 'fastify';
import { z } from 'zod';
import { wnwError } from '../../errors.js';
import type { ChatMessage, Trajectory } from '../../types/trajectory.js';

export interface ReplayServerOptions {
  recordings: Trajectory[];
  /** Largest request body (default 16 MiB: a long conversation with tool outputs). */
  bodyLimitBytes?: number;
}

/** What the server reads of a request; the rest of OpenAI's fields are accepted and ignored. */
const ChatRequest = z.looseObject({
  model: z.string().optional(),
  messages: z.array(z.looseObject({ role: z.string() })).min(1),
  seed: z.number().int().optional(),
  tools: z.array(z.unknown()).optional(),
  stream: z.boolean().optional(),
});
type ChatRequest = z.infer<typeof ChatRequest>;

interface Recording {
  id: string;
  source: string;
  turns: ChatMessage[];
}

/** The recordings in id order, each with its assistant turns; a recording without one is refused. */
function replayRecordings(trajectories: Trajectory[]): Recording[] {
  if (trajectories.length === 0)
    throw wnwError('WNW_ERR_INPUT_INVALID', 'no recorded trajectories to replay', { details: { field: 'trajectories' } });
  return [...trajectories]
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    .map((trajectory) => {
      const turns = trajectory.messages.filter((message) => message.role === 'assistant');
      if (turns.length === 0) {
        throw wnwError('WNW_ERR_POLICY_REPLAY', `trajectory ${trajectory.id} has no assistant turns to replay`, {
          details: { field: 'trajectories', trajectory: trajectory.id },
        });
      }
      return { id: trajectory.id, source: trajectory.source, turns };
    });
}

/** The server, and the recordings it replays in the order seeds pick them (for the start-up listing). */
export function buildReplayServer(options: ReplayServerOptions): FastifyInstance & { readonly recordings: readonly Recording[] } {
  const recordings = replayRecordings(options.recordings);
  const app = Fastify({ logger: false, bodyLimit: options.bodyLimitBytes ?? 16 * 1024 * 1024 });
  const created = () => Math.floor(Date.now() / 1000);

  app.get('/v1/models', async () => ({
    object: 'list',
    data: [
      { id: 'replay', object: 'model', created: 0, owned_by: 'winnower' },
      ...recordings.map((r) => ({ id: r.id, object: 'model', created: 0, owned_by: 'winnower' })),
    ],
  }));

  app.post('/v1/chat/completions', async (request, reply) => {
    const parsed = ChatRequest.safeParse(request.body);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      return reply.status(400).send(openAiError(`${issue.path.join('.') || 'body'}: ${issue.message}`, 'invalid_request_error'));
    }
    const body = parsed.data;
    const recording = pick(recordings, body);
    const turnIndex = body.messages.filter((message) => message.role === 'assistant').length;
    const turn = recording.turns[turnIndex];
    if (!turn) {
      return reply
        .status(400)
        .send(
          openAiError(
            `recording ${recording.id} has ${recording.turns.length} assistant turns; this conversation asks for turn ${turnIndex + 1}`,
            'invalid_request_error',
          ),
        );
    }
    const message = answerFor(turn, body.tools !== undefined && body.tools.length > 0);
    const finishReason = message.tool_calls?.length ? 'tool_calls' : 'stop';
    const usage = recordedUsage(turn, body.messages);
    const id = `chatcmpl-replay-${recording.id}-${turnIndex}`;
    const model = body.model ?? 'replay';
    if (body.stream) return streamAnswer(reply, { id, model, created: created(), message, finishReason, usage });
    return {
      id,
      object: 'chat.completion',
      created: created(),
      model,
      choices: [{ index: 0, message, finish_reason: finishReason, logprobs: null }],
      usage,
    };
  });

  return Object.assign(app, { recordings });
}

/** The recording the request's model names, else the one its seed picks. */
function pick(recordings: Recording[], body: ChatRequest): Recording {
  const named = body.model ? recordings.find((r) => r.id === body.model || r.source === body.model) : undefined;
  if (named) return named;
  const seed = body.seed ?? 0;
  return recordings[((seed % recordings.length) + recordings.length) % recordings.length]!;
}

type AnswerMessage = { role: 'assistant'; content: string | null; tool_calls?: NonNullable<ChatMessage['tool_calls']> };

/** The recorded turn as the client asked for it: tool calls, or (no tools offered) each bash command as a fenced block. */
function answerFor(turn: ChatMessage, toolsOffered: boolean): AnswerMessage {
  const calls = turn.tool_calls ?? [];
  const content = typeof turn.content === 'string' ? turn.content : null;
  if (calls.length === 0) return { role: 'assistant', content: content ?? '' };
  if (toolsOffered) return { role: 'assistant', content, tool_calls: calls };
  const blocks = calls.map((call) => `\`\`\`bash\n${commandOf(call.function.arguments)}\n\`\`\``);
  return { role: 'assistant', content: [content, ...blocks].filter((part) => part).join('\n\n') };
}

function commandOf(argumentsJson: string): string {
  try {
    const parsed = JSON.parse(argumentsJson) as { command?: unknown };
    if (typeof parsed.command === 'string') return parsed.command;
  } catch {
    // not JSON: sent as it was recorded
  }
  return argumentsJson;
}

/** The recorded turn's usage when it has one; otherwise a rough count (4 characters a token), never zero. */
function recordedUsage(
  turn: ChatMessage,
  messages: ChatRequest['messages'],
): { prompt_tokens: number; completion_tokens: number; total_tokens: number } {
  const recorded = turn.meta?.usage as { prompt_tokens?: number; completion_tokens?: number } | undefined;
  const prompt = recorded?.prompt_tokens ?? Math.max(1, Math.ceil(JSON.stringify(messages).length / 4));
  const completion =
    recorded?.completion_tokens ?? Math.max(1, Math.ceil(JSON.stringify(turn.tool_calls ?? turn.content ?? '').length / 4));
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

function streamAnswer(
  reply: FastifyReply,
  answer: { id: string; model: string; created: number; message: AnswerMessage; finishReason: string; usage: Record<string, number> },
): void {
  const chunk = (delta: Record<string, unknown>, finish: string | null, extra: Record<string, unknown> = {}) =>
    `data: ${JSON.stringify({ id: answer.id, object: 'chat.completion.chunk', created: answer.created, model: answer.model, choices: [{ index: 0, delta, finish_reason: finish }], ...extra })}\n\n`;
  const toolCalls = answer.message.tool_calls?.map((call, index) => ({ index, ...call }));
  reply.hijack();
  reply.raw.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  reply.raw.write(
    chunk({ role: 'assistant', content: answer.message.content ?? '', ...(toolCalls ? { tool_calls: toolCalls } : {}) }, null),
  );
  reply.raw.write(chunk({}, answer.finishReason, { usage: answer.usage }));
  reply.raw.end('data: [DONE]\n\n');
}

function openAiError(message: string, type: string): { error: { message: string; type: string; param: null; code: null } } {
  return { error: { message, type, param: null, code: null } };
}
