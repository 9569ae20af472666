/**
 * `winnower sandbox serve` as a user runs it: the key rule, and one sandbox served end to end by
 * the CLI process, which deletes it on SIGTERM.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { REPO_ROOT } from '../support/shared-data.js';
import { bwrapMissing, makeTestRepo, tempDir } from './local-helpers.js';

const repo = tempDir('wnw-serve-cli-repo-');
makeTestRepo(repo.dir);
afterAll(() => repo.remove());

describe('winnower sandbox serve (CLI)', () => {
  it('refuses to listen beyond loopback without an API key, naming the variable', async () => {
    const run = await runCli(['sandbox', 'serve', '--host', '0.0.0.0', '--port', '0'], { env: { SANDBOX_API_KEY: '' } });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('WNW_ERR_CFG_INVALID');
    expect(run.stderr).toContain('SANDBOX_API_KEY');
  });

  it.skipIf(bwrapMissing)(
    'serves sandboxes with a checkout of --repo at /workspace when the image cannot be had, and deletes them on SIGTERM',
    async () => {
      const child = spawn(
        join(REPO_ROOT, 'node_modules/.bin/tsx'),
        [join(REPO_ROOT, 'src/cli/main.ts'), 'sandbox', 'serve', '--repo', repo.dir, '--port', '0'],
        {
          cwd: REPO_ROOT,
          env: { ...process.env, SANDBOX_API_KEY: 'cli-key', WINNOWER_LOG_FORMAT: 'json', NO_COLOR: '1' },
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
      const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
      try {
        await expect.poll(() => /listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(output)?.[1], { timeout: 60_000 }).toBeTruthy();
        const base = /listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(output)![1]!;
        const call = async (method: string, path: string, body?: unknown): Promise<any> =>
          (
            await fetch(base + path, {
              method,
              headers: { 'x-api-key': 'cli-key', 'content-type': 'application/json' },
              ...(body === undefined ? {} : { body: JSON.stringify(body) }),
            })
          ).json();
        // An image that cannot be had: the sandbox is the --repo checkout, and says so.
        const { sandbox_id: id } = await call('POST', '/sandboxes', { image: `oci:${join(repo.dir, 'no-image')}:v1` });
        expect(await call('GET', `/sandboxes/${id}/wait?timeout=60`)).toMatchObject({ status: 'ready', source: 'repo' });
        expect(await call('POST', `/sandboxes/${id}/exec`, { command: 'pwd; head -1 README.md', wait: true })).toMatchObject({
          exit_code: 0,
          stdout: '/workspace\n# contract\n',
        });
        child.kill('SIGTERM');
        expect(await exited).toBe(0);
        expect(output).toContain('deleting every sandbox');
      } finally {
        child.kill('SIGKILL');
      }
    },
    90_000,
  );
});
