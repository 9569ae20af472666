/**
 * The configured caps on what one /score or /rerank request may carry: how many candidates, and
 * how large each may be. Past either, a 413 that names the field, the cap and the setting.
 */
import { wnwError } from '../../errors.js';
import type { LimitsConfig } from '../limits-config.js';

/** `bodyBytes`: the request body's size; a body within the per-candidate cap cannot hold a candidate past it, so none is measured. */
export function checkCandidateCaps(
  candidates: readonly unknown[],
  limits: Pick<LimitsConfig, 'max_candidates' | 'max_trajectory_bytes'>,
  bodyBytes = Number.POSITIVE_INFINITY,
): void {
  if (candidates.length > limits.max_candidates) {
    throw wnwError(
      'WNW_ERR_INPUT_TOO_LARGE',
      `body.candidates: ${candidates.length} candidates, more than this server's cap of ${limits.max_candidates} (server.limits.max_candidates)`,
      {
        details: {
          field: 'body.candidates',
          limit: limits.max_candidates,
          given: candidates.length,
          setting: 'server.limits.max_candidates',
        },
      },
    );
  }
  if (bodyBytes <= limits.max_trajectory_bytes) return;
  candidates.forEach((candidate, index) => {
    const bytes = Buffer.byteLength(JSON.stringify(candidate));
    if (bytes > limits.max_trajectory_bytes) {
      throw wnwError(
        'WNW_ERR_INPUT_TOO_LARGE',
        `body.candidates.${index}: ${bytes} bytes, larger than this server's cap of ${limits.max_trajectory_bytes} bytes per candidate (server.limits.max_trajectory_bytes)`,
        {
          details: {
            field: `body.candidates.${index}`,
            limit: limits.max_trajectory_bytes,
            given: bytes,
            setting: 'server.limits.max_trajectory_bytes',
          },
        },
      );
    }
  });
}

/** The body's declared size (infinite when it is chunked and so unknown). */
export function bodyBytes(headers: { 'content-length'?: string }): number {
  const length = Number(headers['content-length']);
  return Number.isFinite(length) && headers['content-length'] !== undefined ? length : Number.POSITIVE_INFINITY;
}

/** The longest id (instance, candidate, source) a request may name; ids go into logs, keys and file names. */
export const MAX_ID_CHARS = 256;

/** Throws WNW_ERR_INPUT_INVALID naming `field` for an id that is too long or holds control characters. */
export function checkIdentifier(value: string | undefined, field: string): void {
  if (value === undefined) return;
  if (value.length > MAX_ID_CHARS) {
    throw wnwError('WNW_ERR_INPUT_INVALID', `${field}: ${value.length} characters, more than the ${MAX_ID_CHARS} an id may have`, {
      details: { field, limit: MAX_ID_CHARS },
    });
  }
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(value))
    throw wnwError('WNW_ERR_INPUT_INVALID', `${field}: an id may not hold control characters (NUL, line breaks, ...)`, {
      details: { field },
    });
}
