/**
 * Disk caps of local sandboxes: the workspace's writes and /tmp + /var/tmp are capped tmpfs, so a
 * command writing past the cap gets ENOSPC and a note naming the cap (the agent sees both and goes
 * on: it can remove files), a file write or patch past it WNW_ERR_SBX_DISK, and the host's disk
 * never receives the bytes. Each check looks at the host, not only at what the sandbox says.
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createLocalProvider } from '../../src/sandbox/providers/local/provider.js';
import type { Sandbox, SandboxSpec } from '../../src/sandbox/types.js';
import { expectCode } from '../support/expect-code.js';
import { bwrapMissing, localProviders, makeTestRepo, tempDir } from './local-helpers.js';

const MIB = 1024 * 1024;
const repo = tempDir('wnw-disk-repo-');
const { base } = makeTestRepo(repo.dir);
const spec: SandboxSpec = { repo: { path: repo.dir, base_commit: base } };

/** Bytes the host's disk holds for this sandbox (its folder, as the host sees it: mount points only). */
function hostBytes(rootDir: string, sandbox: Sandbox): number {
  return Number(execFileSync('du', ['-s', '-B1', join(rootDir, 'sandboxes', sandbox.id)], { encoding: 'utf8' }).split('\t')[0]);
}

describe.skipIf(bwrapMissing)('local sandbox disk caps', () => {
  const { make, closeAll } = localProviders();
  afterAll(async () => {
    await closeAll();
    repo.remove();
  });

  for (const workspace of ['auto', 'copy'] as const) {
    it(`stops the workspace's writes at diskMb (${workspace === 'auto' ? 'overlay' : 'copy'}): ENOSPC and a note, nothing on the host's disk`, {
      timeout: 60_000,
    }, async () => {
      const provider = make({ diskMb: 20, tmpMb: 20, workspace });
      const rootDir = String((await provider.describe()).rootDir);
      const sandbox = await provider.create(spec);
      try {
        const full = await sandbox.exec('head -c 100M /dev/zero > big.bin');
        expect(full.exitCode).not.toBe(0);
        expect(full.stderr).toContain('No space left on device');
        expect(full.note).toBe(
          'disk full: the 20 MiB cap of the workspace (/workspace) is reached (sandbox.settings.diskMb); writes fail with "No space left on device" until files are removed',
        );
        // A file write of ours past the cap is an error naming it.
        const error = await expectCode(sandbox.writeFile('more.bin', new Uint8Array(MIB)), 'WNW_ERR_SBX_DISK');
        expect(error.details).toMatchObject({ area: 'workspace', capBytes: 20 * MIB });
        expect(error.message).toContain('20 MiB cap (sandbox.settings.diskMb');
        // A later command that succeeds gets no note.
        expect((await sandbox.exec('true')).note).toBeUndefined();
        const size = Number((await sandbox.exec('stat -c %s big.bin')).stdout);
        expect(size).toBeGreaterThan(10 * MIB);
        expect(size).toBeLessThanOrEqual(20 * MIB);
        // The host's folder for the sandbox holds mount points only: the bytes are in the capped tmpfs.
        expect(hostBytes(rootDir, sandbox)).toBeLessThan(MIB);
        // Room again once the file is gone.
        await sandbox.exec('rm big.bin');
        await sandbox.writeFile('small.txt', 'fits\n');
        expect((await sandbox.exec('cat small.txt')).stdout).toBe('fits\n');
        expect(await sandbox.diff()).toContain('+fits');
      } finally {
        await sandbox.close();
      }
    });
  }

  it('stops /tmp and /var/tmp together at tmpMb, and keeps them across execs', { timeout: 60_000 }, async () => {
    const provider = make({ diskMb: 20, tmpMb: 20 });
    const rootDir = String((await provider.describe()).rootDir);
    const sandbox = await provider.create(spec);
    try {
      await sandbox.exec('echo kept > /tmp/kept.txt');
      expect((await sandbox.exec('cat /tmp/kept.txt')).stdout).toBe('kept\n');
      const full = await sandbox.exec('head -c 12M /dev/zero > /tmp/a; head -c 12M /dev/zero > /var/tmp/b');
      expect(full.stderr).toContain('No space left on device');
      expect(full.note).toContain('disk full: the 20 MiB cap of /tmp and /var/tmp is reached (sandbox.settings.tmpMb)');
      const used = (await sandbox.exec('du -s -B1 /tmp/a /var/tmp/b | cut -f1')).stdout.trim().split('\n').map(Number);
      expect(used[0]! + used[1]!).toBeLessThanOrEqual(20 * MIB);
      expect(hostBytes(rootDir, sandbox)).toBeLessThan(MIB);
      // A write that fits is not an error.
      await sandbox.exec('rm /tmp/a /var/tmp/b');
      expect((await sandbox.exec('head -c 1M /dev/zero > /tmp/c && echo ok')).stdout).toBe('ok\n');
    } finally {
      await sandbox.close();
    }
  });

  it('keeps the caps within the memory limit (tmpfs pages are charged to the sandbox), so a full disk leaves room to clean up', {
    timeout: 60_000,
  }, async () => {
    const provider = make({ diskMb: 400, tmpMb: 400 });
    const sandbox = await provider.create({ ...spec, memoryMb: 64 });
    try {
      expect((await sandbox.exec('head -c 300M /dev/zero > /tmp/big')).note).toContain('the 16 MiB cap of /tmp and /var/tmp is reached');
      expect((await sandbox.exec('head -c 300M /dev/zero > big')).note).toContain(
        'the 32 MiB cap of the workspace (/workspace) is reached',
      );
      expect((await sandbox.exec('rm /tmp/big big && echo cleaned')).stdout).toBe('cleaned\n');
    } finally {
      await sandbox.close();
    }
  });

  it('refuses a cap that is not a positive number, naming the setting', () => {
    expect(() => createLocalProvider({ diskMb: 0 })).toThrow(/sandbox\.settings\.diskMb/);
    expect(() => createLocalProvider({ tmpMb: Number.NaN })).toThrow(/sandbox\.settings\.tmpMb/);
  });
});
