/**
 * Server-sent events as the tests read them: one parser, for a whole response body (`inject()`)
 * and for a stream read as it arrives over a real socket. Comment lines (the server's keep-alive)
 * are no event; a stream must end on an event boundary.
 */
import { request } from 'undici';
import { expect } from 'vitest';

export interface SseEvent {
  /** The SSE event name; `message` when the block names none. */
  event: string;
  id: number | undefined;
  data: Record<string, any>;
}

export interface TimedSseEvent extends SseEvent {
  /** ms since the stream opened. */
  at: number;
}

/** One event block; undefined for a block of comments only. */
function parseBlock(block: string): SseEvent | undefined {
  const fields = new Map<string, string>();
  for (const line of block.split('\n')) {
    if (line === '' || line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    if (colon < 0) fields.set(line, '');
    else fields.set(line.slice(0, colon), line.slice(colon + 1).replace(/^ /, ''));
  }
  if (fields.size === 0) return undefined;
  return {
    event: fields.get('event') ?? 'message',
    id: fields.has('id') ? Number(fields.get('id')) : undefined,
    data: JSON.parse(fields.get('data') ?? 'null') as Record<string, any>,
  };
}

/** The complete events at the front of `buffer`, and what is left of an event still arriving. */
function takeEvents(buffer: string): { events: SseEvent[]; rest: string } {
  const blocks = buffer.split('\n\n');
  const rest = blocks.pop()!;
  return { events: blocks.map(parseBlock).filter((event): event is SseEvent => event !== undefined), rest };
}

/** Every event of a whole SSE body. */
export function parseSse(text: string): SseEvent[] {
  const { events, rest } = takeEvents(text);
  expect(rest, 'the stream ended mid-event').toBe('');
  return events;
}

/** Reads an SSE stream to its end, parsing each event as it arrives. */
export async function readSse(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; contentType: string | undefined; events: TimedSseEvent[] }> {
  const opened = Date.now();
  const response = await request(url, { headers: { accept: 'text/event-stream', ...headers } });
  const decoder = new TextDecoder();
  const events: TimedSseEvent[] = [];
  let buffer = '';
  for await (const chunk of response.body) {
    const taken = takeEvents(buffer + decoder.decode(chunk as Buffer, { stream: true }));
    buffer = taken.rest;
    const at = Date.now() - opened;
    events.push(...taken.events.map((event) => ({ ...event, at })));
  }
  expect(buffer + decoder.decode(), 'the stream ended mid-event').toBe('');
  return { status: response.statusCode, contentType: response.headers['content-type'] as string | undefined, events };
}
