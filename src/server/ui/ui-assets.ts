/**
 * The inspector's client bundle (dist/ui/inspector.js and .css), built from src/server/ui/browser
 * by scripts/build-ui.mjs at `npm ci` time (the `prepare` build). Read once, from the package
 * root, so the server and `winnower inspect` serve the same files from src/ (tests) or dist/.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { wnwError } from '../../errors.js';
import { packageRoot } from '../../util/package-root.js';

export const UI_ASSETS = { 'inspector.js': 'text/javascript; charset=utf-8', 'inspector.css': 'text/css; charset=utf-8' } as const;
export type UiAssetName = keyof typeof UI_ASSETS;

export const uiAssetDir = (): string => join(packageRoot(), 'dist', 'ui');

const cache = new Map<UiAssetName, Buffer>();

/** The asset's bytes; WNW_ERR_OP_INTERNAL naming the build step when the bundle was never built. */
export function readUiAsset(name: UiAssetName): Buffer {
  let bytes = cache.get(name);
  if (!bytes) {
    const file = join(uiAssetDir(), name);
    try {
      bytes = readFileSync(file);
    } catch {
      throw wnwError('WNW_ERR_OP_INTERNAL', `the web inspector's bundle ${file} is missing: run \`npm run build\` (npm ci does it)`, {
        details: { file },
      });
    }
    cache.set(name, bytes);
  }
  return bytes;
}
