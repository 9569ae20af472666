/**
 * What the tests' fixture repositories are built with: git under a fixed identity (and local file
 * transport, which submodules of a local path need since git 2.38.1), files written with their
 * folders, a base commit made in one call, and a candidate patch taken as `git diff` of a clone.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const GIT_ENV = {
  ...process.env,
  GIT_AUTHOR_NAME: 'winnower tests',
  GIT_AUTHOR_EMAIL: 'tests@winnower.invalid',
  GIT_COMMITTER_NAME: 'winnower tests',
  GIT_COMMITTER_EMAIL: 'tests@winnower.invalid',
};

export function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'protocol.file.allow=always', ...args], { cwd, env: GIT_ENV, encoding: 'utf8' });
}

/** Writes `files` (path → content) under `root`, making their folders; `executable` paths get mode 755. */
export function writeFiles(root: string, files: Record<string, string>, executable: readonly string[] = []): void {
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(join(root, path, '..'), { recursive: true });
    writeFileSync(join(root, path), content);
    if (executable.includes(path)) chmodSync(join(root, path), 0o755);
  }
}

/** `git init` of `path` (branch main) with `files` committed as `message`; the commit's sha. */
export function commitRepo(path: string, files: Record<string, string>, message: string, executable: readonly string[] = []): string {
  git(path, 'init', '-q', '-b', 'main');
  writeFiles(path, files, executable);
  git(path, 'add', '-A');
  git(path, 'commit', '-q', '-m', message);
  return git(path, 'rev-parse', 'HEAD').trim();
}

/** The diff `files` make over `source`, taken in a new clone at `work` (which must not exist). */
export function stagedDiff(source: string, work: string, files: Record<string, string>): string {
  git(join(work, '..'), 'clone', '-q', source, work);
  writeFiles(work, files);
  git(work, 'add', '-A');
  return git(work, 'diff', '--cached');
}
