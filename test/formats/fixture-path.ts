import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sharedData } from '../support/shared-data.js';
import { tempDir } from '../support/temp-dir.js';

const FIXTURES = fileURLToPath(new URL('../fixtures/', import.meta.url));

/** Path of a file under test/fixtures/. */
export function fixture(...parts: string[]): string {
  return join(FIXTURES, ...parts);
}

/** Path of an importer fixture written for winnower, under test/fixtures/importers/. */
export function ownFixture(...parts: string[]): string {
  return fixture('importers', ...parts);
}

/** Path of a real public trajectory under ../shared/data/trajectories/ (read only by [real-data] suites). */
export function realTrajectory(...parts: string[]): string {
  return sharedData('trajectories', ...parts);
}

/** Path of a file of the labelled Devstral sample under ../shared/data/devstral-verified/. */
export function realDevstral(name: 'candidates.jsonl' | 'tasks.jsonl'): string {
  return sharedData('devstral-verified', name);
}

/** Writes `text` to a fresh temporary file and returns its path. */
export function tempFile(name: string, text: string): string {
  const dir = tempDir('winnower-importers-');
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}
