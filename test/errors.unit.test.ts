import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ERROR_CATALOG, WinnowerError, toWinnowerError, wnwError } from '../src/errors.js';

describe('error catalog', () => {
  it('names every code WNW_ERR_<AREA>_<WHAT> with an HTTP status', () => {
    for (const [code, entry] of Object.entries(ERROR_CATALOG)) {
      expect(code).toMatch(/^WNW_ERR_[A-Z]+_[A-Z_]+$/);
      expect(entry.status).toBeGreaterThanOrEqual(400);
      expect(entry.status).toBeLessThan(600);
    }
  });

  it('has a row per code in docs/errors.md and no stale rows', () => {
    const doc = readFileSync(new URL('../docs/errors.md', import.meta.url), 'utf8');
    const documented = [...doc.matchAll(/^\| `(WNW_ERR_[A-Z_]+)` \|/gm)].map((m) => m[1]);
    expect(new Set(documented)).toEqual(new Set(Object.keys(ERROR_CATALOG)));
  });

  it('carries code, status and details, and is recognised across copies', () => {
    const error = wnwError('WNW_ERR_SBX_PATCH', 'hunk #2 rejected', { details: { file: 'a.py' } });
    expect(error.code).toBe('WNW_ERR_SBX_PATCH');
    expect(error.status).toBe(422);
    expect(WinnowerError.isInstance(error)).toBe(true);
    expect(WinnowerError.isInstance(new Error('x'))).toBe(false);
    expect(error.toJSON()).toEqual({ code: 'WNW_ERR_SBX_PATCH', message: 'hunk #2 rejected', details: { file: 'a.py' } });
  });

  it('wraps foreign errors, keeping the cause', () => {
    const cause = new TypeError('boom');
    const wrapped = toWinnowerError(cause, 'WNW_ERR_SCORE_UPSTREAM');
    expect(wrapped.code).toBe('WNW_ERR_SCORE_UPSTREAM');
    expect(wrapped.cause).toBe(cause);
    const aborted = new Error('stop');
    aborted.name = 'AbortError';
    expect(toWinnowerError(aborted).code).toBe('WNW_ERR_OP_ABORTED');
  });
});
