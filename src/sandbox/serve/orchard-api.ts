/**
 * The Orchard Env REST API as a fastify plugin, over any winnower sandbox provider: what Orchard's
 * SDK, smoke test and examples call (shared/design/orchard-real-behaviour.md §19). Compact JSON on
 * every answer, `X-Request-ID` on every answer, `X-API-Key` auth (401 missing, 403 wrong; `/` and
 * `/health` open), `{detail}` errors, pydantic-shaped 422s, and the PTY WebSocket (pty-session.ts).
 * Reads, listings and outputs are bounded in bytes and time, and reads and listings stop when the
 * client leaves (docs/sandbox-serve.md lists every deliberate difference). `winnower sandbox serve` runs it alone;
 * `winnower serve` can mount it under a prefix (`sandbox.serve.mount`); registered without
 * fastify-plugin, its hooks, parsers and error shape stay inside its own routes.
 *
 * @example
 * const app = Fastify();
 * await app.register(orchardEnvApi, { provider: createLocalProvider(), repo: { path: '.' }, apiKey: 'k' });
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { posix } from 'node:path';
import websocket from '@fastify/websocket';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import { WinnowerError } from '../../errors.js';
import { shellQuote } from '../base-sandbox.js';
import type { Sandbox } from '../types.js';
import { JobTable, type JobTableOptions } from './job-table.js';
import {
  ApplyPatchRequest,
  CreateRequest,
  ExecRequest,
  NUL_MESSAGE,
  nulField,
  PathQuery,
  validationDetail,
  WaitQuery,
  WriteFileRequest,
} from './orchard-shapes.js';
import { PtySession, parseInit, type PtyServerFrame } from './pty-session.js';
import { SandboxTable, type SandboxEntry, type SandboxTableOptions } from './sandbox-table.js';

export interface OrchardEnvApiOptions extends SandboxTableOptions, JobTableOptions {
  /** Required as `X-API-Key` when set. */
  apiKey?: string;
  /** Largest request body (file uploads are base64), in bytes (default 128 MiB). */
  bodyLimitBytes?: number;
  /** How long an exec waits for a sandbox still starting before 404 "agent not ready" (default 15 s, as Orchard). */
  agentWaitMs?: number;
  /** Longest a file read may take before 504 (default 60 s); its size is capped by the provider. */
  fileTimeoutMs?: number;
}

/** The longest a `/wait` holds a request open. */
const MAX_WAIT_MS = 3_600_000;
const VERSION = '0.1.0';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Answered without an API key. */
    orchardOpen?: boolean;
  }
}

export async function orchardEnvApi(app: FastifyInstance, options: OrchardEnvApiOptions): Promise<void> {
  const table = new SandboxTable(options);
  const jobs = new JobTable(options);
  const agentWaitMs = options.agentWaitMs ?? 15_000;
  const fileTimeoutMs = options.fileTimeoutMs ?? 60_000;
  const bodyLimit = options.bodyLimitBytes ?? 128 * 1024 * 1024;
  table.onReap = (id, reason) => app.log.info({ sandbox: id, reason }, 'sandbox reaped');
  app.addHook('onClose', async () => table.close());

  // JSON whatever the content type says (curl -d sends form-encoded), and empty bodies allowed (heartbeat, DELETE).
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string', bodyLimit }, (_request, body, done) => {
    const text = String(body);
    if (text.trim() === '') return done(null, undefined);
    try {
      done(null, JSON.parse(text));
    } catch {
      done(Object.assign(new Error('invalid JSON body'), { statusCode: 422 }), undefined);
    }
  });

  app.addHook('onSend', async (request, reply) => {
    if (!reply.hasHeader('x-request-id')) reply.header('x-request-id', request.id);
  });
  const key = options.apiKey ? digest(options.apiKey) : undefined;
  app.addHook('onRequest', async (request, reply) => {
    if (!key || request.routeOptions.config?.orchardOpen) return;
    const given = request.headers['x-api-key'];
    if (typeof given !== 'string' || given === '')
      return reply.code(401).send({ detail: 'Missing API key. Please provide X-API-Key header.' });
    if (!timingSafeEqual(digest(given), key)) return reply.code(403).send({ detail: 'Invalid API key' });
  });
  app.setErrorHandler((error: FastifyError | WinnowerError | Error, request, reply) => {
    if (WinnowerError.isInstance(error)) {
      const retryAfter = error.details.retry_after_s;
      if (typeof retryAfter === 'number') reply.header('retry-after', String(retryAfter));
      if (error.status >= 500 && error.status !== 503) request.log.error({ err: error }, error.message);
      return reply.code(error.status).send({ detail: error.message });
    }
    const status = (error as FastifyError).statusCode;
    if (status && status >= 400 && status < 500) return reply.code(status === 400 ? 422 : status).send({ detail: error.message });
    request.log.error({ err: error }, 'unhandled error');
    return reply.code(500).send({ error: 'Internal server error', detail: String(error.message), request_id: request.id });
  });
  app.setNotFoundHandler((_request, reply) => reply.code(404).send({ detail: 'Not Found' }));

  // The PTY WebSocket. A client offering `Sec-WebSocket-Protocol: api_key.<key>` gets that protocol back (a
  // browser refuses a handshake that answers none).
  await app.register(websocket, {
    options: {
      maxPayload: 4 * 1024 * 1024,
      handleProtocols: (protocols: Set<string>) => [...protocols].find((protocol) => protocol.startsWith('api_key.')) ?? false,
    },
  });
  app.get<{ Params: { id: string } }>('/sandboxes/:id/exec/pty', { websocket: true, config: { orchardOpen: true } }, (socket, request) => {
    // Orchard closes with these codes before accepting; we accept first so that every client sees the code.
    if (key && !ptyKeyAccepted(request, key)) return socket.close(4401, 'Unauthorized');
    const entry = table.get(request.params.id);
    if (!entry) return socket.close(4404, `Sandbox ${request.params.id} not found`);
    if (entry.view.status !== 'ready' || !entry.sandbox || entry.deleted)
      return socket.close(4409, `Sandbox ${entry.view.sandbox_id} is not ready`);
    servePty(socket, entry, entry.sandbox, Math.floor(table.remainingLifetimeS(entry) * 1000));
  });

  app.get('/', { config: { orchardOpen: true } }, async () => ({
    service: 'winnower sandbox serve (Orchard Env API)',
    version: VERSION,
    status: 'running',
  }));
  app.get('/health', { config: { orchardOpen: true } }, async () => ({ status: 'healthy' }));
  app.get('/resources', async () => ({
    status: 'ok',
    sandboxes: table.size,
    max_sandboxes: table.limits.maxSandboxes,
    ttl_seconds: table.limits.ttlS,
  }));

  app.post('/sandboxes', async (request, reply) => {
    const body = parse(CreateRequest, request.body, 'body', reply);
    if (!body) return reply;
    // The SDK waits on `/wait?timeout=<timeout>` with the value answered here.
    return { ...table.create(body), timeout: body.timeout };
  });

  app.get<{ Params: { id: string } }>('/sandboxes/:id', async (request, reply) => {
    const entry = table.get(request.params.id);
    if (!entry) return sandboxNotFound(reply, request.params.id);
    return entry.view;
  });

  app.get<{ Params: { id: string } }>('/sandboxes/:id/wait', async (request, reply) => {
    const query = parse(WaitQuery, request.query, 'query', reply);
    if (!query) return reply;
    const entry = table.get(request.params.id);
    if (!entry) return sandboxNotFound(reply, request.params.id);
    const timeoutS = query.timeout ?? 300;
    if (!(await table.waitSettled(entry, Math.min(MAX_WAIT_MS, timeoutS * 1000)))) {
      return reply.code(408).send({ detail: `Sandbox ${entry.view.sandbox_id} not ready within ${timeoutS}s` });
    }
    return entry.view;
  });

  app.delete<{ Params: { id: string } }>('/sandboxes/:id', async (request, reply) => {
    const id = request.params.id;
    // The record is gone either way; a backing sandbox that fails to close is the server's problem, not the client's.
    const held = await table.delete(id).catch((error: unknown) => {
      request.log.error({ err: error, sandbox: id }, 'closing a deleted sandbox failed');
      return true;
    });
    // Orchard answers 200 for any id; we answer 404 for an id this server never had, and 200 again for one
    // it deleted or reaped (the SDK's `with` block and exit cleanup DELETE sandboxes the TTL may have taken).
    if (!held && !table.wasDeleted(id)) return sandboxNotFound(reply, id);
    return { status: 'deleted', sandbox_id: id };
  });

  app.post<{ Params: { id: string } }>('/sandboxes/:id/heartbeat', async (request, reply) => {
    const entry = table.get(request.params.id);
    if (!entry) return sandboxNotFound(reply, request.params.id);
    table.heartbeat(entry);
    return { status: 'ok', sandbox_id: entry.view.sandbox_id };
  });

  app.post<{ Params: { id: string } }>('/sandboxes/:id/exec', async (request, reply) => {
    const body = parse(ExecRequest, request.body, 'body', reply);
    if (!body) return reply;
    const entry = table.get(request.params.id);
    if (!entry) return sandboxNotFound(reply, request.params.id);
    if (!withinLifetime(entry, body.timeout_seconds, reply)) return reply;
    if (!(await table.waitSettled(entry, agentWaitMs)) || !entry.sandbox || entry.deleted) {
      return reply.code(404).send({ detail: `Sandbox ${entry.view.sandbox_id} agent not ready` });
    }
    const job = jobs.submit(entry, body);
    if (!body.wait) return { job_id: job.view.job_id, status: 'queued' };
    await jobs.wait(job, (body.timeout_seconds + 30) * 1000);
    return job.view;
  });

  app.get<{ Params: { id: string } }>('/jobs/:id', async (request, reply) => {
    const job = jobs.get(request.params.id);
    if (!job) return reply.code(404).send({ detail: 'Job not found' });
    return job.view;
  });

  app.get<{ Params: { id: string } }>('/jobs/:id/wait', async (request, reply) => {
    const query = parse(WaitQuery, request.query, 'query', reply);
    if (!query) return reply;
    const job = jobs.get(request.params.id);
    if (!job) return reply.code(404).send({ detail: 'Job not found' });
    await jobs.wait(job, Math.min(MAX_WAIT_MS, (query.timeout ?? 300) * 1000));
    return job.view;
  });

  app.post<{ Params: { id: string } }>('/sandboxes/:id/files', { bodyLimit }, async (request, reply) => {
    const body = parse(WriteFileRequest, request.body, 'body', reply);
    if (!body) return reply;
    const sandbox = readySandbox(request, reply);
    if (!sandbox) return reply;
    const content = Buffer.from(body.content, 'base64');
    await sandbox.writeFile(body.path, content);
    if (body.mode) await checked(sandbox, `chmod ${body.mode} -- ${shellQuote(body.path)}`);
    return { success: true, path: body.path, size: content.length };
  });

  app.get<{ Params: { id: string } }>('/sandboxes/:id/files', async (request, reply) => {
    const query = parse(PathQuery, request.query, 'query', reply);
    if (!query) return reply;
    const sandbox = readySandbox(request, reply);
    if (!sandbox) return reply;
    if (!query.path) return reply.code(422).send({ detail: [{ type: 'missing', loc: ['query', 'path'], msg: 'Field required' }] });
    // Bounded in bytes by the provider's transfer cap, in time here, and dropped with the client.
    const tooSlow = AbortSignal.timeout(fileTimeoutMs);
    try {
      const content = Buffer.from(await sandbox.readFile(query.path, { signal: AbortSignal.any([tooSlow, clientGone(reply)]) }));
      return { path: query.path, content: content.toString('base64'), size: content.length };
    } catch (error) {
      if (tooSlow.aborted)
        return reply.code(504).send({ detail: `Reading ${query.path} took longer than ${fileTimeoutMs / 1000}s; the read was stopped` });
      if (WinnowerError.isInstance(error) && typeof error.details.limit_bytes === 'number') {
        return reply
          .code(413)
          .send({ detail: `File ${query.path} is larger than this server's read limit (${error.details.limit_bytes} bytes)` });
      }
      if (!WinnowerError.isInstance(error) || error.code !== 'WNW_ERR_SBX_FILE') throw error;
      const kind = await pathKind(sandbox, query.path);
      if (kind === 'missing') return reply.code(404).send({ detail: `File not found: ${query.path}` });
      if (kind === 'directory') return reply.code(400).send({ detail: `Not a file: ${query.path}` });
      throw error;
    }
  });

  app.get<{ Params: { id: string } }>('/sandboxes/:id/files/list', async (request, reply) => {
    const query = parse(PathQuery, request.query, 'query', reply);
    if (!query) return reply;
    const sandbox = readySandbox(request, reply);
    if (!sandbox) return reply;
    const path = query.path ?? sandbox.workdir;
    const listed = await listDirectory(sandbox, path, clientGone(reply));
    if (listed === 'missing') return reply.code(404).send({ detail: `Path not found: ${path}` });
    if (listed === 'not-a-directory') return reply.code(400).send({ detail: `Not a directory: ${path}` });
    return { path, files: listed };
  });

  app.post<{ Params: { id: string } }>('/sandboxes/:id/apply_patch', async (request, reply) => {
    const body = parse(ApplyPatchRequest, request.body, 'body', reply);
    if (!body) return reply;
    const entry = table.get(request.params.id);
    if (entry && !withinLifetime(entry, body.timeout_seconds, reply)) return reply;
    const sandbox = readySandbox(request, reply);
    if (!sandbox) return reply;
    // As Orchard: `git apply` in the working directory (/workspace with a repo); the patch goes in on stdin, so no line of it can end it early.
    const result = await sandbox.exec('git apply --verbose -', {
      cwd: sandbox.workdir,
      stdin: body.patch.endsWith('\n') ? body.patch : `${body.patch}\n`,
      timeoutMs: body.timeout_seconds * 1000,
    });
    const timedOut = result.timedOut ? `Patch application timed out after ${body.timeout_seconds}s` : null;
    return {
      success: result.exitCode === 0,
      stdout: result.stdout,
      stderr: result.stderr,
      exit_code: result.timedOut ? 124 : result.exitCode,
      error: timedOut ?? (result.exitCode === 0 ? null : 'git apply failed'),
    };
  });

  /** False after answering 422 when `timeoutS` runs past the sandbox's TTL. */
  function withinLifetime(entry: SandboxEntry, timeoutS: number, reply: FastifyReply): boolean {
    const remaining = Math.floor(table.remainingLifetimeS(entry));
    if (timeoutS <= remaining) return true;
    void reply.code(422).send({
      detail: [
        {
          type: 'less_than_equal',
          loc: ['body', 'timeout_seconds'],
          msg: `Input should be less than or equal to ${remaining}: the seconds left before the sandbox's TTL removes it`,
        },
      ],
    });
    return false;
  }

  function readySandbox(request: FastifyRequest<{ Params: { id: string } }>, reply: FastifyReply): Sandbox | undefined {
    const entry = table.get(request.params.id);
    if (!entry) {
      void sandboxNotFound(reply, request.params.id);
      return undefined;
    }
    if (!entry.sandbox || entry.deleted) {
      void reply.code(400).send({ detail: `Sandbox ${entry.view.sandbox_id} is not ready` });
      return undefined;
    }
    return entry.sandbox;
  }
}

/** The part of a `ws` WebSocket the PTY route uses. */
interface PtySocket {
  readonly readyState: number;
  readonly OPEN: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  on(event: 'message', listener: (data: Buffer, isBinary: boolean) => void): void;
  on(event: 'close', listener: () => void): void;
}

/** `X-API-Key`, `?api_key=` or `Sec-WebSocket-Protocol: api_key.<key>` (the three forms Orchard's clients use). */
function ptyKeyAccepted(request: FastifyRequest, key: Buffer): boolean {
  const header = request.headers['x-api-key'];
  const query = (request.query as Record<string, unknown> | undefined)?.api_key;
  const protocols = String(request.headers['sec-websocket-protocol'] ?? '')
    .split(',')
    .map((protocol) => protocol.trim())
    .filter((protocol) => protocol.startsWith('api_key.'))
    .map((protocol) => protocol.slice('api_key.'.length));
  const given = [typeof header === 'string' ? header : undefined, typeof query === 'string' ? query : undefined, ...protocols];
  return given.some((candidate) => candidate !== undefined && candidate !== '' && timingSafeEqual(digest(candidate), key));
}

/** Runs one PTY session over the socket: init within 10 s, then frames both ways until exit, error or the client leaves. */
function servePty(socket: PtySocket, entry: SandboxEntry, sandbox: Sandbox, timeoutMs: number): void {
  let session: PtySession | undefined;
  const send = (frame: PtyServerFrame): void => {
    if (socket.readyState !== socket.OPEN) return;
    socket.send(JSON.stringify(frame));
    // As the agent: the socket closes after `exit` (normally) or `error` (4500).
    if (frame.type === 'exit') socket.close(1000);
    if (frame.type === 'error') socket.close(4500, frame.message.slice(0, 120));
  };
  const refuse = (message: string): void => {
    socket.send(JSON.stringify({ type: 'error', message }));
    socket.close(4400, message.slice(0, 120));
  };
  const initTimer = setTimeout(() => refuse('init timeout'), 10_000);
  socket.on('message', (data: Buffer, isBinary: boolean) => {
    let frame: unknown;
    try {
      frame = JSON.parse(data.toString('utf8'));
    } catch {
      if (!session) refuse('bad init frame: not JSON');
      return;
    }
    if (!session) {
      clearTimeout(initTimer);
      const init = isBinary ? 'init must be a text frame' : parseInit(frame);
      if (typeof init === 'string') return refuse(`bad init frame: ${init}`);
      if (entry.deleted) return refuse(`Sandbox ${entry.view.sandbox_id} was deleted`);
      session = new PtySession({ sandbox, init, timeoutMs, send });
      return;
    }
    const message = frame as Record<string, unknown>;
    if (message.type === 'stdin' && typeof message.data === 'string') session.write(Buffer.from(message.data, 'base64'));
    else if (message.type === 'signal') session.signal(message.sig ?? 'TERM');
    else if (message.type === 'resize') session.resize(message.rows, message.cols);
    else if (message.type === 'close') session.close();
  });
  socket.on('close', () => {
    clearTimeout(initTimer);
    session?.abandon();
  });
}

/** Aborts when the client leaves before the answer is sent. */
function clientGone(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) controller.abort(new Error('client disconnected'));
  });
  return controller.signal;
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

function sandboxNotFound(reply: FastifyReply, id: string): FastifyReply {
  return reply.code(404).send({ detail: `Sandbox ${id} not found` });
}

/**
 * The parsed value, or undefined after answering: 400 naming the field for a NUL byte (no sandbox
 * process could be given it), else 422 in pydantic's shape.
 */
function parse<T>(schema: z.ZodType<T>, value: unknown, where: 'body' | 'query', reply: FastifyReply): T | undefined {
  const input = value ?? (where === 'body' ? undefined : {});
  const parsed = schema.safeParse(input);
  if (parsed.success) return parsed.data;
  const nul = nulField(parsed.error, where);
  if (nul) void reply.code(400).send({ detail: `${nul} ${NUL_MESSAGE}` });
  else void reply.code(422).send(validationDetail(parsed.error, where, input));
  return undefined;
}

async function checked(sandbox: Sandbox, command: string): Promise<string> {
  const result = await sandbox.exec(command, { cwd: '/', timeoutMs: 60_000 });
  if (result.exitCode !== 0) throw new Error(`${command}: ${result.stderr.trim() || `exit ${result.exitCode}`}`);
  return result.stdout;
}

async function pathKind(sandbox: Sandbox, path: string): Promise<'missing' | 'directory' | 'other'> {
  const out = await checked(
    sandbox,
    `if [ -d ${shellQuote(path)} ]; then echo directory; elif [ -e ${shellQuote(path)} ]; then echo other; else echo missing; fi`,
  );
  const kind = out.trim();
  return kind === 'directory' || kind === 'missing' ? kind : 'other';
}

/** Orchard's listing: names sorted, `file` or `directory` (links followed), size, local mtime without zone. */
async function listDirectory(
  sandbox: Sandbox,
  path: string,
  signal: AbortSignal,
): Promise<'missing' | 'not-a-directory' | { name: string; type: 'file' | 'directory'; size: number; modified: string }[]> {
  const dir = shellQuote(path);
  const script = `[ -e ${dir} ] || exit 3; [ -d ${dir} ] || exit 4; find -L ${dir} -mindepth 1 -maxdepth 1 -printf '%f\\0%y\\0%s\\0%TY-%Tm-%TdT%TH:%TM:%TS\\0' 2>/dev/null | base64 -w0`;
  const result = await sandbox.exec(script, { cwd: '/', timeoutMs: 60_000, maxOutputBytes: 64 * 1024 * 1024, signal });
  if (result.exitCode === 3) return 'missing';
  if (result.exitCode === 4) return 'not-a-directory';
  if (result.exitCode !== 0) throw new Error(`listing ${path} failed: ${result.stderr.trim() || `exit ${result.exitCode}`}`);
  const fields = Buffer.from(result.stdout, 'base64').toString('utf8').split('\0');
  const files = [];
  for (let index = 0; index + 3 < fields.length; index += 4) {
    files.push({
      name: fields[index] ?? '',
      type: fields[index + 1] === 'd' ? ('directory' as const) : ('file' as const),
      size: Number(fields[index + 2]),
      modified: (fields[index + 3] ?? '').slice(0, 19),
    });
  }
  return files.sort((a, b) => (posix.join(path, a.name) < posix.join(path, b.name) ? -1 : 1));
}
