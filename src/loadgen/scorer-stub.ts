/**
 * A value-model server with a fixed latency, for `winnower bench --compare-backend`: it speaks
 * vLLM's pooling API as winnower's vllm client calls it (`GET /v1/models`, `POST /classify` with
 * `input` a string or list), answers every request after `latencyMs` with one logit per input,
 * and keeps the last `/classify` body it received so the bench can send exactly that request
 * straight to it. The logit is a hash of the input: no model runs, the latency is the point.
 */
import { startStubServer } from './stub-server.js';

export interface ScorerStub {
  /** Base URL (no path). */
  url: string;
  model: string;
  /** The last /classify body received, as sent. */
  lastClassifyBody(): string | undefined;
  /** /classify requests answered. */
  calls(): number;
  close(): Promise<void>;
}

function logitOf(input: unknown): number {
  const text = typeof input === 'string' ? input : JSON.stringify(input);
  let hash = 2166136261;
  for (let index = 0; index < text.length; index += 97) hash = Math.imul(hash ^ text.charCodeAt(index), 16777619);
  return ((hash >>> 0) % 8001) / 1000 - 4;
}

export async function startScorerStub(options: { latencyMs: number; model?: string; maxModelLen?: number }): Promise<ScorerStub> {
  const model = options.model ?? 'bench-stub';
  let last: string | undefined;
  let calls = 0;
  const server = await startStubServer(async (request, text) => {
    const path = (request.url ?? '/').split('?')[0];
    if (request.method === 'GET' && path === '/v1/models')
      return {
        status: 200,
        json: { object: 'list', data: [{ id: model, object: 'model', max_model_len: options.maxModelLen ?? 32_768 }] },
      };
    if (request.method !== 'POST' || path !== '/classify')
      return { status: 404, json: { error: { message: `no route ${request.method} ${path}` } } };
    const body = JSON.parse(text) as { input?: unknown };
    const inputs = Array.isArray(body.input) && (body.input.length === 0 || typeof body.input[0] !== 'number') ? body.input : [body.input];
    last = text;
    await new Promise((resolve) => setTimeout(resolve, options.latencyMs));
    calls += 1;
    const data = inputs.map((input, index) => ({ index, label: 'LABEL_0', probs: [logitOf(input)], num_classes: 1 }));
    return {
      status: 200,
      json: { id: `classify-${calls}`, object: 'list', created: 0, model, data, usage: { prompt_tokens: 0, total_tokens: 0 } },
    };
  });
  return { url: server.origin, model, lastClassifyBody: () => last, calls: () => calls, close: () => server.close() };
}
