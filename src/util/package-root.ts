import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

let cached: string | undefined;

/** The folder holding winnower's package.json, from src/ (tests) or dist/src/ (built) alike. */
export function packageRoot(): string {
  if (cached) return cached;
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error('winnower package root not found');
    dir = parent;
  }
  cached = dir;
  return dir;
}

/** The untrained tiny model: the baseline `winnower train` compares against, and test fixtures' model. */
export const TINY_MODEL_DIR = (): string => join(packageRoot(), 'models', 'tiny-value');
