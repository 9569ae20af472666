/**
 * ATIF schema versions (docs/formats.md#versions): winnower writes `ATIF-v1.7`, reads `ATIF-v1.0`
 * … `ATIF-v1.7` strictly, and `ATIF-v1.8` leniently (its audio part is known; anything else is kept
 * and reported), because 1.8 is described only by third parties.
 */

/** The version winnower writes: the newest one Harbor's own models accept. */
export const ATIF_WRITE_VERSION = 'ATIF-v1.7';
/** Newest minor version read strictly (unknown keys are errors, as in Harbor). */
export const ATIF_STRICT_MINOR = 7;
/** Newest minor version read at all. */
export const ATIF_NEWEST_MINOR = 8;

/** `ATIF-v1.5` → 5; undefined for anything that is not a known version string. */
export function atifMinor(schemaVersion: unknown): number | undefined {
  if (typeof schemaVersion !== 'string') return undefined;
  const match = /^ATIF-v1\.(\d)$/.exec(schemaVersion);
  if (!match) return undefined;
  const minor = Number(match[1]);
  return minor <= ATIF_NEWEST_MINOR ? minor : undefined;
}
