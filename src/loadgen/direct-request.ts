/**
 * The request `--compare-backend` sends straight to the scorer backend: the one scoring call
 * winnower made for a capture request whose issue text carries `CAPTURE_NUMBER`, with that number
 * turned back into a place for each request's own number, so the direct requests are the very
 * bodies winnower would send for the same numbers and no backend cache answers them.
 */
import { wnwError } from '../errors.js';
import type { LoadRequest } from './load.js';
import type { RecordedCall } from './recording-proxy.js';

/** The capture request's number: no load run counts this high, so it marks the capture's text only. */
export const CAPTURE_NUMBER = 987_654_321;

export interface DirectRequest {
  load: LoadRequest;
  /** What the report says about it. */
  summary: { path: string; body_bytes: number; numbered: boolean };
}

export function directRequestOf(calls: RecordedCall[], scenario: string): DirectRequest {
  if (calls.length !== 1) {
    throw wnwError(
      'WNW_ERR_INPUT_INVALID',
      `--compare-backend: winnower made ${calls.length} scoring calls to the backend for one /${scenario} request (${calls.map((call) => `${call.method} ${call.path}`).join(', ') || 'none'}); the comparison is one call per request, so use fewer --candidates or --tokens`,
      {
        details: { field: 'compare-backend', calls: calls.length },
      },
    );
  }
  const call = calls[0]!;
  const phrase = 'bench request ';
  const pieces = call.body.split(`${phrase}${CAPTURE_NUMBER}`);
  // Each piece but the last ends where a number goes; no number found: the same body every time.
  const bodyParts = pieces.map((piece, index) => (index < pieces.length - 1 ? `${piece}${phrase}` : piece));
  return {
    load: { method: 'POST', path: call.path, headers: call.headers, bodyParts },
    summary: { path: call.path, body_bytes: Buffer.byteLength(call.body), numbered: pieces.length > 1 },
  };
}
