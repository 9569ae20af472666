import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const FIXTURES = fileURLToPath(new URL('../../fixtures/', import.meta.url));

/** Path of a file under test/fixtures/. */
export function fixture(...parts: string[]): string {
  return join(FIXTURES, ...parts);
}

/** Path of a trajectory sample under test/fixtures/trajectories/. */
export function trajectoryFixture(...parts: string[]): string {
  return fixture('trajectories', ...parts);
}

/** Writes `text` to a fresh temporary file and returns its path. */
export function tempFile(name: string, text: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'winnower-importers-'));
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}
