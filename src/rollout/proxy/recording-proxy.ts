/**
 * The per-rollout recording proxy: an HTTP server on a unix socket (bind-mounted into the
 * sandbox) that speaks one harness's protocol. It accepts only the rollout's own token, sends
 * main-loop calls (requests offering the harness's main tools) upstream and records each
 * exchange, answers side calls (token counting, titles, quota probes) itself with an empty turn,
 * streams answers as SSE when asked, and enforces the call and token budgets: past one, or on an
 * upstream failure, it stops the rollout (`onStop`) and refuses further calls.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { toWinnowerError, type WinnowerError } from '../../errors.js';
import { secretMatcher } from '../../util/secret-compare.js';
import { answerFromMessage } from './from-chat-message.js';
import { PROTOCOLS, toolNamesOf, usageOf, type HarnessProtocol } from './protocols.js';
import { sseEvents } from './sse-writer.js';
import type { Upstream } from './upstream.js';

type Json = Record<string, unknown>;

/** Largest request body accepted from a harness (a long conversation, not a flood). */
const MAX_BODY_BYTES = 32 * 1024 * 1024;

export interface ProxyBudget {
  /** Main-loop model calls. */
  maxCalls: number;
  /** Prompt plus completion tokens over all calls. */
  tokenLimit: number;
}

export interface RecordedExchange {
  index: number;
  /** `main`: part of the agent loop, forwarded; `side`: answered by the proxy. */
  kind: 'main' | 'side';
  path: string;
  stream: boolean;
  status: number;
  started_at: string;
  duration_ms: number;
  usage?: { prompt_tokens: number; completion_tokens: number };
  /** The upstream's answer (main calls that succeeded). */
  response?: Json;
  error?: { code: string; message: string };
}

export interface ProxyStop {
  exit: 'step_limit' | 'token_limit' | 'error';
  detail: string;
  error?: WinnowerError;
}

export interface RecordingProxyOptions {
  protocol: HarnessProtocol;
  upstream: Upstream;
  /** Tool names whose presence marks a main-loop request. */
  mainTools: string[];
  budget: ProxyBudget;
  /** The rollout's cancellation: aborts calls in flight. */
  signal?: AbortSignal;
  /** After every main exchange, with the request it answered. */
  onExchange?: (exchange: RecordedExchange, request: Json) => void;
  /** Once, when a budget or an upstream failure ends the rollout. */
  onStop?: (stop: ProxyStop) => void;
  /** Folder the socket's folder is made in: one the sandbox user can pass through (default TMPDIR). */
  socketParent?: string;
}

export interface RecordingProxy {
  /** Host folder holding the socket, to bind into the sandbox (read-write). */
  readonly socketDir: string;
  readonly socketName: string;
  /** The rollout's token: the only credential the proxy accepts, and the only one the harness gets. */
  readonly token: string;
  readonly exchanges: RecordedExchange[];
  /** The last main-loop request (its conversation is the trajectory's) and its answer. */
  readonly last: { request?: Json; response?: Json };
  readonly usage: { prompt_tokens: number; completion_tokens: number; calls: number };
  stopped(): ProxyStop | undefined;
  close(): Promise<void>;
}

function errorBody(protocol: HarnessProtocol, type: string, message: string): Json {
  return protocol === 'anthropic-messages' ? { type: 'error', error: { type, message } } : { error: { message, type, code: type } };
}

async function readBody(request: IncomingMessage): Promise<Json> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new Error(`request body over ${MAX_BODY_BYTES} bytes`);
    chunks.push(chunk as Buffer);
  }
  const parsed: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('request body is not a JSON object');
  return parsed as Json;
}

export async function startRecordingProxy(options: RecordingProxyOptions): Promise<RecordingProxy> {
  const { protocol, upstream, budget } = options;
  const spec = PROTOCOLS[protocol];
  const token = `wnw-rollout-${randomBytes(24).toString('hex')}`;
  const socketDir = mkdtempSync(join(options.socketParent ?? tmpdir(), 'wnw-proxy-'));
  // The sandbox user is not the server's: it must reach (x) the folder and write (connect) the socket.
  chmodSync(socketDir, 0o755);
  const socketName = 'proxy.sock';
  const exchanges: RecordedExchange[] = [];
  const last: RecordingProxy['last'] = {};
  const usage = { prompt_tokens: 0, completion_tokens: 0, calls: 0 };
  const controller = new AbortController();
  const signal = options.signal ? AbortSignal.any([options.signal, controller.signal]) : controller.signal;
  let stop: ProxyStop | undefined;

  const stopWith = (next: ProxyStop): void => {
    if (stop) return;
    stop = next;
    options.onStop?.(next);
  };

  const reply = (response: ServerResponse, status: number, body: Json, request?: Json): void => {
    if (status === 200 && request?.stream === true) {
      response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      for (const event of sseEvents(protocol, body, request)) response.write(event);
      response.end();
      return;
    }
    response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  };

  const matches = secretMatcher([token]);
  const authorized = (request: IncomingMessage): boolean => {
    const bearer = request.headers.authorization?.startsWith('Bearer ') ? request.headers.authorization.slice('Bearer '.length) : undefined;
    return matches(bearer) || matches(request.headers['x-api-key']);
  };

  const handle = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const started = Date.now();
    const path = (request.url ?? '/').split('?')[0]!;
    if (!authorized(request))
      return reply(response, 401, errorBody(protocol, 'authentication_error', 'this proxy accepts only its rollout token'));
    if (request.method !== 'POST')
      return reply(response, 404, errorBody(protocol, 'not_found_error', `no route ${request.method} ${path}`));
    let body: Json;
    try {
      body = await readBody(request);
    } catch (error) {
      return reply(response, 400, errorBody(protocol, 'invalid_request_error', (error as Error).message));
    }
    const record = (entry: Omit<RecordedExchange, 'index' | 'path' | 'started_at' | 'duration_ms' | 'stream'>): RecordedExchange => {
      const exchange = {
        index: exchanges.length,
        path,
        stream: body.stream === true,
        started_at: new Date(started).toISOString(),
        duration_ms: Date.now() - started,
        ...entry,
      };
      exchanges.push(exchange);
      return exchange;
    };
    if (protocol === 'anthropic-messages' && path === `${spec.path}/count_tokens`) {
      // An estimate (4 characters a token) is all a harness does with it: decide when to compact.
      record({ kind: 'side', status: 200 });
      return reply(response, 200, { input_tokens: Math.ceil(JSON.stringify(body).length / 4) });
    }
    if (path !== spec.path)
      return reply(response, 404, errorBody(protocol, 'not_found_error', `this proxy speaks ${protocol} at ${spec.path}`));
    const offered = new Set(toolNamesOf(body));
    if (!options.mainTools.every((name) => offered.has(name))) {
      record({ kind: 'side', status: 200 });
      return reply(
        response,
        200,
        answerFromMessage(
          protocol,
          { role: 'assistant', content: '' },
          { id: `side-${exchanges.length}`, model: String(body.model ?? ''), usage: { prompt_tokens: 0, completion_tokens: 0 } },
        ),
        body,
      );
    }
    if (!stop && usage.calls >= budget.maxCalls) stopWith({ exit: 'step_limit', detail: `call limit of ${budget.maxCalls} reached` });
    if (!stop && usage.prompt_tokens + usage.completion_tokens >= budget.tokenLimit)
      stopWith({ exit: 'token_limit', detail: `token limit of ${budget.tokenLimit} reached` });
    if (stop) return reply(response, 400, errorBody(protocol, 'invalid_request_error', `winnower stopped this rollout: ${stop.detail}`));
    usage.calls += 1;
    try {
      const headers = Object.fromEntries(
        spec.forwardHeaders.flatMap((name) => (typeof request.headers[name] === 'string' ? [[name, request.headers[name] as string]] : [])),
      );
      const answer = await upstream.send(body, { signal, headers });
      const used = usageOf(protocol, answer);
      usage.prompt_tokens += used.prompt_tokens;
      usage.completion_tokens += used.completion_tokens;
      last.request = body;
      last.response = answer;
      const exchange = record({ kind: 'main', status: 200, usage: used, response: answer });
      options.onExchange?.(exchange, body);
      reply(response, 200, answer, body);
    } catch (caught) {
      const error = toWinnowerError(caught);
      last.request = body;
      last.response = undefined;
      const exchange = record({ kind: 'main', status: 502, error: { code: error.code, message: error.message } });
      options.onExchange?.(exchange, body);
      if (!signal.aborted) stopWith({ exit: 'error', detail: error.message, error });
      reply(response, 502, errorBody(protocol, 'api_error', `upstream failed: ${error.code}`));
    }
  };

  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      if (!response.headersSent) response.writeHead(500, { 'content-type': 'application/json' });
      response.end(JSON.stringify(errorBody(protocol, 'api_error', (error as Error).message)));
    });
  });
  const socketPath = join(socketDir, socketName);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socketPath, () => resolve());
  });
  chmodSync(socketPath, 0o666);

  let closed: Promise<void> | undefined;
  return {
    socketDir,
    socketName,
    token,
    exchanges,
    last,
    usage,
    stopped: () => stop,
    close() {
      closed ??= (async () => {
        controller.abort();
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
        await upstream.close();
        rmSync(socketDir, { recursive: true, force: true });
      })();
      return closed;
    },
  };
}
