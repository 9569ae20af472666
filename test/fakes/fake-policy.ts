/**
 * A fake OpenAI-compatible chat-completions server for agent tests. A script set is chosen by the
 * `model` the client names, and each rollout within it by the `seed` it sends; a script is a list
 * of bash commands answered one per turn as a `bash` tool call (or a fenced block in text mode),
 * or raw assistant messages sent as given. Faults: an HTTP status from a given turn on, a delay
 * per response, and a queue of one-off faults (status then recovery, malformed body, hang).
 * It records every request body and its headers.
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakePolicyUsage {
  prompt_tokens: number;
  completion_tokens: number;
}

export interface FakePolicyScript {
  commands: string[];
  /** From this turn (0-based) on, answer this HTTP status instead. */
  failFromTurn?: { turn: number; status: number };
  /** Raw assistant messages by turn, sent as given instead of the command's (reasoning_content, null content, ...). */
  messages?: Array<Record<string, unknown> | undefined>;
  /** Usage by turn; `null` leaves `usage` out of the response. Default: prompt 100 + 50·turn, completion 20. */
  usage?: Array<FakePolicyUsage | null | undefined>;
}

/** A one-off misbehaviour, applied to the next request (in queue order), before any script. */
export type FakePolicyFault =
  | { kind: 'status'; status: number; body?: string; retryAfter?: string }
  | { kind: 'malformed'; body: string }
  | { kind: 'hang' };

export interface FakePolicyServer {
  /** Base URL with the /v1 prefix. */
  url: string;
  /** Every request body, in order (faulted ones included). */
  requests: Array<Record<string, unknown>>;
  /** The headers of every request, parallel to `requests`. */
  headers: IncomingHttpHeaders[];
  /** Pending one-off faults. */
  faults: FakePolicyFault[];
  /** The next `times` requests answer `status` (then the server recovers). */
  fail(status: number, times?: number, options?: { body?: string; retryAfter?: string }): FakePolicyServer;
  /** The next `times` requests get `body` with status 200. */
  malformed(times?: number, body?: string): FakePolicyServer;
  /** The next `times` requests never get an answer. */
  hang(times?: number): FakePolicyServer;
  close(): Promise<void>;
}

async function readJson(request: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
}

export async function startFakePolicy(options: {
  scripts: Record<string, FakePolicyScript[]>;
  delayMs?: number;
  mode?: 'tools' | 'text';
}): Promise<FakePolicyServer> {
  const requests: Array<Record<string, unknown>> = [];
  const headers: IncomingHttpHeaders[] = [];
  const faults: FakePolicyFault[] = [];
  const server: Server = createServer(async (request, response) => {
    if (request.method !== 'POST' || request.url !== '/v1/chat/completions') {
      response.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'not found' } }));
      return;
    }
    const body = await readJson(request);
    requests.push(body);
    headers.push(request.headers);
    const fault = faults.shift();
    if (fault?.kind === 'hang') return;
    if (fault?.kind === 'status') {
      const faultHeaders: Record<string, string> = { 'content-type': 'application/json' };
      if (fault.retryAfter !== undefined) faultHeaders['retry-after'] = fault.retryAfter;
      response.writeHead(fault.status, faultHeaders).end(fault.body ?? JSON.stringify({ error: { message: `injected ${fault.status}` } }));
      return;
    }
    if (fault?.kind === 'malformed') {
      response.writeHead(200, { 'content-type': 'application/json' }).end(fault.body);
      return;
    }
    const seed = Number(body.seed ?? 0);
    const script = options.scripts[String(body.model)]?.[seed];
    const messages = (body.messages as Array<{ role: string }>) ?? [];
    const turn = messages.filter((message) => message.role === 'assistant').length;
    if (options.delayMs) await new Promise((resolve) => setTimeout(resolve, options.delayMs));
    if (!script) {
      response
        .writeHead(400, { 'content-type': 'application/json' })
        .end(JSON.stringify({ error: { message: `no script for model ${String(body.model)} seed ${seed}` } }));
      return;
    }
    if (script.failFromTurn && turn >= script.failFromTurn.turn) {
      response
        .writeHead(script.failFromTurn.status, { 'content-type': 'application/json' })
        .end(JSON.stringify({ error: { message: 'scripted failure' } }));
      return;
    }
    const text = (options.mode ?? 'tools') === 'text';
    const raw = script.messages?.[turn];
    let message: Record<string, unknown>;
    if (raw) {
      message = { role: 'assistant', ...raw };
    } else {
      const command = script.commands[Math.min(turn, script.commands.length - 1)]!;
      message = text
        ? { role: 'assistant', content: `Step ${turn}.\n\n\`\`\`bash\n${command}\n\`\`\`` }
        : {
            role: 'assistant',
            content: `Step ${turn}.`,
            tool_calls: [
              { id: `call_${seed}_${turn}`, type: 'function', function: { name: 'bash', arguments: JSON.stringify({ command }) } },
            ],
          };
    }
    const scripted = script.usage?.[turn];
    const usage = scripted === undefined ? { prompt_tokens: 100 + turn * 50, completion_tokens: 20 } : scripted;
    const hasCalls = Array.isArray(message.tool_calls) && message.tool_calls.length > 0;
    response.writeHead(200, { 'content-type': 'application/json' }).end(
      JSON.stringify({
        id: `chatcmpl-${seed}-${turn}`,
        object: 'chat.completion',
        created: 0,
        model: String(body.model),
        choices: [{ index: 0, message, finish_reason: hasCalls ? 'tool_calls' : 'stop' }],
        ...(usage ? { usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens } } : {}),
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const fake: FakePolicyServer = {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    headers,
    faults,
    fail(status, times = 1, extra = {}) {
      for (let index = 0; index < times; index += 1) faults.push({ kind: 'status', status, ...extra });
      return fake;
    },
    malformed(times = 1, body = '{"choices": [ truncated') {
      for (let index = 0; index < times; index += 1) faults.push({ kind: 'malformed', body });
      return fake;
    },
    hang(times = 1) {
      for (let index = 0; index < times; index += 1) faults.push({ kind: 'hang' });
      return fake;
    },
    close: () =>
      new Promise((resolve) => {
        // Hung requests and keep-alive sockets would otherwise hold close() open.
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return fake;
}
