/**
 * Checks of a JSON body that no schema expresses: raw bytes that are not UTF-8 (decoding would
 * silently turn them into U+FFFD), a leading byte order mark (JSON has none; decoding and the
 * JSON parser would each drop it silently, so `\uFEFF{}` would act as `{}`), and nesting deeper than any request needs (a deep `meta` would
 * overflow the stack of whatever serializes it later: the job store, a log line).
 */
import { wnwError } from '../../errors.js';

/** Deepest nesting of objects and arrays a body may have; real requests stay under 10. */
export const MAX_BODY_DEPTH = 64;

// ignoreBOM keeps a leading U+FEFF in the text, so that it can be refused below.
const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** The body as text; WNW_ERR_INPUT_INVALID naming the first byte that is not UTF-8, or a byte order mark. */
export function decodeUtf8(bytes: Buffer): string {
  let text: string;
  try {
    text = decoder.decode(bytes);
  } catch {
    const offset = firstInvalidByte(bytes);
    throw wnwError('WNW_ERR_INPUT_INVALID', `body: not valid UTF-8 (byte ${offset} of ${bytes.length}); send JSON encoded as UTF-8`, {
      details: { field: 'body', byte_offset: offset },
    });
  }
  if (text.startsWith('\uFEFF'))
    throw wnwError('WNW_ERR_INPUT_INVALID', 'body: starts with a byte order mark (U+FEFF); send the JSON without one', {
      details: { field: 'body' },
    });
  return text;
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
    const entries = Array.isArray(frame.value)
      ? frame.value.map((item, index) => [String(index), item] as const)
      : Object.entries(frame.value);
    for (const [key, child] of entries)
      if (child !== null && typeof child === 'object') stack.push({ value: child, depth: frame.depth + 1, key, parent: frame });
  }
}
