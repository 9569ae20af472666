/**
 * How long a client may take to send one request (`server.request_timeout_s`). Node checks the
 * deadline on a timer (every 30 s by default, so a 30 s limit could hold a socket for a minute);
 * the check runs here at a quarter of the limit, at most once a second. Past the limit Node raises
 * ERR_HTTP_REQUEST_TIMEOUT, answered 408 by src/server/plugins/framework-errors.ts, and the socket closes:
 * a body that is never finished no longer holds a connection open, with or without API keys.
 */
import type { ServerOptions } from 'node:http';

/** The default limit: long enough for a 16 MiB body on a slow link, short enough that stalled clients cannot pile up. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;

/** fastify's options for `timeoutMs`: its `requestTimeout`, and the Node server options that make it hold. */
export function requestTimeoutOptions(timeoutMs: number = DEFAULT_REQUEST_TIMEOUT_MS): { requestTimeout: number; http: ServerOptions } {
  return {
    requestTimeout: timeoutMs,
    http: {
      // Node refuses a headers limit above the request limit; 60 s is its own default.
      headersTimeout: Math.min(60_000, timeoutMs),
      connectionsCheckingInterval: Math.max(50, Math.min(1_000, Math.floor(timeoutMs / 4))),
    },
  };
}
