/**
 * Snapshots and forks of local sandboxes (docs/sandboxes.md#snapshots-and-forks), on the overlay
 * and in copy mode: a fork starts from the parent's files as they were at the snapshot (edits,
 * new files, deletions, /tmp), is independent of the parent and of its siblings, diffs against the
 * same base commit, can itself be snapshotted and forked; a snapshot's folder goes once it is
 * released and its last fork is closed; the caps refuse, naming the setting.
 */
import { chmodSync, existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Sandbox, SandboxProvider, SandboxSpec } from '../../src/sandbox/types.js';
import { expectCode } from '../support/expect-code.js';
import { bwrapMissing, localProviders, makeTestRepo, tempDir } from './local-helpers.js';

const repo = tempDir('wnw-fork-repo-');
const { base } = makeTestRepo(repo.dir);
const spec: SandboxSpec = { repo: { path: repo.dir, base_commit: base } };

async function run(sandbox: Sandbox, command: string): Promise<string> {
  const result = await sandbox.exec(command);
  expect(result.exitCode, result.stderr).toBe(0);
  return result.stdout;
}

function forkOf(provider: SandboxProvider) {
  if (!provider.fork) throw new Error('the local provider forks');
  return provider.fork.bind(provider);
}

describe.skipIf(bwrapMissing)('local sandbox snapshots and forks', () => {
  const { make, closeAll } = localProviders();
  afterAll(async () => {
    await closeAll();
    repo.remove();
  });

  for (const workspace of ['auto', 'copy'] as const) {
    it(`a fork starts from the snapshot and is independent of its parent and siblings (${workspace === 'auto' ? 'overlay' : 'copy'})`, {
      timeout: 120_000,
    }, async () => {
      const provider = make({ workspace });
      const fork = forkOf(provider);
      expect((await provider.describe()).fork).toMatch(workspace === 'copy' ? /^copy: / : /^copy-on-write: /);
      const parent = await provider.create(spec);
      // A tracked text file (binary ones stay out of a patch: src/sandbox/patch-policy.ts).
      const tracked = `src/${(await run(parent, 'ls src')).trim().split('\n')[0]}`;
      await run(
        parent,
        `echo edited >> README.md && echo new > new.txt && rm -- '${tracked}' && mkdir -p d && echo x > d/x && echo t > /tmp/t.txt`,
      );
      const snapshot = await parent.snapshot!();
      expect(snapshot.sandboxId).toBe(parent.id);
      expect(snapshot.bytes).toBeGreaterThan(0);
      // The parent goes on after the snapshot: its later writes reach no fork.
      await run(parent, 'echo after > after.txt && rm new.txt');

      const [a, b] = await Promise.all([fork(snapshot), fork(snapshot)]);
      for (const child of [a!, b!]) {
        expect(child.id).not.toBe(parent.id);
        expect(await run(child, 'tail -n 1 README.md')).toBe('edited\n');
        expect(await run(child, 'cat new.txt d/x /tmp/t.txt')).toBe('new\nx\nt\n');
        expect(await run(child, `test ! -e '${tracked}' && test ! -e after.txt && echo gone`)).toBe('gone\n');
      }
      // The same diff against the same base: the prefix's changes are the fork's too.
      expect(await a!.diff()).toBe(await b!.diff());
      expect(await a!.diff()).toContain('+new');
      expect(await a!.diff()).toContain(`deleted file mode`);

      await run(a!, 'echo only-a > a.txt && echo a >> new.txt');
      expect(await run(b!, 'test ! -e a.txt && cat new.txt')).toBe('new\n');
      expect(await run(parent, 'test ! -e a.txt && test ! -e new.txt && echo clean')).toBe('clean\n');

      // A fork of a fork.
      const second = await a!.snapshot!();
      const grandchild = await fork(second);
      expect(await run(grandchild, 'cat a.txt new.txt')).toBe('only-a\nnew\na\n');
      expect(await run(grandchild, `test ! -e '${tracked}' && echo gone`)).toBe('gone\n');
      await Promise.all([grandchild.close(), second.release()]);
      await Promise.all([a!.close(), b!.close(), parent.close(), snapshot.release()]);
    });
  }

  it('removes a snapshot once released and its last fork closed, and refuses a released one', { timeout: 60_000 }, async () => {
    const provider = make();
    const fork = forkOf(provider);
    const rootDir = String((await provider.describe()).rootDir);
    const forks = () => readdirSync(join(rootDir, 'forks'));
    const parent = await provider.create(spec);
    await run(parent, 'echo x > x.txt');
    const snapshot = await parent.snapshot!();
    expect(forks()).toEqual([snapshot.id]);
    const child = await fork(snapshot);
    await snapshot.release();
    // Still mounted by the fork: kept.
    expect(forks()).toEqual([snapshot.id]);
    expect(await run(child, 'cat x.txt')).toBe('x\n');
    await expectCode(fork(snapshot), 'WNW_ERR_INPUT_INVALID');
    await child.close();
    expect(existsSync(join(rootDir, 'forks', snapshot.id))).toBe(false);
    await parent.close();
  });

  it('a snapshot taken after markBase gives its forks that base; a fork can bind mounts of its own', { timeout: 90_000 }, async () => {
    const provider = make();
    const fork = forkOf(provider);
    const shared = tempDir('wnw-fork-mount-');
    writeFileSync(join(shared.dir, 'tool.sh'), 'echo from-the-mount\n', { mode: 0o644 });
    chmodSync(shared.dir, 0o755);
    try {
      const parent = await provider.create(spec);
      await run(parent, 'echo setup >> README.md && echo generated > gen.txt');
      await parent.markBase!();
      const snapshot = await parent.snapshot!();
      await parent.close();
      const plain = await fork(snapshot);
      const mounted = await fork(snapshot, { mounts: [{ source: shared.dir, target: '/opt/tool' }] });
      // The setup's changes are the forks' base: no patch holds them.
      expect(await plain.diff()).toBe('');
      await run(mounted, 'echo mine >> gen.txt');
      expect(await mounted.diff()).toMatch(/--- a\/gen.txt\n\+\+\+ b\/gen.txt\n@@ -1 \+1,2 @@\n generated\n\+mine\n$/);
      expect(await run(mounted, 'bash /opt/tool/tool.sh')).toBe('from-the-mount\n');
      // The parent's spec had no mounts, and a fork without its own keeps none.
      expect((await plain.exec('test -e /opt/tool/tool.sh')).exitCode).not.toBe(0);
      await expectCode(
        fork(snapshot, { mounts: [{ source: shared.dir, target: join(plain.workdir, 'inside') }] }),
        'WNW_ERR_INPUT_INVALID',
      );
      await Promise.all([plain.close(), mounted.close(), snapshot.release()]);
    } finally {
      shared.remove();
    }
  });

  it('refuses a snapshot past the caps, naming the setting', { timeout: 60_000 }, async () => {
    const provider = make({ maxSnapshotsPerSandbox: 1, maxSnapshotMb: 1 });
    const parent = await provider.create(spec);
    try {
      const first = await parent.snapshot!();
      const error = await expectCode(parent.snapshot!(), 'WNW_ERR_SBX_DISK');
      expect(error.message).toContain('max_snapshots_per_sandbox');
      await first.release();
      await run(parent, 'head -c 3M /dev/urandom > big.bin');
      const big = await expectCode(parent.snapshot!(), 'WNW_ERR_SBX_DISK');
      expect(big.message).toContain('max_snapshot_mb');
      const rootDir = String((await provider.describe()).rootDir);
      expect(readdirSync(join(rootDir, 'forks'))).toEqual([]);
    } finally {
      await parent.close();
    }
  });
});
