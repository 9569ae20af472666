/**
 * Snapshots and forks of docker sandboxes (docs/sandboxes.md#snapshots-and-forks): a snapshot is
 * `docker commit` of the container, a fork a container from that image. Against the fake daemon
 * always, and a real Docker engine when WINNOWER_DOCKER_HOST names its socket (docker-targets.ts;
 * those runs carry `[docker-engine]`): a fork starts from the parent's files at the snapshot (the
 * workspace and /tmp), is independent of its parent and siblings, diffs against the parent's base
 * (a markBase tree included), can be forked again; the committed image goes once the snapshot is
 * released and its last fork closed, and with the provider.
 */
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDockerProvider, type DockerProviderSettings } from '../../src/sandbox/providers/docker/provider.js';
import type { DockerSnapshot } from '../../src/sandbox/providers/docker/snapshot.js';
import type { Sandbox, SandboxProvider, SandboxSnapshot } from '../../src/sandbox/types.js';
import { expectCode } from '../support/expect-code.js';
import { type DockerTarget, fakeTarget, realEngineSocket, realTarget } from './docker-targets.js';

const realSocket = realEngineSocket();
const makers: { name: string; make: () => Promise<DockerTarget> }[] = [
  { name: 'fake daemon', make: fakeTarget },
  ...(realSocket ? [{ name: 'real engine [docker-engine]', make: () => realTarget(realSocket) }] : []),
];

async function run(sandbox: Sandbox, command: string): Promise<string> {
  const result = await sandbox.exec(command);
  expect(result.exitCode, result.stderr).toBe(0);
  return result.stdout;
}

describe.each(makers)('docker snapshots and forks against the $name', ({ make }) => {
  let target: DockerTarget;
  let agent: Agent;
  const providers: SandboxProvider[] = [];
  const provider = (settings: DockerProviderSettings = {}): SandboxProvider => {
    const made = createDockerProvider({ socketPath: target.socketPath, ...settings });
    providers.push(made);
    return made;
  };
  const forkOf = (made: SandboxProvider) => {
    if (!made.fork) throw new Error('the docker provider forks');
    return made.fork.bind(made);
  };
  /** Whether the engine still has the snapshot's image. */
  const imageExists = async (snapshot: SandboxSnapshot): Promise<boolean> => {
    const image = (snapshot as DockerSnapshot).image;
    const response = await request(`http://docker/images/${encodeURIComponent(image)}/json`, { dispatcher: agent });
    await response.body.text();
    return response.statusCode === 200;
  };
  beforeAll(async () => {
    target = await make();
    agent = new Agent({ connect: { socketPath: target.socketPath } });
  }, 120_000);
  afterAll(async () => {
    await Promise.all(providers.map((each) => each.close()));
    await agent?.close();
    await target?.close();
  });

  it('a fork starts from the snapshot and is independent of its parent and siblings; a fork of a fork works', {
    timeout: 180_000,
  }, async () => {
    const made = provider();
    const fork = forkOf(made);
    expect((await made.describe()).fork).toMatch(/^commit: /);
    const parent = await made.create({ image: target.contractImage });
    await run(parent, 'echo edited >> README.md && echo new > new.txt && mkdir -p d && echo x > d/x && echo t > /tmp/t.txt');
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
      expect(await run(child, 'test ! -e after.txt && echo absent')).toBe('absent\n');
    }
    // The same diff against the parent's base commit: the prefix's changes are the fork's too.
    expect(await a!.diff()).toBe(await b!.diff());
    expect(await a!.diff()).toContain('+new');

    await run(a!, 'echo only-a > a.txt && echo a >> new.txt');
    expect(await run(b!, 'test ! -e a.txt && cat new.txt')).toBe('new\n');
    expect(await run(parent, 'test ! -e a.txt && test ! -e new.txt && echo clean')).toBe('clean\n');

    const second = await a!.snapshot!();
    const grandchild = await fork(second);
    expect(await run(grandchild, 'cat a.txt new.txt /tmp/t.txt')).toBe('only-a\nnew\na\nt\n');
    await Promise.all([a!.close(), b!.close(), parent.close(), snapshot.release()]);
    // The stacked snapshot's image is a child of the first one's: the first stays until it goes.
    expect(await imageExists(snapshot)).toBe(true);
    await Promise.all([grandchild.close(), second.release()]);
    expect(await imageExists(snapshot)).toBe(false);
    expect(await imageExists(second)).toBe(false);
  });

  it('a snapshot after markBase gives its forks that base; they run as the sandbox user and bind their own mounts', {
    timeout: 120_000,
  }, async () => {
    const made = provider();
    const parent = await made.create({ image: target.contractImage });
    await run(parent, 'echo setup >> README.md && echo generated > gen.txt');
    await parent.markBase!();
    const snapshot = await parent.snapshot!();
    await parent.close();
    const child = await forkOf(made)(snapshot);
    // The setup's changes are the fork's base: no patch holds them.
    expect(await child.diff()).toBe('');
    await run(child, 'echo mine >> gen.txt');
    expect(await child.diff()).toMatch(/--- a\/gen.txt\n\+\+\+ b\/gen.txt\n@@ -1 \+1,2 @@\n generated\n\+mine\n$/);
    if (target.real) expect(await run(child, 'id -u')).toBe('1000\n');
    // A fork binds its own host paths (a harness CLI), not its parent's.
    const shared = mkdtempSync(join(tmpdir(), 'docker-fork-mount-'));
    try {
      writeFileSync(join(shared, 'tool.sh'), 'echo from-the-mount\n');
      chmodSync(shared, 0o755);
      const mounted = await forkOf(made)(snapshot, { mounts: [{ source: shared, target: '/opt/tool' }] });
      // Paths through the mount as the fake maps them too: the command's cwd and the file API.
      expect((await mounted.exec('bash tool.sh', { cwd: '/opt/tool' })).stdout).toBe('from-the-mount\n');
      expect(await run(mounted, 'cat gen.txt')).toBe('generated\n');
      await expectCode(child.readFile('/opt/tool/tool.sh'), 'WNW_ERR_SBX_FILE');
      await mounted.close();
    } finally {
      rmSync(shared, { recursive: true, force: true });
    }
    await child.close();
    await snapshot.release();
  });

  it('removes the image once released and its last fork closed, refuses a released one, and removes what is held at close', {
    timeout: 120_000,
  }, async () => {
    const made = provider();
    const fork = forkOf(made);
    const parent = await made.create({ image: target.contractImage });
    await run(parent, 'echo x > x.txt');
    const snapshot = await parent.snapshot!();
    const child = await fork(snapshot);
    await snapshot.release();
    // Still used by the fork's container: kept.
    expect(await imageExists(snapshot)).toBe(true);
    expect(await run(child, 'cat x.txt')).toBe('x\n');
    await expectCode(fork(snapshot), 'WNW_ERR_INPUT_INVALID');
    await child.close();
    expect(await imageExists(snapshot)).toBe(false);

    // Held, never released: the provider's close removes it.
    const held = await parent.snapshot!();
    const other = await fork(held);
    expect(await imageExists(held)).toBe(true);
    await made.close();
    expect(await imageExists(held)).toBe(false);
    await expectCode(other.exec('true'), 'WNW_ERR_SBX_CLOSED');
  });

  it('refuses a snapshot of another provider', { timeout: 60_000 }, async () => {
    const first = provider();
    const parent = await first.create({ image: target.contractImage });
    const snapshot = await parent.snapshot!();
    await expectCode(forkOf(provider())(snapshot), 'WNW_ERR_INPUT_INVALID');
    await parent.close();
    await snapshot.release();
  });

  it('refuses a snapshot past the caps, naming the setting', { timeout: 120_000 }, async () => {
    const made = provider({ maxSnapshotsPerSandbox: 1, maxSnapshotMb: 1 });
    const parent = await made.create({ image: target.contractImage });
    try {
      const first = await parent.snapshot!();
      const error = await expectCode(parent.snapshot!(), 'WNW_ERR_SBX_DISK');
      expect(error.message).toContain('max_snapshots_per_sandbox');
      await first.release();
      await run(parent, 'head -c 3M /dev/urandom > big.bin');
      const big = await expectCode(parent.snapshot!(), 'WNW_ERR_SBX_DISK');
      expect(big.message).toContain('max_snapshot_mb');
    } finally {
      await parent.close();
    }
  });
});
