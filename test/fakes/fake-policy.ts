/**
 * A fake OpenAI-compatible chat-completions server for agent tests. A script set is chosen by the
 * `model` the client names, and each rollout within it by the `seed` it sends; a script is a list
 * of bash commands answered one per turn as a `bash` tool call (or a fenced block in text mode). Faults: an HTTP status from a given turn on,
 * a delay per response. It records every request body.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakePolicyScript {
  commands: string[];
  /** From this turn (0-based) on, answer this HTTP status instead. */
  failFromTurn?: { turn: number; status: number };
}

export interface FakePolicyServer {
  /** Base URL with the /v1 prefix. */
  url: string;
  requests: Array<Record<string, unknown>>;
  close(): Promise<void>;
}

async function readJson(request: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
}

export async function startFakePolicy(options: { scripts: Record<string, FakePolicyScript[]>; delayMs?: number; mode?: 'tools' | 'text' }): Promise<FakePolicyServer> {
  const requests: Array<Record<string, unknown>> = [];
  const server: Server = createServer(async (request, response) => {
    if (request.method !== 'POST' || request.url !== '/v1/chat/completions') {
      response.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'not found' } }));
      return;
    }
    const body = await readJson(request);
    requests.push(body);
    const seed = Number(body.seed ?? 0);
    const script = options.scripts[String(body.model)]?.[seed];
    const messages = (body.messages as Array<{ role: string }>) ?? [];
    const turn = messages.filter((message) => message.role === 'assistant').length;
    if (options.delayMs) await new Promise((resolve) => setTimeout(resolve, options.delayMs));
    if (!script) {
      response.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: `no script for model ${String(body.model)} seed ${seed}` } }));
      return;
    }
    if (script.failFromTurn && turn >= script.failFromTurn.turn) {
      response.writeHead(script.failFromTurn.status, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'scripted failure' } }));
      return;
    }
    const command = script.commands[Math.min(turn, script.commands.length - 1)]!;
    const text = (options.mode ?? 'tools') === 'text';
    const message = text
      ? { role: 'assistant', content: `Step ${turn}.\n\n\`\`\`bash\n${command}\n\`\`\`` }
      : {
          role: 'assistant',
          content: `Step ${turn}.`,
          tool_calls: [{ id: `call_${seed}_${turn}`, type: 'function', function: { name: 'bash', arguments: JSON.stringify({ command }) } }],
        };
    response.writeHead(200, { 'content-type': 'application/json' }).end(
      JSON.stringify({
        id: `chatcmpl-${seed}-${turn}`,
        object: 'chat.completion',
        created: 0,
        model: String(body.model),
        choices: [{ index: 0, message, finish_reason: text ? 'stop' : 'tool_calls' }],
        usage: { prompt_tokens: 100 + turn * 50, completion_tokens: 20, total_tokens: 120 + turn * 50 },
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
