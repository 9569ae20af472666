/**
 * Where the public SWE-bench samples live for the tests that run on real data: `../shared/data`
 * beside the checkout (every development machine and CI has it), or `WINNOWER_SHARED_DATA`.
 * The repository never holds copies; a clone without the folder skips these tests, by name.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe } from 'vitest';

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The shared data folder (it may not exist). */
export const SHARED_DATA = process.env.WINNOWER_SHARED_DATA
  ? resolve(process.env.WINNOWER_SHARED_DATA)
  : resolve(REPO_ROOT, '..', 'shared', 'data');

/** In the name of every test that reads shared data; `.ci/run` counts tests by it. */
export const REAL_DATA_TAG = '[real-data]';

/** A path under the shared data folder. */
export function sharedData(...parts: string[]): string {
  return join(SHARED_DATA, ...parts);
}

/** The sub-folder names of `dir`, sorted; none when it is missing (so a skipped suite still collects). */
export function subfolders(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort();
}

/**
 * A suite over real samples in `../shared/data/<folder>`: runs when the folder exists, else is
 * skipped with a name that says which folder is missing. The body is still collected when skipped,
 * so it must not read the folder at collection time (list it with `subfolders`, or read inside tests).
 */
export function describeRealData(name: string, folder: string, fn: () => void): void {
  const dir = sharedData(folder);
  const present = existsSync(dir);
  describe.skipIf(!present)(`${REAL_DATA_TAG} ${name}${present ? '' : ` (skipped: ${dir} is missing)`}`, fn);
}
