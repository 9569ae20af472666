/** `winnower solve` refuses a repository it cannot use before it loads anything or starts a rollout. */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';

const ROOT = new URL('../../', import.meta.url).pathname;
const RECORDING = join(ROOT, 'examples/demo/trajectories/correct-fix.json');

const runSolve = (args: string[], cwd: string) =>
  runCli(['solve', ...args], { cwd, env: { WINNOWER_POLICY_URL: '', WINNOWER_DATA_DIR: join(cwd, 'data') }, timeoutMs: 60_000 });

describe('winnower solve: repository checks before any rollout', () => {
  let scratch: string;
  beforeAll(() => {
    scratch = mkdtempSync(join(tmpdir(), 'wnw-cli-repo-'));
    mkdirSync(join(scratch, 'plain'));
  });
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it.each([
    [['--repo', 'no-such-dir'], '--repo', 'does not exist'],
    [['--repo', 'plain'], '--repo', 'not a git repository'],
  ])(
    '%j: exit code 2, the flag named, no rollout started',
    async (repoArgs, flag, reason) => {
      const { code, stderr } = await runSolve([...repoArgs, '--issue', 'x', '--n', '2', '--replay', RECORDING], scratch);
      expect(code).toBe(2);
      expect(stderr).toContain(reason);
      // The flag named once: leading the message (`--repo: ...`), or as the field when it does not.
      expect(stderr.includes(`${flag}: `) || stderr.includes(`field: ${flag}`), stderr).toBe(true);
      expect(stderr).not.toContain('rollout 0 started');
    },
    60_000,
  );
});
