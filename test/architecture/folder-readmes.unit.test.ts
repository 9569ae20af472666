/**
 * Every folder under src/ that holds files has a README.md naming each of its files (in backticks)
 * and naming no file that is not there, so the map a newcomer reads from `ls` stays true as files
 * are added, moved and removed. A name in backticks counts as a file reference when it ends in a
 * source extension (bare: a file of this folder) or is a path into a subfolder of this folder or
 * into the repository's own folders (`src/...`, `test/...`, ...); such a path must exist.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/shared-data.js';

const SRC = join(REPO_ROOT, 'src');
/** Extensions of the files a folder README lists: a bare name with one of these is a file of that folder. */
const SOURCE_FILE = /^[\w.-]+\.(?:ts|js|mjs|cjs|py|css|yaml)$/;
/** Top-level folders of the repository a README may point into by path. */
const REPOSITORY_FOLDERS = ['src', 'test', 'docs', 'config', 'scripts', 'bench', 'examples', 'models', '.ci'];

function foldersWithFiles(dir: string): string[] {
  const entries = readdirSync(dir, { withFileTypes: true });
  const own = entries.some((entry) => entry.isFile()) ? [dir] : [];
  return [
    ...own,
    ...entries
      .filter((entry) => entry.isDirectory())
      .sort((a, b) => a.name.localeCompare(b.name))
      .flatMap((entry) => foldersWithFiles(join(dir, entry.name))),
  ];
}

/** Every backticked span of a Markdown text, inline or in a code block's lines. */
function backticked(markdown: string): string[] {
  return [...markdown.matchAll(/`([^`\n]+)`/g)].map((match) => match[1]!.trim());
}

/** A backticked span that names a file or folder by path: no spaces, no globs, no placeholders. */
function isPathLike(span: string): boolean {
  return /^[\w.@-]+(?:\/[\w.@-]+)+\/?$/.test(span) && !span.startsWith('.winnower');
}

const folders = foldersWithFiles(SRC);

describe('folder READMEs under src/', () => {
  it('finds the folders', () => {
    expect(folders.length).toBeGreaterThan(20);
  });

  for (const folder of folders) {
    const name = relative(REPO_ROOT, folder);
    it(`${name}/README.md names every file of ${name}, and only files that exist`, () => {
      const readmePath = join(folder, 'README.md');
      expect(existsSync(readmePath), `${name} holds files but has no README.md`).toBe(true);
      const spans = backticked(readFileSync(readmePath, 'utf8'));
      const named = new Set(spans);
      const files = readdirSync(folder, { withFileTypes: true })
        .filter((entry) => entry.isFile() && entry.name !== 'README.md')
        .map((entry) => entry.name)
        .sort();
      const subfolders = new Set(
        readdirSync(folder, { withFileTypes: true })
          .filter((entry) => entry.isDirectory())
          .map((entry) => entry.name),
      );

      const unnamed = files.filter((file) => !named.has(file));
      expect(unnamed, `${name}/README.md does not name these files (in backticks)`).toEqual([]);

      const missing = spans.filter((span) => {
        if (SOURCE_FILE.test(span)) return !files.includes(span);
        if (!isPathLike(span)) return false;
        const first = span.split('/')[0]!;
        if (subfolders.has(first)) return !existsSync(join(folder, span));
        if (REPOSITORY_FOLDERS.includes(first)) return !existsSync(join(REPO_ROOT, span));
        return false;
      });
      expect(missing, `${name}/README.md names files or paths that do not exist`).toEqual([]);
    });
  }

  it('names each subfolder in its parent README when the parent has one', () => {
    const problems = folders.flatMap((folder) => {
      const readmePath = join(folder, 'README.md');
      if (!existsSync(readmePath)) return [];
      const text = readFileSync(readmePath, 'utf8');
      return readdirSync(folder)
        .filter((entry) => statSync(join(folder, entry)).isDirectory())
        .filter((sub) => !text.includes(`\`${sub}/`) && !text.includes(`(${sub}/`))
        .map((sub) => `${relative(REPO_ROOT, folder)}/README.md does not name its subfolder \`${sub}/\``);
    });
    expect(problems).toEqual([]);
  });
});
