import { z } from 'zod';
import { WinnowerError, throwIfAborted, wnwError } from '../errors.js';
import type { ImportIssue, OnInvalid, RecordContext } from './types.js';

/** `['messages', 3, 'role']` → `messages[3].role`; the empty path is the record itself, `(record)`. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else out += out === '' ? String(key) : `.${String(key)}`;
  }
  return out === '' ? '(record)' : out;
}

function where(context: RecordContext): string {
  if (context.line !== undefined) return `${context.file}:${context.line}`;
  if (context.record !== undefined) return `${context.file}[${JSON.stringify(context.record)}]`;
  return context.file;
}

/**
 * Collects bad records as issues (`skip`) or throws the first one (`fail`). Every importer funnels
 * its failures through one collector so that each carries file, line and field the same way.
 */
export class IssueCollector {
  readonly issues: ImportIssue[] = [];

  constructor(readonly onInvalid: OnInvalid = 'fail') {}

  /** Records (or throws) one issue. */
  report(context: RecordContext, field: string, message: string, code: ImportIssue['code'] = 'WNW_ERR_INPUT_INVALID'): void {
    const issue: ImportIssue = { code, file: context.file, field, message };
    if (context.line !== undefined) issue.line = context.line;
    if (context.record !== undefined) issue.record = context.record;
    if (this.onInvalid === 'fail') {
      throw wnwError(code, `${where(context)}: ${field}: ${message}`, {
        details: { file: context.file, line: context.line ?? null, record: context.record ?? null, field },
      });
    }
    this.issues.push(issue);
  }

  /** Turns what a converter threw into an issue; aborts and internal errors pass through. */
  reportError(context: RecordContext, error: unknown): void {
    if (error instanceof z.ZodError) {
      const first = error.issues[0];
      const field = first ? formatPath(first.path) : '(record)';
      // The first issue's path is the reported field, so it is not repeated in the message.
      const message = (error.issues as z.core.$ZodIssue[])
        .slice(0, 3)
        .map((issue, index) => (index === 0 ? issue.message : `${formatPath(issue.path)}: ${issue.message}`))
        .join('; ');
      this.report(context, field, message);
      return;
    }
    if (WinnowerError.isInstance(error) && (error.code === 'WNW_ERR_INPUT_INVALID' || error.code === 'WNW_ERR_INPUT_FORMAT')) {
      const field = typeof error.details.field === 'string' ? error.details.field : '(record)';
      this.report(context, field, error.message, error.code);
      return;
    }
    throw error;
  }

  /** Runs `convert` on one record; on failure reports and returns undefined. */
  attempt<T>(context: RecordContext, convert: () => T, signal?: AbortSignal): T | undefined {
    throwIfAborted(signal);
    try {
      return convert();
    } catch (error) {
      this.reportError(context, error);
      return undefined;
    }
  }
}

/** A converter's way to reject a record with a field name (zod errors carry their own path). */
export function invalidRecord(field: string, message: string): WinnowerError {
  return wnwError('WNW_ERR_INPUT_INVALID', message, { details: { field } });
}
