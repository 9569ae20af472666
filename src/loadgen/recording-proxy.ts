/**
 * A recording pass-through in front of an operator's scorer backend, for `winnower bench
 * --compare-backend --backend-url`: every request is forwarded as it came (path, body, headers
 * but the hop-by-hop ones) and answered with the backend's status and body; POST bodies are
 * kept, so the bench can send exactly what winnower sent straight to the backend. Only a
 * capture-only winnower is pointed at it: the measured one calls the backend itself, so this
 * hop is never on a measured path.
 */
import { request } from 'undici';
import { startStubServer } from './stub-server.js';

export interface RecordedCall {
  method: string;
  /** Path and query as the backend received it. */
  path: string;
  /** The headers a replay needs (content-type, accept, authorization), as winnower sent them. */
  headers: Record<string, string>;
  body: string;
}

export interface RecordingProxy {
  /** The pass-through's base URL: the backend's path prefix on a loopback origin. */
  url: string;
  /** POSTs forwarded since the last `clear()`. */
  posts(): RecordedCall[];
  clear(): void;
  close(): Promise<void>;
}

const REPLAYED_HEADERS = ['content-type', 'accept', 'authorization'];
/** Not forwarded: the pass-through's own connection to the backend sets these. */
const HOP_HEADERS = new Set([
  'host',
  'connection',
  'keep-alive',
  'content-length',
  'transfer-encoding',
  'upgrade',
  'te',
  'trailer',
  'proxy-authorization',
  'proxy-connection',
]);

export async function startRecordingProxy(backendUrl: string): Promise<RecordingProxy> {
  const backend = new URL(backendUrl);
  let posts: RecordedCall[] = [];
  const server = await startStubServer(async (incoming, text) => {
    const method = incoming.method ?? 'GET';
    const path = incoming.url ?? '/';
    const forwarded = Object.fromEntries(
      Object.entries(incoming.headers).flatMap(([name, value]) =>
        typeof value === 'string' && !HOP_HEADERS.has(name) ? [[name, value]] : [],
      ),
    );
    if (method === 'POST')
      posts.push({
        method,
        path,
        headers: Object.fromEntries(REPLAYED_HEADERS.flatMap((name) => (forwarded[name] ? [[name, forwarded[name]]] : []))),
        body: text,
      });
    const answer = await request(new URL(path, backend.origin), {
      method: method as 'GET' | 'POST',
      headers: forwarded,
      ...(method === 'GET' || method === 'HEAD' ? {} : { body: text }),
      headersTimeout: 0,
      bodyTimeout: 0,
    });
    const contentType = answer.headers['content-type'];
    return { status: answer.statusCode, text: await answer.body.text(), ...(typeof contentType === 'string' ? { contentType } : {}) };
  });
  const prefix = backend.pathname.replace(/\/$/, '');
  return { url: `${server.origin}${prefix}`, posts: () => posts, clear: () => (posts = []), close: () => server.close() };
}
