/**
 * A minimal OpenAI-compatible chat-completions server for benchmarks: every turn answers after a
 * fixed latency with the next scripted bash command of the rollout (chosen by the `seed` the
 * client sends) as a `bash` tool call, so the production OpenAI policy client is what runs.
 * It lives in src/ because `winnower bench --scenario solve` ships and starts it; tests keep their
 * own richer fake (test/fakes/fake-policy.ts).
 */
import { startStubServer } from './stub-server.js';

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

export async function startPolicyStub(options: PolicyStubOptions): Promise<PolicyStub> {
  let calls = 0;
  const server = await startStubServer(async (request, text) => {
    if (request.method !== 'POST' || !request.url?.endsWith('/chat/completions'))
      return { status: 404, json: { error: { message: 'not found' } } };
    const body = JSON.parse(text) as Record<string, unknown>;
    const seed = Number(body.seed ?? 0);
    const turn = ((body.messages as Array<{ role: string }> | undefined) ?? []).filter((message) => message.role === 'assistant').length;
    const commands = options.script(seed);
    await new Promise((resolve) => setTimeout(resolve, options.latencyMs));
    calls += 1;
    const command = commands[Math.min(turn, commands.length - 1)]!;
    return {
      status: 200,
      json: {
        id: `chatcmpl-${seed}-${turn}`,
        object: 'chat.completion',
        created: 0,
        model: String(body.model),
        choices: [
          {
            index: 0,
            message: {
              role: 'assistant',
              content: `Step ${turn}.`,
              tool_calls: [
                { id: `call_${seed}_${turn}`, type: 'function', function: { name: 'bash', arguments: JSON.stringify({ command }) } },
              ],
            },
            finish_reason: 'tool_calls',
          },
        ],
        usage: { prompt_tokens: 100 + turn * 50, completion_tokens: 20, total_tokens: 120 + turn * 50 },
      },
    };
  });
  return { url: `${server.origin}/v1`, calls: () => calls, close: () => server.close() };
}
