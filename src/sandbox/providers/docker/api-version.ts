/**
 * Engine API version negotiation, as the Docker CLI does it: the engine names the newest version it
 * speaks (`/_ping`'s `Api-Version` header, `/version`'s `ApiVersion`) and the oldest it still
 * accepts (`/version`'s `MinAPIVersion`); the client uses the newest both speak. A fixed version is
 * refused by old engines (Debian's 20.10 stops at 1.41) and by new ones (Docker 29 starts at 1.44).
 */

/**
 * What this client speaks: every field it sends exists since 1.25 (`Init`, `NanoCpus`,
 * `AutoRemove`), and the answers it reads keep their shape through 1.47.
 */
export const CLIENT_API_RANGE = { min: '1.25', max: '1.47' } as const;

/** `1.41` → [1, 41]; a leading `v` is allowed. */
function parts(version: string): [number, number] {
  const match = /^v?(\d+)\.(\d+)$/.exec(version.trim());
  if (!match) throw new Error(`not an API version: ${version}`);
  return [Number(match[1]), Number(match[2])];
}

/** Negative, zero or positive as `a` is older than, the same as or newer than `b`. */
export function compareApiVersions(a: string, b: string): number {
  const [aMajor, aMinor] = parts(a);
  const [bMajor, bMinor] = parts(b);
  return aMajor - bMajor || aMinor - bMinor;
}

export interface EngineApiRange {
  /** The newest version the engine speaks. */
  max: string;
  /** The oldest it accepts, when it says. */
  min?: string;
}

/** The version to use with an engine (`v1.41`), or why there is none. */
export function chooseApiVersion(engine: EngineApiRange): { version: string } | { problem: string } {
  const max = engine.max.replace(/^v/, '');
  const chosen = compareApiVersions(max, CLIENT_API_RANGE.max) < 0 ? max : CLIENT_API_RANGE.max;
  const range = `${CLIENT_API_RANGE.min} to ${CLIENT_API_RANGE.max}`;
  if (compareApiVersions(chosen, CLIENT_API_RANGE.min) < 0) {
    return { problem: `the engine speaks API versions up to ${max}, older than this client's ${range}` };
  }
  if (engine.min && compareApiVersions(chosen, engine.min) < 0) {
    return { problem: `the engine accepts API versions from ${engine.min.replace(/^v/, '')} only, newer than this client's ${range}` };
  }
  return { version: `v${chosen}` };
}
