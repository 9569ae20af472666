import { Command } from 'commander';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { commandLine, isGitUrl, registerSandboxCommand } from '../../src/cli/sandbox-run.js';
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { bwrapMissing, makeTestRepo, tempDir } from './local-helpers.js';
import { imageToolsMissing, writeTinyImage } from './local-image-helpers.js';

const repo = tempDir('wnw-cli-repo-');
const { base } = makeTestRepo(repo.dir);
afterAll(() => repo.remove());

/** Runs `winnower sandbox run ...args` in-process; returns exit code and captured output. */
async function run(args: string[]): Promise<{ code: number | undefined; stdout: string; stderr: string }> {
  const program = new Command('winnower').exitOverride();
  registerSandboxCommand(program);
  let stdout = '';
  let stderr = '';
  const out = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => ((stdout += String(chunk)), true));
  const err = vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => ((stderr += String(chunk)), true));
  const previous = process.exitCode;
  try {
    await program.parseAsync(['node', 'winnower', 'sandbox', 'run', ...args]);
    return { code: process.exitCode === undefined ? undefined : Number(process.exitCode), stdout, stderr };
  } finally {
    out.mockRestore();
    err.mockRestore();
    process.exitCode = previous;
  }
}

describe('winnower sandbox run: arguments', () => {
  it('tells URLs from paths and quotes several words', () => {
    expect(isGitUrl('https://github.com/a/b.git')).toBe(true);
    expect(isGitUrl('git@github.com:a/b.git')).toBe(true);
    expect(isGitUrl('file:///srv/repo')).toBe(true);
    expect(isGitUrl('../repo')).toBe(false);
    expect(commandLine(['echo hi && ls'])).toBe('echo hi && ls');
    expect(commandLine(['python', '-c', "print('x y')"])).toBe(`'python' '-c' 'print('\\''x y'\\'')'`);
  });
});

describe.skipIf(bwrapMissing)('winnower sandbox run (local)', () => {
  afterEach(() => vi.restoreAllMocks());

  it("prints the output and the diff, and exits with the command's code", async () => {
    const result = await run([
      '--repo',
      repo.dir,
      '--commit',
      base,
      '--provider',
      'local',
      '--diff',
      '--',
      'echo out; echo err >&2; echo more >> README.md; exit 3',
    ]);
    expect(result.code).toBe(3);
    expect(result.stdout).toMatch(/^out\ndiff --git a\/README.md b\/README.md/);
    expect(result.stdout).toContain('+more');
    expect(result.stderr).toContain('err\n');
  });

  it("prints the sandbox's note when a command was killed (exit 137)", async () => {
    const result = await run(['--repo', repo.dir, '--', 'kill -9 $$']);
    expect(result.code).toBe(137);
    expect(result.stderr).toContain('winnower: exit 137: killed by SIGKILL');
  });

  it('exits 124 when the command times out', async () => {
    const result = await run(['--repo', repo.dir, '--timeout', '0.5', '--', 'sleep', '30']);
    expect(result.code).toBe(124);
    expect(result.stderr).toContain('timed out');
  });
});

describe.skipIf(bwrapMissing ?? imageToolsMissing)('[images] winnower sandbox run --image (local)', () => {
  let scratch: { dir: string; remove(): void } | undefined;
  afterAll(() => scratch?.remove());

  it('runs the command in the image, at its repository, with its diff', async () => {
    scratch = tempDir('wnw-cli-image-');
    chmodSync(scratch.dir, 0o711);
    const image = writeTinyImage(join(scratch.dir, 'image'));
    const config = join(scratch.dir, 'winnower.json');
    writeFileSync(config, JSON.stringify({ sandbox: { provider: 'local', settings: { image_cache_dir: join(scratch.dir, 'cache') } } }));
    const result = await run(['--image', image.reference, '-c', config, '--diff', '--', 'pwd; cat /etc/added.txt; echo more >> README.md']);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^\/testbed\nadded by the upper layer\ndiff --git a\/README.md b\/README.md/);
  });
});
