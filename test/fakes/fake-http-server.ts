/**
 * The shared half of the fake value-model servers (fake-sglang, fake-vllm, fake-openai): a real
 * node:http server on port 0 that records every request body and can be told to misbehave —
 * answer an error status (then recover), hang, send a malformed body, or answer slowly.
 * Scores are deterministic: `fakeLogit` hashes the token ids or the text a server received.
 */
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: unknown;
}

export type Fault =
  | { kind: 'status'; status: number; body?: string; retryAfter?: string }
  | { kind: 'hang' }
  | { kind: 'malformed'; body: string }
  | { kind: 'reset' };

export interface Reply {
  status: number;
  json: unknown;
  /** Never answer this request (a server that hangs on it), whatever status and json say. */
  hang?: boolean;
}

export type Route = (body: unknown, request: RecordedRequest) => Reply;

/** A logit in [-4, 4] derived from the ids or text the server received. */
export function fakeLogit(input: number[] | string): number {
  const text = typeof input === 'string' ? input : input.join(',');
  let hash = 2166136261;
  for (let index = 0; index < text.length; index += 1) {
    hash ^= text.charCodeAt(index);
    hash = Math.imul(hash, 16777619);
  }
  return Math.round((((hash >>> 0) % 8001) / 1000 - 4) * 1000) / 1000;
}

/** log σ(x), stable. */
export function logSigmoid(x: number): number {
  return x >= 0 ? -Math.log1p(Math.exp(-x)) : x - Math.log1p(Math.exp(x));
}

/** Reads `test/fixtures/<backend>/<name>.json` afresh (callers may mutate it). */
export function fixture(backend: string, name: string): any {
  return JSON.parse(readFileSync(new URL(`../fixtures/${backend}/${name}.json`, import.meta.url), 'utf8'));
}

export class FakeHttpServer {
  /** Every request received, in order, body parsed as JSON when it is JSON. */
  readonly requests: RecordedRequest[] = [];
  /** Applied one per request, before routing, in order. */
  readonly faults: Fault[] = [];
  /** Delay before every answer (ms). */
  delayMs = 0;
  /** While set, every answer waits for it to settle first: a test holds requests in progress for as long as it needs. */
  hold: Promise<unknown> | undefined;
  /** Requests being handled now; `peakInFlight` is the most seen at once. */
  inFlight = 0;
  peakInFlight = 0;
  #server: Server | undefined;
  #url = '';
  readonly #routes: Record<string, Route>;

  constructor(routes: Record<string, Route>) {
    this.#routes = routes;
  }

  get url(): string {
    return this.#url;
  }

  /** Bodies received on `path`. */
  bodies(path: string): any[] {
    return this.requests.filter((request) => request.path === path).map((request) => request.body);
  }

  /** The next `times` requests answer `status` (then the server recovers). */
  fail(status: number, times = 1, options: { body?: string; retryAfter?: string } = {}): this {
    for (let index = 0; index < times; index += 1) this.faults.push({ kind: 'status', status, ...options });
    return this;
  }

  /** The next `times` requests never get an answer. */
  hang(times = 1): this {
    for (let index = 0; index < times; index += 1) this.faults.push({ kind: 'hang' });
    return this;
  }

  /** The next `times` requests get `body` with status 200. */
  malformed(times = 1, body = '{"choices": [ truncated'): this {
    for (let index = 0; index < times; index += 1) this.faults.push({ kind: 'malformed', body });
    return this;
  }

  /** The next `times` requests have their connection destroyed without an answer. */
  reset(times = 1): this {
    for (let index = 0; index < times; index += 1) this.faults.push({ kind: 'reset' });
    return this;
  }

  async start(): Promise<this> {
    this.#server = createServer((request, response) => void this.#handle(request, response));
    await new Promise<void>((resolve) => this.#server!.listen(0, '127.0.0.1', resolve));
    const { port } = this.#server.address() as AddressInfo;
    this.#url = `http://127.0.0.1:${port}`;
    return this;
  }

  async close(): Promise<void> {
    const server = this.#server;
    if (!server) return;
    this.#server = undefined;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  async #handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    let body: unknown = raw;
    try {
      body = raw ? JSON.parse(raw) : undefined;
    } catch {
      // kept as text
    }
    const recorded: RecordedRequest = {
      method: request.method ?? 'GET',
      path: (request.url ?? '/').split('?')[0]!,
      headers: request.headers,
      body,
    };
    this.requests.push(recorded);
    this.inFlight += 1;
    this.peakInFlight = Math.max(this.peakInFlight, this.inFlight);
    try {
      const fault = this.faults.shift();
      if (fault?.kind === 'hang') return;
      if (fault?.kind === 'reset') {
        request.socket.destroy();
        return;
      }
      if (this.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, this.delayMs));
      if (this.hold) await this.hold;
      if (fault?.kind === 'status') {
        const headers: Record<string, string> = { 'content-type': 'application/json' };
        if (fault.retryAfter !== undefined) headers['retry-after'] = fault.retryAfter;
        response.writeHead(fault.status, headers).end(
          fault.body ??
            JSON.stringify({
              object: 'error',
              message: `injected ${fault.status}`,
              type: 'InternalServerError',
              param: null,
              code: fault.status,
            }),
        );
        return;
      }
      if (fault?.kind === 'malformed') {
        response.writeHead(200, { 'content-type': 'application/json' }).end(fault.body);
        return;
      }
      // Routes are POST by path, or `GET /path` for the probes clients send first.
      const route = request.method === 'POST' ? this.#routes[recorded.path] : this.#routes[`${recorded.method} ${recorded.path}`];
      const reply: Reply = route ? route(body, recorded) : { status: 404, json: { detail: 'Not Found' } };
      if (reply.hang) return;
      response.writeHead(reply.status, { 'content-type': 'application/json' }).end(JSON.stringify(reply.json));
    } finally {
      this.inFlight -= 1;
    }
  }
}

/**
 * One choice of a recorded chat completion (`fixtures/openai/chat-completion`) answering `token`
 * with its `top_logprobs`, each with its UTF-8 `bytes`, as vLLM and SGLang answer `logprobs: true`.
 */
export function chatLogprobsChoice(token: string, logprob: number, top: ReadonlyArray<readonly [string, number]>) {
  const bytes = (text: string) => [...Buffer.from(text, 'utf8')];
  const template = fixture('openai', 'chat-completion');
  return {
    template,
    choice: {
      ...template.choices[0],
      message: { ...template.choices[0].message, content: token },
      logprobs: {
        content: [
          { token, logprob, bytes: bytes(token), top_logprobs: top.map(([t, lp]) => ({ token: t, logprob: lp, bytes: bytes(t) })) },
        ],
      },
    },
  };
}

/** A 400 as an OpenAI-compatible server answers it (`fixtures/openai/error-400`: `{error: {message, type, param, code: null}}`). */
export function invalidRequest(message: string, param: string | null = null): Reply {
  return { status: 400, json: { error: { ...fixture('openai', 'error-400').error, message, param } } };
}
