/**
 * Request ids: a client's own `X-Request-Id` is kept when it is a plain token (letters, digits,
 * `._:-`, at most 128 characters), else a fresh UUID; the id is in every log line of the request
 * (fastify's `reqId`), answered in the `X-Request-Id` header, and current for everything the
 * request runs (src/observability/request-context.ts).
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { REQUEST_ID_HEADER, runWithRequestId } from '../../observability/request-context.js';

const PLAIN_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** fastify's `genReqId`: the client's id when it is safe to log and echo, else a new one. */
export function requestIdOf(request: IncomingMessage): string {
  const given = request.headers[REQUEST_ID_HEADER];
  const value = Array.isArray(given) ? given[0] : given;
  return value !== undefined && PLAIN_ID.test(value) ? value : randomUUID();
}

export function installRequestId(app: FastifyInstance): void {
  // First hook of all, so that even a refused request (401, 429) answers with its id.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header(REQUEST_ID_HEADER, request.id);
    runWithRequestId(request.id, done);
  });
}
