/** A small git repository for the server tests: one commit of one file, at `dir`. */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export function gitRepo(dir: string): string {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'a.py'), 'x = 1\n');
  const git = (...args: string[]) =>
    execFileSync('git', ['-C', dir, '-c', 'user.email=t@example.com', '-c', 'user.name=t', ...args], { stdio: 'pipe' });
  git('init', '-q');
  git('add', 'a.py');
  git('commit', '-q', '-m', 'base');
  return dir;
}
