/** Reading an HTTP answer body (undici) without letting a huge one fill memory. */
import type { Dispatcher } from 'undici';

type Body = Dispatcher.ResponseData['body'];

/** Drops the rest of an answer unread (undici reports the abort as an error on the stream: expected here). */
export function discard(body: Body): void {
  body.on('error', () => undefined);
  body.destroy();
}

/**
 * The body's bytes, or undefined once it passes `maxBytes` (the rest is left unread and the
 * connection dropped). A `content-length` already over the cap is refused before reading.
 */
export async function readCapped(body: Body, maxBytes: number, contentLength?: string | string[]): Promise<Buffer | undefined> {
  const declared = Number(Array.isArray(contentLength) ? contentLength[0] : contentLength);
  if (declared > maxBytes) {
    discard(body);
    return undefined;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    const bytes = chunk as Buffer;
    size += bytes.length;
    if (size > maxBytes) {
      discard(body);
      return undefined;
    }
    chunks.push(bytes);
  }
  return Buffer.concat(chunks);
}
