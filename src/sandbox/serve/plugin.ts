/**
 * The Orchard Env REST API as a fastify plugin, over any winnower sandbox provider: what Orchard's
 * SDK, smoke test and examples call (docs/design/01-orchard-env-api.md#3, #7). Compact JSON on
 * every answer, `X-Request-ID` on every answer, `X-API-Key` auth (401 missing, 403 wrong; `/` and
 * `/health` open), `{detail}` errors, pydantic-shaped 422s, and the PTY WebSocket (pty-session.ts).
 * Reads, listings and outputs are bounded in bytes and time, and reads and listings stop when the
 * client leaves (docs/sandbox-serve.md lists every deliberate difference). `winnower sandbox serve` runs it alone;
 * `winnower serve` can mount it under a prefix (`sandbox.serve.mount`); registered without
 * fastify-plugin, its hooks, parsers and error shape stay inside its own routes.
 *
 * This file composes it: the body parser, the answer headers, the auth (auth.ts) and the error
 * shape first, then one plugin per route group (routes/), which inherit them.
 *
 * @example
 * const app = Fastify();
 * await app.register(orchardEnvApi, { provider: createLocalProvider(), repo: { path: '.' }, apiKey: 'k' });
 */
import websocket from '@fastify/websocket';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { WinnowerError } from '../../errors.js';
import { installApiKey } from './auth.js';
import { JobTable, type JobTableOptions } from './job-table.js';
import type { RouteContext } from './routes/common.js';
import { execRoutes } from './routes/exec.js';
import { fileRoutes } from './routes/files.js';
import { PTY_WEBSOCKET_OPTIONS, ptyRoutes } from './routes/pty.js';
import { sandboxRoutes } from './routes/sandboxes.js';
import { serviceRoutes } from './routes/service.js';
import { SandboxTable, type SandboxTableOptions } from './sandbox-table.js';

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

export async function orchardEnvApi(app: FastifyInstance, options: OrchardEnvApiOptions): Promise<void> {
  const table = new SandboxTable(options);
  const jobs = new JobTable(options);
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
  const key = installApiKey(app, options.apiKey);
  app.setErrorHandler(answerError);
  app.setNotFoundHandler((_request, reply) => reply.code(404).send({ detail: 'Not Found' }));
  await app.register(websocket, { options: PTY_WEBSOCKET_OPTIONS });

  const context: RouteContext = {
    table,
    jobs,
    agentWaitMs: options.agentWaitMs ?? 15_000,
    fileTimeoutMs: options.fileTimeoutMs ?? 60_000,
    bodyLimit,
    key,
  };
  await app.register(ptyRoutes, context);
  await app.register(serviceRoutes, context);
  await app.register(sandboxRoutes, context);
  await app.register(execRoutes, context);
  await app.register(fileRoutes, context);
}

/** `{detail}` with the error's status (a client error of fastify's 400 becomes pydantic's 422); a winnower error's `retry_after_s` becomes `Retry-After`. */
function answerError(error: FastifyError | WinnowerError | Error, request: FastifyRequest, reply: FastifyReply): FastifyReply {
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
}
