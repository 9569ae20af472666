/**
 * A job that ran to its end but chose nothing usable: its status stays `succeeded` (the API's
 * closed set), so the pages draw that status amber, never green, with a `none usable` badge beside
 * it (docs/inspector.md). The outcome is the result's `outcome`; a result saved before it had one
 * says the same by a null `chosen` beside its selection (as src/server/views/job-overview.ts reads it).
 * No DOM here, so that tests run it in Node; dom.ts draws the badges.
 */

const isRecord = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);

/** `chosen`, `none-usable`, or null for a job without a selection yet. */
export function jobOutcome(result: unknown): 'chosen' | 'none-usable' | null {
  if (!isRecord(result)) return null;
  if (result.outcome === 'chosen' || result.outcome === 'none-usable') return result.outcome;
  if (!('chosen' in result) || !('selection' in result)) return null;
  return result.chosen === null ? 'none-usable' : 'chosen';
}

/** Whether the status badge turns amber: a succeeded job with nothing usable chosen (other statuses keep their own colour). */
export function showsNoneUsable(status: unknown, outcome: unknown): boolean {
  return status === 'succeeded' && outcome === 'none-usable';
}
