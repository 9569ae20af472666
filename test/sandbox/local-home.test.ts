/**
 * HOME in a local sandbox over a checkout (docs/sandboxes.md#what-a-sandbox-gets): the sandbox
 * user's home from /etc/passwd (the host's, which the sandbox sees), `/root` as root (`asRoot`,
 * `sandbox serve --as-root`), `/tmp` only for a uid with no entry; always writable, private (an
 * empty folder of the sandbox's own, never the host's), and kept across execs, also with a
 * bubblewrap per exec. `spec.env` still sets it. Images: test/sandbox/local-image.test.ts.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { createLocalProvider } from '../../src/sandbox/providers/local/provider.js';
import type { Sandbox } from '../../src/sandbox/types.js';
import { bwrapMissing, makeTestRepo, quietLogger, tempDir } from './local-helpers.js';

const repo = tempDir('wnw-local-home-');
const { base } = makeTestRepo(repo.dir);
afterAll(() => repo.remove());

/** The home /etc/passwd gives `uid`, as a sandbox over a checkout reads it. */
function passwdHome(uid: number): string | undefined {
  for (const line of readFileSync('/etc/passwd', 'utf8').split('\n')) {
    const fields = line.split(':');
    if (fields.length >= 7 && Number(fields[2]) === uid) return fields[5];
  }
  return undefined;
}

async function withSandbox(sandbox: Sandbox, body: (sandbox: Sandbox) => Promise<void>): Promise<void> {
  try {
    await body(sandbox);
  } finally {
    await sandbox.close();
  }
}

const hostEntries = (dir: string): string[] => (existsSync(dir) ? readdirSync(dir).sort() : []);

describe.skipIf(bwrapMissing)('local sandbox HOME', () => {
  const provider = createLocalProvider({ logger: quietLogger });
  const perExec = createLocalProvider({ logger: quietLogger, exec: 'launch' });
  afterAll(async () => {
    await provider.close();
    await perExec.close();
  });
  const spec = { repo: { path: repo.dir, base_commit: base } };

  it("is the sandbox user's home from /etc/passwd, writable, empty at first and private", async () => {
    await withSandbox(await provider.create(spec), async (sandbox) => {
      const uid = Number((await sandbox.exec('id -u')).stdout.trim());
      expect(uid).not.toBe(0);
      const expected = passwdHome(uid) ?? '/tmp';
      const hostBefore = hostEntries(expected);
      const first = await sandbox.exec(
        'echo "$HOME"; cd && pwd; ls -A "$HOME"; mkdir -p "$HOME/.cache/tool" && echo kept > "$HOME/.cache/tool/x"',
      );
      expect(first.stderr).toBe('');
      expect(first.exitCode).toBe(0);
      // Empty at first (a /tmp home holds only what the sandbox itself wrote to /tmp: nothing yet).
      expect(first.stdout).toBe(`${expected}\n${expected}\n`);
      expect((await sandbox.exec('cat "$HOME/.cache/tool/x"')).stdout).toBe('kept\n');
      // The host's folder of that name (if any) neither shows in the sandbox nor gets the sandbox's files.
      expect(hostEntries(expected)).toEqual(hostBefore);
    });
  });

  it('is /root as root, writable and kept across execs, with none of the host /root in it', async () => {
    for (const made of [provider, perExec]) {
      await withSandbox(await made.create({ ...spec, asRoot: true }), async (sandbox) => {
        const first = await sandbox.exec('id -u; echo "$HOME"; ls -A /root; echo note > ~/.note && cat /root/.note');
        expect(first.stderr).toBe('');
        expect(first.stdout).toBe('0\n/root\nnote\n');
        expect((await sandbox.exec('cat ~/.note')).stdout).toBe('note\n');
        expect(existsSync('/root/.note')).toBe(false);
      });
    }
  });

  it('keeps the HOME a spec sets', async () => {
    await withSandbox(await provider.create({ ...spec, asRoot: true, env: { HOME: '/tmp/elsewhere' } }), async (sandbox) => {
      expect((await sandbox.exec('echo "$HOME"')).stdout).toBe('/tmp/elsewhere\n');
    });
  });
});
