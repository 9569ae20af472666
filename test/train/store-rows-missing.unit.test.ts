/**
 * `jobs export --data-dir` and `train --from-store` on a folder that holds no job store: a refusal
 * naming the folder, never a new empty store there (a misspelt path once became one, and the answer
 * "no candidates" hid the typo).
 */
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { candidatesFromStore } from '../../src/train/store-rows.js';

const made: string[] = [];
afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function scratch(): string {
  const dir = mkdtempSync(join(tmpdir(), 'wnw-store-rows-'));
  made.push(dir);
  return dir;
}

describe('candidatesFromStore without a job store', () => {
  it('refuses a folder that does not exist, naming it, and creates nothing', async () => {
    const missing = join(scratch(), 'winower');
    await expect(candidatesFromStore(missing)).rejects.toThrow(
      expect.objectContaining({ code: 'WNW_ERR_INPUT_INVALID', message: expect.stringContaining(`no job store at ${missing}`) }),
    );
    expect(existsSync(missing)).toBe(false);
  });

  it('refuses a folder without winnower.db and leaves it as it was', async () => {
    const dir = scratch();
    await expect(candidatesFromStore(dir, { labelledOnly: false })).rejects.toThrow(/no winnower\.db there/);
    expect(readdirSync(dir)).toEqual([]);
  });
});
