/**
 * The local provider's host-side launcher reads no shell startup file. Its `bash -c` runs as root
 * (before the privilege drop), with stdin a socket for calls that pass stdin (writeFile,
 * applyPatch); Debian's bash (SSH_SOURCE_BASHRC) takes that for a remote shell and would source
 * ~/.bashrc. Here a .bashrc that leaves a marker (and writes to stderr, where it would reach a
 * "patch does not apply" message) must never run.
 */
import { spawn } from 'node:child_process';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { detectLocalHost, launchArgv } from '../../src/sandbox/providers/local/host.js';
import { HOST_PATH } from '../../src/sandbox/host-command.js';
import { bwrapMissing, isRoot, makeTestRepo, tempDir } from './local-helpers.js';

const ROOT = new URL('../../', import.meta.url).pathname;
const ADD_FILE_PATCH = 'diff --git a/added.txt b/added.txt\nnew file mode 100644\n--- /dev/null\n+++ b/added.txt\n@@ -0,0 +1 @@\n+added\n';

/** A home folder whose .bashrc (and .bash_profile, .profile) appends to `marker`. */
function homeWithRcFiles(dir: string, marker: string): void {
  const script = `echo "$0 $$" >> ${marker}; echo from-bashrc >&2\n`;
  for (const name of ['.bashrc', '.bash_profile', '.profile']) writeFileSync(join(dir, name), script);
}

function run(
  argv: string[],
  options: { env: NodeJS.ProcessEnv; stdin?: string },
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0]!, argv.slice(1), { env: options.env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(options.stdin ?? '');
  });
}

describe.skipIf(bwrapMissing)('local provider launcher and shell startup files', () => {
  it('the launch chain, given stdin on a socket and HOME with a .bashrc, does not run it', async () => {
    const home = tempDir('wnw-rc-home-');
    const host = await detectLocalHost({});
    try {
      const marker = join(home.dir, 'marker');
      homeWithRcFiles(home.dir, marker);
      // Node's stdio pipes are socketpairs: what made bash take this for an sshd session.
      // The chain up to bwrap (then `--args 6`), with cat in bwrap's place.
      const { argv } = launchArgv(host, { procsFiles: [], limits: {}, holderPid: undefined, bwrap: [], program: [] });
      expect(argv.slice(-3)).toEqual([host.bwrap, '--args', '6']);
      const result = await run([...argv.slice(0, -3), '/bin/cat'], { env: { PATH: HOST_PATH, HOME: home.dir }, stdin: 'through stdin\n' });
      expect(result.stderr).not.toContain('from-bashrc');
      expect(result.stdout).toBe('through stdin\n');
      expect(existsSync(marker)).toBe(false);
    } finally {
      await host.cgroups.close();
      rmSync(host.rootDir, { recursive: true, force: true });
      home.remove();
    }
  });

  it.skipIf(!isRoot)(
    "writeFile and applyPatch run no startup file of the server's user (root's own home replaced by one with a .bashrc)",
    async () => {
      const home = tempDir('wnw-rc-home-');
      const repo = tempDir('wnw-rc-repo-');
      try {
        const marker = join(home.dir, 'marker');
        homeWithRcFiles(home.dir, marker);
        makeTestRepo(repo.dir);
        // The launcher's environment is scrubbed, so its bash finds root's home in /etc/passwd: put
        // ours there in a private mount namespace instead of touching the real one.
        const script = `
        import { createLocalProvider } from ${JSON.stringify(join(ROOT, 'src/sandbox/providers/local/provider.ts'))};
        const provider = createLocalProvider({ logger: { info() {}, warn() {} } });
        try {
          const sandbox = await provider.create({ repo: { path: process.env.WNW_REPO } });
          await sandbox.writeFile('written.txt', 'written through stdin\\n');
          await sandbox.applyPatch(process.env.WNW_PATCH);
          const files = await sandbox.exec('cat written.txt added.txt');
          console.log(JSON.stringify({ files: files.stdout }));
        } finally {
          await provider.close();
        }`;
        const result = await run(
          [
            'unshare',
            '--mount',
            '--propagation',
            'private',
            'sh',
            '-c',
            'mount --bind "$1" "$2" && shift 2 && exec "$@"',
            'wnw',
            home.dir,
            userInfo().homedir,
            process.execPath,
            '--import',
            'tsx',
            '--input-type=module',
            '-e',
            script,
          ],
          { env: { ...process.env, WNW_REPO: repo.dir, WNW_PATCH: ADD_FILE_PATCH } },
        );
        expect(result.code, result.stderr).toBe(0);
        expect(JSON.parse(result.stdout.trim().split('\n').at(-1)!)).toEqual({ files: 'written through stdin\nadded\n' });
        expect(existsSync(marker)).toBe(false);
      } finally {
        home.remove();
        repo.remove();
      }
    },
    60_000,
  );
});
