/** Head + tail elision of long text, with a marker that says how much was left out. */

export interface Elided {
  chars: number;
  lines: number;
}

/**
 * Keeps about `headChars` from the start and `tailChars` from the end of `text`, snapping to a
 * line break near each cut and never splitting a surrogate pair, and puts `marker(elided)`
 * between them on a line of its own (a line break is added before it when the head ends mid-line). Returns undefined when the cut would not make the text shorter.
 */
export function headTail(text: string, headChars: number, tailChars: number, marker: (elided: Elided) => string): string | undefined {
  if (text.length <= headChars + tailChars) return undefined;
  let headEnd = snapBack(text, headChars);
  let tailStart = snapForward(text, text.length - tailChars);
  if (headEnd > tailStart) headEnd = tailStart;
  if (isLowSurrogate(text.charCodeAt(headEnd))) headEnd -= 1;
  if (isLowSurrogate(text.charCodeAt(tailStart))) tailStart += 1;
  const middle = text.slice(headEnd, tailStart);
  const head = text.slice(0, headEnd);
  const note = (head === '' || head.endsWith('\n') ? '' : '\n') + marker({ chars: middle.length, lines: countLines(middle) });
  if (note.length >= middle.length) return undefined;
  return head + note + text.slice(tailStart);
}

/** End of the head: just after the last line break in the head's final fifth, else `at`. */
function snapBack(text: string, at: number): number {
  if (at <= 0) return 0;
  const newline = text.lastIndexOf('\n', at - 1);
  return newline >= 0 && newline + 1 >= at - Math.ceil(at / 5) ? newline + 1 : at;
}

/** Start of the tail: just after the first line break in the tail's first fifth, else `at`. */
function snapForward(text: string, at: number): number {
  const length = text.length - at;
  if (length <= 0) return text.length;
  const newline = text.indexOf('\n', at);
  return newline >= 0 && newline + 1 <= at + Math.floor(length / 5) ? newline + 1 : at;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

function countLines(text: string): number {
  if (text.length === 0) return 0;
  let lines = 1;
  for (let index = text.indexOf('\n'); index !== -1; index = text.indexOf('\n', index + 1)) lines += 1;
  return text.endsWith('\n') ? lines - 1 : lines;
}
