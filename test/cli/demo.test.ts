/**
 * `winnower demo` (`npm run demo`, the README's first command) as a user runs it: the real CLI in a
 * child process, on the embedded defaults, whatever server settings the environment carries.
 */
import { execFile } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { hasBubblewrap } from '../solve/helpers.js';

const ROOT = new URL('../../', import.meta.url).pathname;

function runDemo(env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'demo'], { cwd: ROOT, env: { ...process.env, ...env }, timeout: 120_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, stdout, stderr });
    });
  });
}

describe.skipIf(!hasBubblewrap())('winnower demo', () => {
  it('solves the sample task even when the environment confines repositories to other folders', async () => {
    const { code, stdout, stderr } = await runDemo({ WINNOWER_REPO_ROOTS: '/srv/elsewhere' });
    expect(code, stderr).toBe(0);
    expect(stdout).toContain('chosen patch');
  }, 120_000);
});
