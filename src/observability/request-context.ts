/**
 * The id of the HTTP request being served, for whatever runs on its behalf: the server enters
 * it once per request (src/server/plugins/request-id.ts) and AsyncLocalStorage carries it through every
 * await, into the scorer, policy and sandbox calls and into the jobs the request starts. Outbound
 * HTTP clients send it on as `X-Request-Id`.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

export const REQUEST_ID_HEADER = 'x-request-id';

const storage = new AsyncLocalStorage<string>();

/** Runs `fn` with `requestId` as the current request id. */
export function runWithRequestId<T>(requestId: string, fn: () => T): T {
  return storage.run(requestId, fn);
}

/** The request id of the request this code runs for, if any. */
export function currentRequestId(): string | undefined {
  return storage.getStore();
}

/** `{ 'x-request-id': id }` inside a request, `{}` outside: spread into an outbound request's headers. */
export function requestIdHeaders(): Record<string, string> {
  const id = storage.getStore();
  return id === undefined ? {} : { [REQUEST_ID_HEADER]: id };
}
