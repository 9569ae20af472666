/**
 * A temporary folder for a test's files, removed after the test file's last test (by
 * test/support/temp-dir-cleanup.ts, a setup file of every lane): for helpers and tests that hand a
 * path on and cannot tell when its last reader is done with it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const made: string[] = [];

export function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}

/** Removes every folder tempDir made so far. */
export function removeTempDirs(): void {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
}
