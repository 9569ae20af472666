/**
 * A fake model server for harness tests, speaking the three wire protocols a harness may use:
 * OpenAI Chat Completions (POST /v1/chat/completions), OpenAI Responses (POST /v1/responses)
 * and Anthropic Messages (POST /v1/messages), whole answers (the recording proxy never asks the
 * upstream to stream). A script, chosen by the request's `model`, is a list of bash commands
 * answered one per turn as a call of the harness's own shell tool (`bash` for pi, `Bash` for
 * Claude Code), then a final text turn that ends the run. The turn is the number of assistant
 * turns the conversation already holds. It records every request body with its headers, and can
 * answer malformed bodies or hang.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface HarnessScript {
  /** The shell tool's name in this harness, and how its arguments look. */
  tool: string;
  args?: (command: string) => Record<string, unknown>;
  commands: string[];
  /** The last turn's text (default "Done."). */
  final?: string;
  /** Usage per turn (default prompt 100 + 50·turn, completion 20). */
  usage?: { prompt_tokens: number; completion_tokens: number };
}

export interface FakeHarnessPolicy {
  /** Base URL with /v1. */
  url: string;
  requests: Array<{ path: string; body: Record<string, any>; headers: IncomingHttpHeaders }>;
  /** The next `times` requests get this body with status 200. */
  malformed(times?: number, body?: string): void;
  /** The next `times` requests never get an answer. */
  hang(times?: number): void;
  close(): Promise<void>;
}

type Json = Record<string, any>;

function turnOf(path: string, body: Json): number {
  if (path === '/v1/responses')
    return Array.isArray(body.input) ? body.input.filter((item: Json) => item.type === 'function_call').length : 0;
  return (body.messages ?? []).filter((message: Json) => message.role === 'assistant').length;
}

function answer(path: string, body: Json, script: HarnessScript, turn: number): Json {
  const command = script.commands[turn];
  const usage = script.usage ?? { prompt_tokens: 100 + 50 * turn, completion_tokens: 20 };
  const id = `call_${turn}`;
  const args = command === undefined ? undefined : (script.args ?? ((text: string) => ({ command: text })))(command);
  const text = command === undefined ? (script.final ?? 'Done.') : `Step ${turn}.`;
  if (path === '/v1/chat/completions') {
    const message = {
      role: 'assistant',
      content: text,
      ...(args ? { tool_calls: [{ id, type: 'function', function: { name: script.tool, arguments: JSON.stringify(args) } }] } : {}),
    };
    return {
      id: `chatcmpl-${turn}`,
      object: 'chat.completion',
      created: 0,
      model: body.model,
      choices: [{ index: 0, message, finish_reason: args ? 'tool_calls' : 'stop' }],
      usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
    };
  }
  if (path === '/v1/messages') {
    const content = [{ type: 'text', text }, ...(args ? [{ type: 'tool_use', id: `toolu_${turn}`, name: script.tool, input: args }] : [])];
    return {
      id: `msg_${turn}`,
      type: 'message',
      role: 'assistant',
      model: body.model,
      content,
      stop_reason: args ? 'tool_use' : 'end_turn',
      stop_sequence: null,
      usage: { input_tokens: usage.prompt_tokens, output_tokens: usage.completion_tokens },
    };
  }
  const output = args
    ? [{ type: 'function_call', id: `fc_${turn}`, call_id: id, name: script.tool, arguments: JSON.stringify(args), status: 'completed' }]
    : [
        {
          type: 'message',
          id: `msg_${turn}`,
          role: 'assistant',
          status: 'completed',
          content: [{ type: 'output_text', text, annotations: [] }],
        },
      ];
  return {
    id: `resp_${turn}`,
    object: 'response',
    status: 'completed',
    model: body.model,
    output,
    usage: {
      input_tokens: usage.prompt_tokens,
      output_tokens: usage.completion_tokens,
      total_tokens: usage.prompt_tokens + usage.completion_tokens,
    },
  };
}

export async function startFakeHarnessPolicy(scripts: Record<string, HarnessScript>): Promise<FakeHarnessPolicy> {
  const requests: FakeHarnessPolicy['requests'] = [];
  const faults: Array<{ kind: 'malformed'; body: string } | { kind: 'hang' }> = [];
  const server: Server = createServer(async (request, response) => {
    const path = (request.url ?? '').split('?')[0]!;
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const send = (status: number, body: unknown) =>
      response.writeHead(status, { 'content-type': 'application/json' }).end(typeof body === 'string' ? body : JSON.stringify(body));
    if (request.method !== 'POST' || !['/v1/chat/completions', '/v1/messages', '/v1/responses'].includes(path))
      return send(404, { error: { message: `no route ${path}` } });
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Json;
    requests.push({ path, body, headers: request.headers });
    const fault = faults.shift();
    if (fault?.kind === 'hang') return;
    if (fault?.kind === 'malformed') return send(200, fault.body);
    if (body.stream) return send(400, { error: { message: 'this fake answers whole responses only (stream: false)' } });
    const script = scripts[String(body.model)];
    if (!script) return send(400, { error: { message: `no script for model ${String(body.model)}` } });
    return send(200, answer(path, body, script, turnOf(path, body)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    malformed(times = 1, body = '{"choices": [ truncated') {
      for (let index = 0; index < times; index += 1) faults.push({ kind: 'malformed', body });
    },
    hang(times = 1) {
      for (let index = 0; index < times; index += 1) faults.push({ kind: 'hang' });
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
