import { describe, expect, it } from 'vitest';
import { normalizePatch } from '../../src/select/normalize-patch.js';
import { FIX_A, FIX_A_NOISY, FIX_B, README_EDIT } from './fixtures.js';

const key = (patch: string): string | undefined => normalizePatch(patch)?.key;

describe('normalizePatch', () => {
  it('equates the same edit written by git diff and by diff -u -U1 with timestamps, CRLF and trailing spaces', () => {
    expect(key(FIX_A_NOISY)).toBe(key(FIX_A));
    expect(key(FIX_A)).toBe(['modified src/calc.py', '@', '-    return a - b', '+    return a + b'].join('\n'));
  });

  it('ignores file order, index lines and mode lines', () => {
    const reordered =
      README_EDIT.replace('index 3333333..4444444 100644', 'old mode 100644\nnew mode 100755\nindex 5555555..6666666') +
      FIX_A.replace('index 1111111..2222222', 'index abcdef0..1234567');
    expect(key(reordered)).toBe(key(FIX_A + README_EDIT));
  });

  it('ignores hunk line numbers and how edits are split into hunks', () => {
    const oneHunk = ['--- a/x', '+++ b/x', '@@ -1,4 +1,4 @@', '-a', '+A', ' b', ' c', '-d', '+D', ''].join('\n');
    const twoHunks = ['--- a/x', '+++ b/x', '@@ -101 +101 @@', '-a', '+A', '@@ -104 +104 @@', '-d', '+D', ''].join('\n');
    expect(key(oneHunk)).toBeDefined();
    expect(key(twoHunks)).toBe(key(oneHunk));
  });

  it('keeps content: a different fix, an extra file, new vs modified, rename vs in place', () => {
    expect(key(FIX_B)).not.toBe(key(FIX_A));
    expect(key(FIX_A + README_EDIT)).not.toBe(key(FIX_A));
    const added = ['--- /dev/null', '+++ b/x', '@@ -0,0 +1 @@', '+a', ''].join('\n');
    const modified = ['--- a/x', '+++ b/x', '@@ -0,0 +1 @@', '+a', ''].join('\n');
    expect(key(added)).not.toBe(key(modified));
    const renamed = ['diff --git a/x b/y', 'rename from x', 'rename to y', '--- a/x', '+++ b/y', '@@ -1 +1 @@', '-a', '+b', ''].join('\n');
    const inPlace = ['--- a/y', '+++ b/y', '@@ -1 +1 @@', '-a', '+b', ''].join('\n');
    expect(key(renamed)).not.toBe(key(inPlace));
  });

  it('returns null for empty and unparseable patches', () => {
    expect(normalizePatch('')).toBeNull();
    expect(normalizePatch('not a diff')).toBeNull();
  });

  it('counts changed lines and lists files', () => {
    expect(normalizePatch(README_EDIT + FIX_A)).toMatchObject({ changedLines: 4, files: ['README.md', 'src/calc.py'] });
  });
});
