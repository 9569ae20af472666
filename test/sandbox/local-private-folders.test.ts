/**
 * Folders the sandbox user cannot pass (a mode-0700 `mktemp -d`, /root, a private $HOME) and a
 * `umask 077`: as root, sandboxes run as an unprivileged uid, which must pass through every folder
 * above the provider's files and every bind source. The provider puts its folder where that uid
 * can reach it, and names the folder and the fix when it cannot (issue 18, item 5).
 */
import { chmodSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createHarnessCatalog } from '../../src/rollout/harness/harness-catalog.js';
import { prepareRuntime } from '../../src/rollout/harness/harness-runtime.js';
import { findBlocker, firstReachable, makeDirs, OTHER_USER } from '../../src/sandbox/reachable.js';
import { expectCode } from '../support/expect-code.js';
import { bwrapMissing, isRoot, localProviders, makeTestRepo, tempDir } from './local-helpers.js';

const closed = mkdtempSync(join(tmpdir(), 'wnw-closed-'));
const repo = tempDir('wnw-private-repo-');
const { base } = makeTestRepo(repo.dir);
afterAll(() => {
  rmSync(closed, { recursive: true, force: true });
  repo.remove();
});

describe('reachability checks', () => {
  it('names the first folder another user cannot pass through, and the fix', () => {
    expect(statSync(closed).mode & 0o777).toBe(0o700);
    const inside = join(closed, 'a', 'b');
    mkdirSync(inside, { recursive: true, mode: 0o755 });
    expect(findBlocker(inside, OTHER_USER)).toEqual({ folder: closed, mode: 0o700, missing: 'x' });
    // Its owner passes.
    expect(findBlocker(inside, { uid: statSync(closed).uid, gid: -1 })).toBeUndefined();
    expect(firstReachable([join(closed, 'a'), tmpdir()], OTHER_USER)).toMatchObject({
      dir: tmpdir(),
      passedOver: [{ dir: join(closed, 'a'), blocker: { folder: closed } }],
    });
    // What the path itself must allow: a file only its owner reads, in an open folder.
    const open = mkdtempSync(join(tmpdir(), 'wnw-open-'));
    try {
      chmodSync(open, 0o755);
      writeFileSync(join(open, 'secret'), 'x', { mode: 0o600 });
      expect(findBlocker(join(open, 'secret'), OTHER_USER)).toBeUndefined();
      expect(findBlocker(join(open, 'secret'), OTHER_USER, 'r')).toEqual({ folder: join(open, 'secret'), mode: 0o600, missing: 'r' });
    } finally {
      rmSync(open, { recursive: true, force: true });
    }
  });

  it('makes folders with their modes whatever the umask', () => {
    const old = process.umask(0o077);
    try {
      const dir = join(closed, 'made', 'deep', 'er');
      makeDirs(dir, 0o711);
      for (const folder of [join(closed, 'made'), join(closed, 'made', 'deep'), dir]) expect(statSync(folder).mode & 0o777).toBe(0o711);
    } finally {
      process.umask(old);
    }
  });

  it('puts the harness runtime folder (forwarder, proxy sockets) where the sandbox user can reach it, past a closed TMPDIR', () => {
    const runtime = prepareRuntime(OTHER_USER, [join(closed, 'tmp'), tmpdir()]);
    expect(runtime.dir.startsWith(closed)).toBe(false);
    expect(statSync(runtime.dir).mode & 0o777).toBe(0o755);
    for (const file of [runtime.forwarder, runtime.node]) expect(findBlocker(file, OTHER_USER, 'r')).toBeUndefined();
    rmSync(runtime.dir, { recursive: true, force: true });
    expect(() => prepareRuntime(OTHER_USER, [join(closed, 'tmp')])).toThrow(
      `cannot pass through ${closed} (mode 700), above ${join(closed, 'tmp')}; run \`chmod o+x ${closed}\``,
    );
  });

  it.skipIf(!isRoot)('a harness installed under a closed folder is not available, saying why without the host path', () => {
    const installDir = join(closed, 'harnesses');
    const definitions = join(closed, 'definitions');
    mkdirSync(join(installDir, 'echo@1.0.0', 'node_modules', '.bin'), { recursive: true, mode: 0o755 });
    writeFileSync(join(installDir, 'echo@1.0.0', 'node_modules', '.bin', 'echo'), '#!/bin/sh\n', { mode: 0o755 });
    mkdirSync(definitions);
    writeFileSync(
      join(definitions, 'echo.yaml'),
      'name: echo\ndescription: x\nprotocol: openai-chat\nsource: {kind: npm, package: echo, version: 1.0.0, bin: echo}\nmain_tools: [bash]\nprompt_template: x\ncommand: x\nlimits: {max_calls: 1, token_limit: 1, time_limit_s: 1}\n',
    );
    const catalog = createHarnessCatalog({ definitionsDir: definitions, installDir });
    const status = catalog.list().find((entry) => entry.name === 'echo')!;
    expect(status).toMatchObject({ available: false });
    expect(status.reason).toContain('is installed, but sandboxes cannot reach it');
    expect(status.reason).toContain('mode 700');
    expect(status.reason).not.toContain(closed);
    expect(() => catalog.resolve('echo')).toThrow(/sandboxes cannot reach it/);
  });
});

describe.skipIf(bwrapMissing || !isRoot)('local provider and folders the sandbox user cannot pass (as root)', () => {
  const { make, closeAll } = localProviders();
  afterAll(closeAll);

  it('starts with TMPDIR under a 0700 folder: its folder goes under /tmp, and a warning names the folder and the fix', async () => {
    const warnings: string[] = [];
    const saved = process.env.TMPDIR;
    process.env.TMPDIR = join(closed, 'tmp');
    mkdirSync(process.env.TMPDIR, { recursive: true });
    let provider: ReturnType<typeof make>;
    try {
      provider = make({ logger: { info: () => undefined, warn: (message) => warnings.push(message) } });
      const description = await provider.describe();
      expect(String(description.rootDir).startsWith(closed)).toBe(false);
    } finally {
      if (saved === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = saved;
    }
    expect(warnings.join('\n')).toContain(`cannot pass through ${closed} (mode 700)`);
    expect(warnings.join('\n')).toContain(`chmod o+x ${closed}`);
    const sandbox = await provider!.create({ repo: { path: repo.dir, base_commit: base } });
    try {
      expect((await sandbox.exec('cat README.md')).exitCode).toBe(0);
    } finally {
      await sandbox.close();
    }
  });

  it('refuses a rootDir below a 0700 folder, naming it and the fix (not user namespaces)', async () => {
    const error = await expectCode(make({ rootDir: join(closed, 'root') }).describe(), 'WNW_ERR_CFG_INVALID');
    expect(error.message).toContain(`cannot pass through ${closed} (mode 700)`);
    expect(error.message).toContain(`chmod o+x ${closed}`);
    expect(error.message).not.toContain('namespaces');
  });

  it('refuses a mount whose source the sandbox user cannot reach, naming the folder', async () => {
    const source = join(closed, 'mounted.txt');
    writeFileSync(source, 'x\n', { mode: 0o644 });
    const error = await expectCode(
      make().create({ repo: { path: repo.dir, base_commit: base }, mounts: [{ source, target: '/opt/mounted.txt' }] }),
      'WNW_ERR_SBX_CREATE',
    );
    expect(error.message).toContain(
      `spec.mounts[0]: the sandbox user (uid 65534) cannot reach ${source}: it cannot pass through ${closed} (mode 700)`,
    );
  });

  it('works under umask 077: its folders get their modes, the overlay still mounts', async () => {
    const normal = (await make().describe()).workspace;
    const old = process.umask(0o077);
    try {
      const provider = make();
      expect((await provider.describe()).workspace).toBe(normal);
      const sandbox = await provider.create({ repo: { path: repo.dir, base_commit: base } });
      try {
        expect((await sandbox.exec('echo hi > new.txt && cat README.md >/dev/null && echo ok')).stdout).toBe('ok\n');
        expect(await sandbox.diff()).toContain('+hi');
      } finally {
        await sandbox.close();
      }
    } finally {
      process.umask(old);
    }
  });
});
