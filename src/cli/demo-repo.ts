/** Makes the demo's sample project a git repository in a temporary folder (a nested .git cannot be committed). */
import { execFileSync } from 'node:child_process';
import { chmodSync, cpSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export function prepareDemoRepo(source: string): string {
  const root = mkdtempSync(join(tmpdir(), 'winnower-demo-'));
  chmodSync(root, 0o755);
  const repo = join(root, 'repo');
  cpSync(source, repo, { recursive: true });
  const git = (...args: string[]) =>
    execFileSync('git', args, {
      cwd: repo,
      stdio: 'pipe',
      env: {
        ...process.env,
        GIT_AUTHOR_NAME: 'winnower',
        GIT_AUTHOR_EMAIL: 'demo@winnower.invalid',
        GIT_COMMITTER_NAME: 'winnower',
        GIT_COMMITTER_EMAIL: 'demo@winnower.invalid',
        GIT_AUTHOR_DATE: '2026-01-01T00:00:00Z',
        GIT_COMMITTER_DATE: '2026-01-01T00:00:00Z',
      },
    });
  git('init', '-q', '-b', 'main');
  git('add', '-A');
  git('commit', '-q', '-m', 'durations: base commit of the demo task');
  return repo;
}
