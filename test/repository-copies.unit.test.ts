/**
 * The repository ships only what the project made: no file in it (tracked, or new and not ignored)
 * may be a byte-for-byte copy of a file of the public data in ../shared/data.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { expect, it } from 'vitest';
import { describeRealData, REPO_ROOT, SHARED_DATA } from './support/shared-data.js';

const sha256 = (path: string): string => createHash('sha256').update(readFileSync(path)).digest('hex');

/** Every regular file under `dir` (symbolic links are not followed). */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    return entry.isDirectory() ? filesUnder(path) : entry.isFile() ? [path] : [];
  });
}

/** The repository's files as git sees them: tracked, plus untracked ones not ignored; node_modules never. */
function repositoryFiles(): string[] {
  const listed = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: REPO_ROOT,
    maxBuffer: 64 * 1024 * 1024,
  })
    .toString('utf8')
    .split('\0')
    .filter((path) => path !== '' && !path.split('/').includes('node_modules'));
  // A tracked file deleted in the working tree (not committed yet) is no copy.
  return [...new Set(listed)].filter((path) => {
    try {
      return statSync(join(REPO_ROOT, path)).isFile();
    } catch {
      return false;
    }
  });
}

describeRealData('the repository holds no copy of the shared data', '', () => {
  it('no file of the repository is byte-identical to a file under ../shared/data', () => {
    const shared = new Map<string, string>();
    for (const file of filesUnder(SHARED_DATA)) {
      // An empty file is identical to every other empty file and copies nothing.
      if (statSync(file).size > 0) shared.set(sha256(file), relative(SHARED_DATA, file));
    }
    expect(shared.size).toBeGreaterThan(0);
    const files = repositoryFiles();
    expect(files.length).toBeGreaterThan(100);
    const copies = files.flatMap((path) => {
      const match = shared.get(sha256(join(REPO_ROOT, path)));
      return match === undefined ? [] : [`${path} is a copy of ../shared/data/${match}`];
    });
    expect(copies).toEqual([]);
  });
});
