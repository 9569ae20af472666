/**
 * `winnower demo` (`npm run demo`, the README's first command) as a user runs it: the real CLI in a
 * child process, on the embedded defaults, whatever server settings the environment carries.
 */
import { execFile } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { demoRecordings } from '../../src/cli/demo-task.js';
import { buildReplayServer } from '../../src/rollout/policy/replay-server.js';
import { hasBubblewrap } from '../solve/helpers.js';
import { cliArgv } from '../support/built-cli.js';
import { closedPort } from '../support/ports.js';

const ROOT = new URL('../../', import.meta.url).pathname;

function runDemo(env: Record<string, string>, args: string[] = []): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      cliArgv(['demo', ...args]),
      { cwd: ROOT, env: { ...process.env, ...env }, timeout: 120_000 },
      (error, stdout, stderr) => {
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, stdout, stderr });
      },
    );
  });
}

describe.skipIf(!hasBubblewrap())('winnower demo', () => {
  it('solves the sample task even when the environment confines repositories to other folders', async () => {
    const { code, stdout, stderr } = await runDemo({ WINNOWER_REPO_ROOTS: '/srv/elsewhere' });
    expect(code, stderr).toBe(0);
    expect(stdout).toContain('chosen patch');
    // Nested sandbox limits are spelled out (docs/design/05-defects-found.md#D13: `allSandboxes: [object Object]`).
    expect(stdout).not.toContain('[object Object]');
    // ... and readably: the budget over all sandboxes is a sentence, not `{…, groups 3 items}`.
    expect(stdout).toMatch(/all sandboxes together: \d+ processes .* and \d+ MB of memory/);
    expect(stdout).not.toMatch(/\d+ items?\}/);
    // Issue 18 item 4: the empty patch (gives-up) shows no value above the others: it is neither scored nor tested.
    expect(stdout.split('\n').find((line) => /^\d+\s+gives-up\s/.test(line))).toMatch(/^\d+\s+gives-up\s+\d+\s+—\s+no patch\s/);
    expect(stdout).toMatch(/candidate \d+: no patch, not scored or tested/);
  }, 120_000);

  it('exits 3 when no candidate had a usable patch (a policy that only gives up)', async () => {
    const server = buildReplayServer({ recordings: [demoRecordings()['gives-up']!] });
    const address = await server.listen({ host: '127.0.0.1', port: 0 });
    try {
      const { code, stdout, stderr } = await runDemo({ WINNOWER_POLICY_URL: `${address}/v1`, WINNOWER_POLICY_MODEL: 'recorded/gives-up' }, [
        '--n',
        '1',
      ]);
      expect(code, stderr).toBe(3);
      expect(stdout).toContain('job succeeded: nothing usable chosen');
      expect(stdout).toContain('nothing chosen: None of the 1 candidate has a usable patch (1 empty)');
      expect(stderr).not.toMatch(/^\s+at /m);
    } finally {
      await server.close();
    }
  }, 120_000);

  it('says why when the job fails, without a Node stack trace', async () => {
    const closed = await closedPort();
    const { code, stderr } = await runDemo({ WINNOWER_POLICY_URL: `http://127.0.0.1:${closed}/v1`, WINNOWER_POLICY_MODEL: 'm' });
    expect(code).toBe(1);
    expect(stderr).toContain('winnower demo: job failed');
    // One reason naming the setting and the address, before any rollout (the policy reachability check).
    expect(stderr).toContain(`policy.url: the policy server at http://127.0.0.1:${closed}/v1 cannot be reached`);
    expect(stderr).not.toMatch(/^\s+at /m);
  }, 120_000);
});
