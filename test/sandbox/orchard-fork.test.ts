/**
 * Forks on the orchard provider (docs/sandboxes.md#snapshots-and-forks): Orchard Env has no snapshot
 * API, so a snapshot is the record of what changed the sandbox and a fork replays it into a fresh
 * pod (src/sandbox/providers/orchard/replay.ts). Against the fake Orchard Env (real wire protocol,
 * pods in bubblewrap): the same steps give a replay fork the same files, /tmp and diff as a local
 * fork; replay forks are independent, forkable again and refuse a released snapshot; a replay whose
 * command ends otherwise than recorded fails naming the step and leaves no pod behind.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOrchardProvider } from '../../src/sandbox/providers/orchard/provider.js';
import type { Sandbox, SandboxProvider } from '../../src/sandbox/types.js';
import { FakeOrchard } from '../fakes/fake-orchard.js';
import { expectCode } from '../support/expect-code.js';
import { makeContractRepo } from './contract.js';
import { bwrapMissing, localProviders } from './local-helpers.js';

const IMAGE = 'contract-image';

async function run(sandbox: Sandbox, command: string): Promise<string> {
  const result = await sandbox.exec(command);
  expect(result.exitCode, result.stderr).toBe(0);
  return result.stdout;
}

/** A shared setup as /solve runs one: commands, a file written, the base marked, a patch, a deletion. */
async function prepare(sandbox: Sandbox): Promise<void> {
  await run(sandbox, 'echo setup >> README.md && mkdir -p build && echo o > build/out.o && echo notes > notes.txt && echo t > /tmp/t.txt');
  await sandbox.writeFile('gen/config.json', '{"a": 1}\n');
  await sandbox.markBase!();
  await sandbox.applyPatch('diff --git a/notes.txt b/notes.txt\n--- a/notes.txt\n+++ b/notes.txt\n@@ -1 +1,2 @@\n notes\n+patched\n');
  await run(sandbox, 'rm -f build/out.o && echo later >> README.md');
}

/** Every file of the workspace but .git, with its digest, and the sandbox's /tmp file. */
async function files(sandbox: Sandbox): Promise<string> {
  return run(sandbox, 'find . -path ./.git -prune -o -type f -print0 | sort -z | xargs -0 sha256sum && cat /tmp/t.txt');
}

describe.skipIf(bwrapMissing)('orchard forks by replay', () => {
  const image = mkdtempSync(join(tmpdir(), 'orchard-fork-image-'));
  const repo = mkdtempSync(join(tmpdir(), 'orchard-fork-repo-'));
  let fake: FakeOrchard;
  let orchard: SandboxProvider;
  const local = localProviders();
  beforeAll(async () => {
    makeContractRepo(join(image, 'testbed'));
    makeContractRepo(repo);
    fake = await FakeOrchard.start({ images: { [IMAGE]: image }, retryAfter: '0' });
    orchard = createOrchardProvider({ baseUrl: fake.url, apiKey: 'test-key', heartbeatIntervalMs: 0, requestTimeoutMs: 10_000 });
  });
  afterAll(async () => {
    await orchard?.close();
    await local.closeAll();
    await fake?.close();
    rmSync(image, { recursive: true, force: true });
    rmSync(repo, { recursive: true, force: true });
  });

  it('a replay fork holds the same files, /tmp and diff as a local fork after the same steps', { timeout: 180_000 }, async () => {
    expect((await orchard.describe()).fork).toMatch(/^replay: /);
    expect(orchard.forkReplays).toBe(true);
    const localProvider = local.make();
    const parents = { local: await localProvider.create({ repo: { path: repo } }), orchard: await orchard.create({ image: IMAGE }) };
    await Promise.all([prepare(parents.local), prepare(parents.orchard)]);
    const snapshots = { local: await parents.local.snapshot!(), orchard: await parents.orchard.snapshot!() };
    expect(snapshots.orchard.sandboxId).toBe(parents.orchard.id);
    expect(snapshots.orchard.bytes).toBeGreaterThan(0);
    const forks = { local: await localProvider.fork!(snapshots.local), orchard: await orchard.fork!(snapshots.orchard) };
    expect(forks.orchard.id).not.toBe(parents.orchard.id);
    const listing = await files(forks.local);
    expect(listing).toContain('gen/config.json');
    expect(listing).not.toContain('build/out.o');
    expect(await files(forks.orchard)).toBe(listing);
    // The base after markBase is replayed too: the same diff, holding only what came after it.
    const diff = await forks.local.diff();
    expect(diff).toContain('+patched');
    expect(diff).toContain('+later');
    expect(diff).not.toContain('gen/config.json');
    expect(await forks.orchard.diff()).toBe(diff);
    for (const sandbox of [...Object.values(forks), ...Object.values(parents)]) await sandbox.close();
    await Promise.all(Object.values(snapshots).map((snapshot) => snapshot.release()));
  });

  it('replay forks are independent and forkable again; a released or foreign snapshot is refused', { timeout: 180_000 }, async () => {
    const parent = await orchard.create({ image: IMAGE });
    await run(parent, 'echo one > one.txt');
    const snapshot = await parent.snapshot!();
    // The parent goes on after the snapshot: its later changes are in no fork.
    await run(parent, 'echo after > after.txt');
    const [a, b] = await Promise.all([orchard.fork!(snapshot), orchard.fork!(snapshot)]);
    await run(a!, 'echo only-a > a.txt');
    expect(await run(b!, 'cat one.txt && test ! -e a.txt && test ! -e after.txt && echo clean')).toBe('one\nclean\n');
    expect(await run(parent, 'test ! -e a.txt && echo clean')).toBe('clean\n');
    const second = await a!.snapshot!();
    const grandchild = await orchard.fork!(second);
    expect(await run(grandchild, 'cat one.txt a.txt')).toBe('one\nonly-a\n');
    await snapshot.release();
    await expectCode(orchard.fork!(snapshot), 'WNW_ERR_INPUT_INVALID');
    const other = createOrchardProvider({ baseUrl: fake.url, apiKey: 'test-key', heartbeatIntervalMs: 0 });
    await expectCode(other.fork!(second), 'WNW_ERR_INPUT_INVALID');
    await other.close();
    for (const sandbox of [grandchild, a!, b!, parent]) await sandbox.close();
    await second.release();
  });

  it('a replay whose command ends otherwise than recorded fails naming the step, and deletes its pod', { timeout: 120_000 }, async () => {
    const parent = await orchard.create({ image: IMAGE });
    await run(parent, 'cat /proc/sys/kernel/random/uuid > id.txt');
    const id = (await run(parent, 'cat id.txt')).trim();
    // True in the parent; in a replay the first step draws another id.
    await run(parent, `test "$(cat id.txt)" = ${id}`);
    const snapshot = await parent.snapshot!();
    const before = fake.sandboxes.size;
    const error = await expectCode(orchard.fork!(snapshot), 'WNW_ERR_SBX_CREATE');
    expect(error.message).toMatch(/diverged at step 2 .*exit 1, recorded 0/);
    expect(fake.sandboxes.size).toBe(before);
    await parent.close();
    await snapshot.release();
  });
});
