/** The `GET /jobs` paging cursor: the last job of a page (created_at, id), opaque to clients. */
import { wnwError } from '../../errors.js';
import type { JobRecord } from '../../store/types.js';

export function encodeCursor(job: Pick<JobRecord, 'created_at' | 'id'>): string {
  return Buffer.from(JSON.stringify([job.created_at, job.id])).toString('base64url');
}

/** Throws WNW_ERR_INPUT_INVALID naming `field` for anything `encodeCursor` did not make. */
export function decodeCursor(cursor: string, field: string): { created_at: string; id: string } {
  try {
    const value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
    if (Array.isArray(value) && value.length === 2 && typeof value[0] === 'string' && typeof value[1] === 'string')
      return { created_at: value[0], id: value[1] };
  } catch {
    // Not JSON: refused below like any other foreign cursor.
  }
  throw wnwError('WNW_ERR_INPUT_INVALID', `${field}: not a cursor this server gave out (use next_cursor of the previous page)`, {
    details: { field },
  });
}
