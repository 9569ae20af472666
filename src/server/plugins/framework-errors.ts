/**
 * Errors fastify and Node answer before a request reaches a route — a malformed URL, a path
 * segment past the router's limit, headers too large, a request that is not HTTP — in the
 * project's shape, `{error: {code, message, details}}`, and without echoing the URL back.
 */
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';

/** The longest path segment (a job id is 36 characters) before the router answers 414. */
export const MAX_PARAM_LENGTH = 100;

const body = (status: number, message: string, reason: string) =>
  JSON.stringify({
    error: { code: status >= 500 ? 'WNW_ERR_OP_INTERNAL' : 'WNW_ERR_INPUT_INVALID', message, details: { status, reason } },
  });

/** fastify's `frameworkErrors`: errors raised while routing. */
export function frameworkErrors(error: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
  const [status, message, reason] =
    error.code === 'FST_ERR_BAD_URL'
      ? [400, 'the URL is not valid: a path segment has a malformed percent-encoding', 'bad_url']
      : error.code === 'FST_ERR_MAX_PARAM_LENGTH'
        ? [414, `a path segment of the URL is longer than ${MAX_PARAM_LENGTH} characters`, 'param_too_long']
        : [500, 'internal error', 'routing'];
  void reply
    .status(status)
    .header('content-type', 'application/json; charset=utf-8')
    .send(body(status, message, reason));
}

/** The HTTP server's `clientError`: the request could not even be parsed, so the answer is written to the socket. */
export function clientErrorHandler(error: NodeJS.ErrnoException, socket: Socket): void {
  // A reset connection has nobody to answer.
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, message, reason] =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'the request line and headers are too large (a URL this long is refused too)', 'headers_too_large']
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'the request did not arrive in time', 'timeout']
        : [400, 'malformed HTTP request', 'bad_request'];
  const text = body(status, message, reason);
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`,
    );
  }
  socket.destroy(error);
}
