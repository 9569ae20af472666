import { IssueCollector } from './issues.js';
import { openInput } from './read-input.js';
import type { ImportOptions, ImportResult, RecordContext } from './types.js';
import { pushAll } from '../util/large-arrays.js';

/** One record of a JSON document with its index or key. */
export interface DocumentRecord {
  value: unknown;
  record?: number | string;
}

export interface RecordReader<T> {
  /** Converts one record; throws a ZodError or an invalidRecord() error when it is bad. */
  convert: (value: unknown, context: RecordContext) => T | T[];
  /** Splits a whole-file JSON document into records (default: an array's elements, or the value itself). */
  split?: (document: unknown) => DocumentRecord[];
}

export function splitArrayOrOne(document: unknown): DocumentRecord[] {
  return Array.isArray(document) ? document.map((value, index) => ({ value, record: index })) : [{ value: document }];
}

/**
 * Reads a JSONL file line by line, or a JSON document record by record, converting each record and
 * collecting (or throwing, per `onInvalid`) the bad ones with file, line and field.
 */
export async function importRecords<T>(
  file: string,
  options: ImportOptions,
  reader: RecordReader<T>,
  issues = new IssueCollector(options.onInvalid),
): Promise<ImportResult<T>> {
  const items: T[] = [];
  const add = (converted: T | T[] | undefined): void => {
    if (converted === undefined) return;
    const sink = options.onItem;
    if (sink) for (const item of Array.isArray(converted) ? converted : [converted]) sink(item);
    else if (Array.isArray(converted)) pushAll(items, converted);
    else items.push(converted);
  };
  const input = await openInput(file, options.signal);
  if (input.layout === 'broken') {
    issues.report({ file }, '(json)', `not JSON or JSONL: ${input.error}`);
  } else if (input.layout === 'document') {
    const records = (reader.split ?? splitArrayOrOne)(input.value);
    for (const { value, record } of records) {
      const context: RecordContext = { file, ...(input.singleLine ? { line: 1 } : {}), ...(record === undefined ? {} : { record }) };
      add(issues.attempt(context, () => reader.convert(value, context), options.signal));
    }
  } else {
    for await (const entry of input.lines()) {
      const context: RecordContext = { file, line: entry.line };
      if ('error' in entry) {
        issues.report(context, '(json)', `not JSON: ${entry.error}`);
        continue;
      }
      add(issues.attempt(context, () => reader.convert(entry.value, context), options.signal));
    }
  }
  return { items, issues: issues.issues };
}
