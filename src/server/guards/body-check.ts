/**
 * Checks of a JSON body that no schema expresses: raw bytes that are not UTF-8 (decoding would
 * silently turn them into U+FFFD), a leading byte order mark (JSON has none; decoding and the
 * JSON parser would each drop it silently, so `\uFEFF{}` would act as `{}`), and nesting deeper than any request needs (a deep `meta` would
 * overflow the stack of whatever serializes it later: the job store, a log line).
 */
import { isUtf8 } from 'node:buffer';
import { wnwError } from '../../errors.js';

/** Deepest nesting of objects and arrays a body may have; real requests stay under 10. */
export const MAX_BODY_DEPTH = 64;

/** The body as text; WNW_ERR_INPUT_INVALID naming the first byte that is not UTF-8, or a byte order mark. */
export function decodeUtf8(bytes: Buffer): string {
  // isUtf8 validates without building a string; the fatal decoder is only for naming the bad byte.
  if (!isUtf8(bytes)) {
    const offset = firstInvalidByte(bytes);
    throw wnwError('WNW_ERR_INPUT_INVALID', `body: not valid UTF-8 (byte ${offset} of ${bytes.length}); send JSON encoded as UTF-8`, {
      details: { field: 'body', byte_offset: offset },
    });
  }
  if (bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf)
    throw wnwError('WNW_ERR_INPUT_INVALID', 'body: starts with a byte order mark (U+FEFF); send the JSON without one', {
      details: { field: 'body' },
    });
  return bytes.toString('utf8');
}

function firstInvalidByte(bytes: Buffer): number {
  // Halving: the longest prefix that decodes ends just before the bad byte.
  let good = 0;
  let bad = bytes.length;
  while (bad - good > 1) {
    const middle = (good + bad) >> 1;
    try {
      new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(0, middle), { stream: true });
      good = middle;
    } catch {
      bad = middle;
    }
  }
  return good;
}

interface Frame {
  value: unknown;
  depth: number;
  key: string;
  parent: Frame | undefined;
}

/** Throws WNW_ERR_INPUT_INVALID naming the path where `value` nests deeper than MAX_BODY_DEPTH. Iterative, so any depth is safe to check. */
export function checkDepth(value: unknown): void {
  const stack: Frame[] = [{ value, depth: 0, key: 'body', parent: undefined }];
  while (stack.length > 0) {
    const frame = stack.pop()!;
    if (frame.value === null || typeof frame.value !== 'object') continue;
    if (frame.depth >= MAX_BODY_DEPTH) {
      const path: string[] = [];
      for (let at: Frame | undefined = frame; at; at = at.parent) path.unshift(at.key);
      const shown = path.length > 8 ? [...path.slice(0, 6), '…'] : path;
      throw wnwError('WNW_ERR_INPUT_INVALID', `${shown.join('.')}: nested deeper than ${MAX_BODY_DEPTH} levels`, {
        details: { field: path.slice(0, 6).join('.'), max_depth: MAX_BODY_DEPTH },
      });
    }
    // Only object children get a frame: the strings and numbers that make up most of a body cost nothing here.
    if (Array.isArray(frame.value)) {
      const items: unknown[] = frame.value;
      for (let index = 0; index < items.length; index += 1) {
        const child = items[index];
        if (child !== null && typeof child === 'object')
          stack.push({ value: child, depth: frame.depth + 1, key: String(index), parent: frame });
      }
    } else {
      const record = frame.value as Record<string, unknown>;
      for (const key of Object.keys(record)) {
        const child = record[key];
        if (child !== null && typeof child === 'object') stack.push({ value: child, depth: frame.depth + 1, key, parent: frame });
      }
    }
  }
}
