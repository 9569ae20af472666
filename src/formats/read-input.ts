import { createReadStream } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { createGunzip, gunzipSync } from 'node:zlib';
import { throwIfAborted, wnwError } from '../errors.js';

/** One line of a JSONL file: parsed, or the parse error. */
export type JsonlLine = { line: number; value: unknown } | { line: number; error: string };

/**
 * How a file holds its records: `jsonl` (one JSON value per line, read lazily) or `document`
 * (one JSON value for the whole file, e.g. a pretty-printed trajectory or an array of rows).
 */
export type Input =
  | { layout: 'jsonl'; file: string; lines: () => AsyncGenerator<JsonlLine> }
  | { layout: 'document'; file: string; value: unknown /** The document is one line (a one-record JSONL file). */; singleLine: boolean }
  | { layout: 'broken'; file: string; error: string };

export async function assertReadableFile(file: string): Promise<void> {
  try {
    const info = await stat(file);
    if (!info.isFile()) throw new Error('not a regular file');
  } catch (error) {
    throw wnwError('WNW_ERR_INPUT_NOT_FOUND', `${file}: ${(error as Error).message}`, { cause: error, details: { file } });
  }
}

/** Streams the non-empty lines of a file with their 1-based numbers, parsing each as JSON. */
export async function* readJsonlLines(file: string, signal?: AbortSignal): AsyncGenerator<JsonlLine> {
  const raw = createReadStream(file);
  // `.gz` files (SWE-bench prediction sets are often shipped compressed) are read through gunzip.
  const stream: Readable = isGzip(file) ? raw.pipe(createGunzip()) : raw;
  stream.setEncoding('utf8');
  const lines = createInterface({ input: stream, crlfDelay: Infinity });
  let number = 0;
  try {
    for await (const text of lines) {
      number += 1;
      throwIfAborted(signal);
      if (text.trim() === '') continue;
      try {
        yield { line: number, value: JSON.parse(text) as unknown };
      } catch (error) {
        yield { line: number, error: (error as Error).message };
      }
    }
  } finally {
    lines.close();
    stream.destroy();
    raw.destroy();
  }
}

const isGzip = (file: string) => file.endsWith('.gz');

async function readText(file: string): Promise<string> {
  const bytes = await readFile(file);
  return (isGzip(file) ? gunzipSync(bytes) : bytes).toString('utf8');
}

/** The first `count` non-empty lines, parsed (used to tell JSONL from a JSON document). */
async function firstLines(file: string, count: number, signal?: AbortSignal): Promise<JsonlLine[]> {
  const out: JsonlLine[] = [];
  for await (const entry of readJsonlLines(file, signal)) {
    out.push(entry);
    if (out.length >= count) break;
  }
  return out;
}

/**
 * Opens a file and decides its layout from content: several lines that each parse → JSONL;
 * otherwise the whole text as one JSON document; when that fails too, JSONL if any of the first
 * lines parses (a JSONL file with a bad first line), else `broken`.
 */
export async function openInput(file: string, signal?: AbortSignal): Promise<Input> {
  await assertReadableFile(file);
  const head = await firstLines(file, 2, signal);
  const jsonl: Input = { layout: 'jsonl', file, lines: () => readJsonlLines(file, signal) };
  if (head.length === 2 && 'value' in head[0]! && 'value' in head[1]!) return jsonl;
  const text = await readText(file);
  try {
    return { layout: 'document', file, value: JSON.parse(text) as unknown, singleLine: !text.trim().includes('\n') };
  } catch (error) {
    const sample = await firstLines(file, 5, signal);
    if (sample.length > 1 && sample.some((entry) => 'value' in entry)) return jsonl;
    return { layout: 'broken', file, error: (error as Error).message };
  }
}

/** The file name up to its first dot: `django__django-10999.traj.json` → `django__django-10999`. */
export function fileStem(file: string): string {
  const base = file.split(/[\\/]/).pop() ?? file;
  const dot = base.indexOf('.');
  return dot > 0 ? base.slice(0, dot) : base;
}
