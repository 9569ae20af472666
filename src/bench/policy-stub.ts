/**
 * A minimal OpenAI-compatible chat-completions server for benchmarks: every turn answers after a
 * fixed latency with the next scripted bash command of the rollout (chosen by the `seed` the
 * client sends) as a `bash` tool call, so the production OpenAI policy client is what runs.
 * It lives in src/ because `winnower bench --scenario solve` ships and starts it; tests keep their
 * own richer fake (test/fakes/fake-policy.ts).
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface PolicyStub {
  /** Base URL with the /v1 prefix. */
  url: string;
  /** Completions answered so far. */
  calls(): number;
  close(): Promise<void>;
}

export interface PolicyStubOptions {
  /** The commands of the rollout with this seed, one per turn (the last one repeats). */
  script(seed: number): string[];
  /** Latency of every turn, in ms (a stand-in for generation time). */
  latencyMs: number;
}

async function readJson(request: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
}

export async function startPolicyStub(options: PolicyStubOptions): Promise<PolicyStub> {
  let calls = 0;
  const server: Server = createServer((request, response) => {
    void (async () => {
      if (request.method !== 'POST' || !request.url?.endsWith('/chat/completions')) {
        response.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'not found' } }));
        return;
      }
      const body = await readJson(request);
      const seed = Number(body.seed ?? 0);
      const turn = ((body.messages as Array<{ role: string }> | undefined) ?? []).filter((message) => message.role === 'assistant').length;
      const commands = options.script(seed);
      await new Promise((resolve) => setTimeout(resolve, options.latencyMs));
      calls += 1;
      const command = commands[Math.min(turn, commands.length - 1)]!;
      response.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          id: `chatcmpl-${seed}-${turn}`,
          object: 'chat.completion',
          created: 0,
          model: String(body.model),
          choices: [
            {
              index: 0,
              message: { role: 'assistant', content: `Step ${turn}.`, tool_calls: [{ id: `call_${seed}_${turn}`, type: 'function', function: { name: 'bash', arguments: JSON.stringify({ command }) } }] },
              finish_reason: 'tool_calls',
            },
          ],
          usage: { prompt_tokens: 100 + turn * 50, completion_tokens: 20, total_tokens: 120 + turn * 50 },
        }),
      );
    })().catch((error: unknown) => {
      response.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: String(error) } }));
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    calls: () => calls,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
