/**
 * Patches as one string type that round-trips bytes: valid UTF-8 decodes as usual, and each byte
 * of an invalid sequence becomes the lone surrogate U+DC80 + (byte - 0x80) (Python's
 * "surrogateescape", PEP 383). Text callers (scoring, selection) read the string as text; the
 * sandbox encodes it back to the exact bytes before `git apply`. Valid UTF-8 never decodes to a
 * lone surrogate, so the mapping is unambiguous. JSON.stringify writes lone surrogates as `\udcXX`
 * escapes, so a stored trajectory keeps them; the API hands such a patch out as base64 instead
 * (`patchForJson`), since a JSON string is meant to carry Unicode text.
 */
import { isUtf8 } from 'node:buffer';

const ESCAPE_BASE = 0xdc00;

/** The patch's bytes as a string; bytes that are not valid UTF-8 become lone surrogates U+DC80–U+DCFF. */
export function decodePatch(bytes: Uint8Array): string {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (isUtf8(buffer)) return buffer.toString('utf8');
  const parts: string[] = [];
  let runStart = 0;
  let i = 0;
  while (i < buffer.length) {
    const length = validSequenceLength(buffer, i);
    if (length > 0) {
      i += length;
      continue;
    }
    if (i > runStart) parts.push(buffer.toString('utf8', runStart, i));
    parts.push(String.fromCharCode(ESCAPE_BASE + buffer[i]!));
    i += 1;
    runStart = i;
  }
  if (runStart < buffer.length) parts.push(buffer.toString('utf8', runStart));
  return parts.join('');
}

/** The exact bytes a `decodePatch` string came from (plain strings: their UTF-8). */
export function encodePatch(patch: string): Buffer {
  if (isUtf8Patch(patch)) return Buffer.from(patch, 'utf8');
  const parts: Buffer[] = [];
  let runStart = 0;
  for (let i = 0; i < patch.length; i++) {
    const unit = patch.charCodeAt(i);
    if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < patch.length) {
      const next = patch.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        i++; // a surrogate pair: ordinary text
        continue;
      }
    }
    if (unit >= 0xdc80 && unit <= 0xdcff) {
      if (i > runStart) parts.push(Buffer.from(patch.slice(runStart, i), 'utf8'));
      parts.push(Buffer.of(unit - ESCAPE_BASE));
      runStart = i + 1;
    }
  }
  if (runStart < patch.length) parts.push(Buffer.from(patch.slice(runStart), 'utf8'));
  return Buffer.concat(parts);
}

/** Whether the patch's bytes are valid UTF-8 (so it can travel as a plain JSON string). */
export function isUtf8Patch(patch: string): boolean {
  return !LONE_SURROGATE.test(patch);
}

// String.prototype.isWellFormed is ES2024, past this project's lib.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * A patch for a JSON response: the text where its bytes are valid UTF-8, otherwise base64 with
 * `patch_encoding: 'base64'`, so the client gets the bytes back exactly.
 */
export function patchForJson(patch: string): { patch: string; patch_encoding?: 'base64' } {
  if (isUtf8Patch(patch)) return { patch };
  return { patch: encodePatch(patch).toString('base64'), patch_encoding: 'base64' };
}

/** Length of the valid UTF-8 sequence at `i` (strict: no overlongs, surrogates or code points past U+10FFFF), or 0. */
function validSequenceLength(b: Buffer, i: number): number {
  const first = b[i]!;
  if (first < 0x80) return 1;
  const cont = (k: number, low = 0x80, high = 0xbf): boolean => i + k < b.length && b[i + k]! >= low && b[i + k]! <= high;
  if (first >= 0xc2 && first <= 0xdf) return cont(1) ? 2 : 0;
  if (first === 0xe0) return cont(1, 0xa0) && cont(2) ? 3 : 0;
  if (first === 0xed) return cont(1, 0x80, 0x9f) && cont(2) ? 3 : 0;
  if (first >= 0xe1 && first <= 0xef) return cont(1) && cont(2) ? 3 : 0;
  if (first === 0xf0) return cont(1, 0x90) && cont(2) && cont(3) ? 4 : 0;
  if (first >= 0xf1 && first <= 0xf3) return cont(1) && cont(2) && cont(3) ? 4 : 0;
  if (first === 0xf4) return cont(1, 0x80, 0x8f) && cont(2) && cont(3) ? 4 : 0;
  return 0;
}
