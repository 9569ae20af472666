/**
 * Images on the local provider, from an OCI layout written by hand in the test (no registry):
 * the sandbox contract over `oci:<dir>:<tag>`, whiteouts, the image's root instead of the host's,
 * copy-on-write per sandbox, one pull per image shared by concurrent creates, the cache keyed by
 * manifest digest and kept across providers, the image's Env and conda activation, mounts, and
 * the errors for a missing layout, tag or directory.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WinnowerError } from '../../src/errors.js';
import { createLocalProvider, type LocalProviderSettings } from '../../src/sandbox/providers/local/provider.js';
import type { SandboxProvider } from '../../src/sandbox/types.js';
import { runSandboxContract } from './contract.js';
import { bwrapMissing, eventually, hostCommandLines, isRoot, tempDir } from './local-helpers.js';
import { countingSkopeo, imageToolsMissing, writeTinyImage, type TinyImage } from './local-image-helpers.js';

const quiet: LocalProviderSettings['logger'] = { info: () => undefined, warn: () => undefined };
const missing = bwrapMissing ?? imageToolsMissing;

async function codeOf(promise: Promise<unknown>): Promise<string | undefined> {
  try {
    await promise;
    return undefined;
  } catch (error) {
    return WinnowerError.isInstance(error) ? `${error.code}` : `not a WinnowerError: ${String(error)}`;
  }
}

describe.skipIf(missing)(`[images] local provider with images${missing ? ` (skipped: ${missing})` : ''}`, () => {
  // Made in beforeAll, so a run that skips these tests leaves no folder behind.
  let scratch: { dir: string; remove(): void };
  let image: TinyImage;
  let cacheDir: string;
  let skopeo: ReturnType<typeof countingSkopeo>;
  let provider: SandboxProvider;
  let contractProvider: SandboxProvider | undefined;
  const providers: SandboxProvider[] = [];
  const make = (settings: LocalProviderSettings = {}): SandboxProvider => {
    const made = createLocalProvider({ logger: quiet, imageCacheDir: cacheDir, skopeoPath: skopeo.path, ...settings });
    providers.push(made);
    return made;
  };
  beforeAll(() => {
    scratch = tempDir('wnw-local-image-');
    // As root the sandbox user unpacks into the cache: it must be able to pass through this folder.
    chmodSync(scratch.dir, 0o711);
    image = writeTinyImage(join(scratch.dir, 'image'));
    cacheDir = join(scratch.dir, 'cache');
    skopeo = countingSkopeo(scratch.dir);
    provider = make();
  });
  afterAll(async () => {
    for (const each of providers) await each.close();
    scratch?.remove();
  });

  // The contract closes its providers after its tests.
  runSandboxContract({
    name: 'local (image from an OCI layout)',
    create: async (settings) => ({ provider: settings ? make(settings) : (contractProvider ??= make()), spec: { image: image.reference } }),
  });

  it('runs in the image root with its whiteouts honoured, its Env, /testbed at the image commit, as a non-root user', async () => {
    const sandbox = await provider.create({ image: image.reference });
    try {
      expect(sandbox.workdir).toBe('/testbed');
      const probe = [
        'pwd',
        'id -u',
        'git rev-parse HEAD',
        'echo "$FROM_IMAGE"',
        'cat /etc/added.txt /etc/kept.txt',
        '[ -e /etc/gone.txt ] && echo "gone.txt still there"',
        '[ -e /opt/dropme ] && echo "dropme still there"',
        // The host's system is not there: this file exists on every Debian host, not in the image.
        '[ -e /etc/debian_version ] && echo "host /etc visible"',
        'true',
      ].join('; ');
      const result = await sandbox.exec(probe);
      expect(result.stderr).toBe('');
      expect(result.stdout).toBe(`/testbed\n1000\n${image.baseCommit}\nyes\nadded by the upper layer\nkept\n`);
    } finally {
      await sandbox.close();
    }
  });

  it("sets HOME as a container engine does: the image's Env, else its /etc/passwd for the sandbox user, else /root for root", async () => {
    const users = [
      { name: 'root', uid: 0, home: '/root' },
      { name: 'app', uid: 1000, home: '/home/app' },
    ];
    const withUsers = writeTinyImage(join(scratch.dir, 'image-users'), { passwd: users });
    const withEnv = writeTinyImage(join(scratch.dir, 'image-env'), { passwd: users, env: ['HOME=/opt/home'] });
    // A cache of their own: the other tests count the images in theirs.
    const homes = make({ imageCacheDir: join(scratch.dir, 'cache-home') });
    const home = async (reference: string, asRoot: boolean, probe = 'id -u; echo "$HOME"') => {
      const sandbox = await homes.create({ image: reference, ...(asRoot ? { asRoot } : {}) });
      try {
        return (await sandbox.exec(probe)).stdout;
      } finally {
        await sandbox.close();
      }
    };
    const writable = 'id -u; echo "$HOME"; touch "$HOME/.written" && cd && pwd';
    expect(await home(withUsers.reference, false, writable)).toBe('1000\n/home/app\n/home/app\n');
    expect(await home(withUsers.reference, true, writable)).toBe('0\n/root\n/root\n');
    expect(await home(withEnv.reference, false)).toBe('1000\n/opt/home\n');
    expect(await home(withEnv.reference, true)).toBe('0\n/opt/home\n');
    // No /etc/passwd in the image: root's home is /root all the same; a uid without an entry gets /tmp.
    expect(await home(image.reference, true)).toBe('0\n/root\n');
    expect(await home(image.reference, false, writable)).toBe('1000\n/tmp\n/tmp\n');
  });

  it('isolates as it does over a checkout: no network unless asked, no capabilities, seccomp, own pid namespace', async () => {
    const server = createServer((_, response) => response.end('host secret'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const probe = `exec 3<>/dev/tcp/127.0.0.1/${(server.address() as AddressInfo).port} && printf 'GET / HTTP/1.0\\r\\n\\r\\n' >&3 && cat <&3`;
    const sandbox = await provider.create({ image: image.reference });
    const networked = await provider.create({ image: image.reference, network: true });
    try {
      const blocked = await sandbox.exec(probe, { timeoutMs: 10_000 });
      expect(blocked.exitCode).not.toBe(0);
      expect(blocked.stdout).not.toContain('host secret');
      // A networked sandbox has its own network namespace (test/sandbox/local-network.test.ts).
      expect((await networked.exec(probe, { timeoutMs: 10_000 })).stdout).not.toContain('host secret');
      const status = (
        await sandbox.exec(
          'while read -r line; do case "$line" in CapEff:*|NoNewPrivs:*|Seccomp:*) echo "$line";; esac; done < /proc/self/status',
        )
      ).stdout;
      expect(status).toMatch(/CapEff:\s+0+\n/);
      expect(status).toMatch(/NoNewPrivs:\s+1/);
      expect(status).toMatch(/Seccomp:\s+2/);
      // Only the sandbox's own few processes, numbered from 1 in its pid namespace.
      const pids = (await sandbox.exec('for p in /proc/[0-9]*; do echo "${p#/proc/}"; done')).stdout.trim().split('\n').map(Number);
      expect(Math.max(...pids)).toBeLessThan(20);
    } finally {
      await Promise.all([sandbox.close(), networked.close()]);
      server.close();
    }
  });

  it("diffs against the image repository's HEAD, or against the commit the spec names", async () => {
    const two = writeTinyImage(join(scratch.dir, 'two-commits'), { secondCommit: true });
    const own = make({ imageCacheDir: join(scratch.dir, 'cache-two-commits') });
    const atHead = await own.create({ image: two.reference });
    const atBase = await own.create({ image: two.reference, repo: { base_commit: two.baseCommit } });
    try {
      expect((await atHead.exec('git rev-parse HEAD')).stdout.trim()).toBe(two.head);
      expect(await atHead.diff()).toBe('');
      expect(await atBase.diff()).toContain('+second commit');
    } finally {
      await Promise.all([atHead.close(), atBase.close()]);
    }
  });

  it('gives each sandbox its own copy-on-write root, and never writes to the shared rootfs', async () => {
    const [one, two] = await Promise.all([provider.create({ image: image.reference }), provider.create({ image: image.reference })]);
    try {
      expect((await one.exec('echo mine > /etc/kept.txt && echo changed >> README.md && mkdir -p /opt/new && echo ok')).stdout).toBe(
        'ok\n',
      );
      expect((await two.exec('cat /etc/kept.txt; [ -e /opt/new ] || echo no-new; git status --short')).stdout).toBe('kept\nno-new\n');
      expect(await one.diff()).toContain('+changed');
      const entries = readdirSync(cacheDir).filter((name) => !name.startsWith('.'));
      expect(entries).toHaveLength(1);
      expect(readFileSync(join(cacheDir, entries[0]!, 'rootfs', 'etc', 'kept.txt'), 'utf8')).toBe('kept\n');
      // The image's setuid file lost the bit in the cache (its files belong to the sandbox user on the host).
      expect(statSync(join(cacheDir, entries[0]!, 'rootfs', 'usr', 'bin', 'setuid-tool')).mode & 0o7777).toBe(0o755);
    } finally {
      await Promise.all([one.close(), two.close()]);
    }
  });

  it('pulls an image once for concurrent creates, keys the cache by manifest digest, and reuses it from disk in a new provider', async () => {
    const fresh = join(scratch.dir, 'cache-concurrent');
    const first = make({ imageCacheDir: fresh });
    const before = skopeo.calls().filter((call) => call === 'copy').length;
    const sandboxes = await Promise.all([1, 2, 3].map(() => first.create({ image: image.reference })));
    await Promise.all(sandboxes.map((sandbox) => sandbox.close()));
    expect(skopeo.calls().filter((call) => call === 'copy').length - before).toBe(1);
    // Another tag of the same manifest, in a new provider: found on disk, nothing copied.
    const second = make({ imageCacheDir: fresh });
    const again = await second.create({ image: `oci:${image.layout}:alias` });
    try {
      expect((await again.exec('cat /etc/added.txt')).stdout).toBe('added by the upper layer\n');
    } finally {
      await again.close();
    }
    expect(skopeo.calls().filter((call) => call === 'copy').length - before).toBe(1);
    expect(readdirSync(fresh).filter((name) => !name.startsWith('.'))).toHaveLength(1);
  });

  it('lets the other creates of an image finish when one of them is cancelled while the image is looked into', async () => {
    const slow = writeTinyImage(join(scratch.dir, 'slow-image'), { condaDelayS: 2 });
    const fresh = make({ imageCacheDir: join(scratch.dir, 'cache-slow') });
    const controller = new AbortController();
    const creates = [
      fresh.create({ image: slow.reference }, { signal: controller.signal }),
      fresh.create({ image: slow.reference }),
      fresh.create({ image: slow.reference }),
    ];
    // The one-off that activates conda (and sleeps in it) is running: cancel the first create now.
    await eventually(
      () => hostCommandLines().some((process) => process.cmdline.includes('profile.d/conda.sh')),
      (running) => running,
      20_000,
    );
    controller.abort();
    const [cancelled, ...others] = await Promise.allSettled(creates);
    const reason: unknown = cancelled?.status === 'rejected' ? cancelled.reason : undefined;
    expect(WinnowerError.isInstance(reason) && reason.code).toBe('WNW_ERR_OP_ABORTED');
    for (const other of others) {
      expect(other.status, other.status === 'rejected' ? String(other.reason) : '').toBe('fulfilled');
      if (other.status === 'fulfilled') {
        expect((await other.value.exec('echo "$CONDA_DEFAULT_ENV"')).stdout).toBe('testbed\n');
        await other.value.close();
      }
    }
  });

  it("activates the image's conda environment `testbed` for every command, unless told not to", async () => {
    const sandbox = await provider.create({ image: image.reference });
    try {
      expect((await sandbox.exec('echo "$CONDA_DEFAULT_ENV"; in-testbed')).stdout).toBe('testbed\nfrom the testbed environment\n');
    } finally {
      await sandbox.close();
    }
    const plain = await make({ condaEnv: false }).create({ image: image.reference });
    try {
      expect((await plain.exec('echo "[$CONDA_DEFAULT_ENV]"; command -v in-testbed || echo none')).stdout).toBe('[]\nnone\n');
    } finally {
      await plain.close();
    }
  });

  it('binds spec.mounts into the image root', async () => {
    const tools = join(scratch.dir, 'tools');
    mkdirSync(tools, { recursive: true });
    writeFileSync(join(tools, 'tool.txt'), 'from the host\n');
    execFileSync('chmod', ['-R', 'a+rX', scratch.dir]);
    const sandbox = await provider.create({ image: image.reference, mounts: [{ source: tools, target: '/opt/harness' }] });
    try {
      expect((await sandbox.exec('cat /opt/harness/tool.txt; touch /opt/harness/x 2>/dev/null || echo read-only')).stdout).toBe(
        'from the host\nread-only\n',
      );
    } finally {
      await sandbox.close();
    }
  });

  it('runs a docker save archive (docker-archive:) too', async () => {
    const archive = join(scratch.dir, 'saved.tar');
    execFileSync('skopeo', ['copy', '--quiet', `oci:${image.layout}:v1`, `docker-archive:${archive}:winnower/tiny:1`]);
    const sandbox = await provider.create({ image: `docker-archive:${archive}` });
    try {
      expect((await sandbox.exec('cat /etc/added.txt; [ -e /etc/gone.txt ] || echo gone')).stdout).toBe('added by the upper layer\ngone\n');
    } finally {
      await sandbox.close();
    }
  });

  it('names a missing layout, tag or repository directory as WNW_ERR_SBX_IMAGE, a bad reference as WNW_ERR_INPUT_INVALID', async () => {
    expect(await codeOf(provider.create({ image: `oci:${join(scratch.dir, 'nowhere')}:v1` }))).toBe('WNW_ERR_SBX_IMAGE');
    expect(await codeOf(provider.create({ image: `oci:${image.layout}:no-such-tag` }))).toBe('WNW_ERR_SBX_IMAGE');
    await expect(provider.create({ image: image.reference, workdir: '/srv/repo' })).rejects.toThrow(/has no directory \/srv\/repo/);
    expect(await codeOf(provider.create({ image: image.reference, workdir: '/proc/x' }))).toBe('WNW_ERR_INPUT_INVALID');
    expect(await codeOf(provider.create({ image: 'UPPER/case' }))).toBe('WNW_ERR_INPUT_INVALID');
    expect(await codeOf(provider.create({ image: image.reference, repo: { base_commit: '--output=/tmp/x' } }))).toBe(
      'WNW_ERR_INPUT_INVALID',
    );
    expect((await provider.describe()).images).toMatchObject({
      tools: expect.stringContaining('skopeo'),
      cacheDir,
      workdir: '/testbed',
      condaEnv: 'testbed',
    });
    expect(existsSync(cacheDir)).toBe(true);
    expect(readdirSync(cacheDir).filter((name) => name.startsWith('.tmp-'))).toEqual([]);
  });
});

// Only as root does another user (the sandbox's) unpack into the cache; not an [images] test, so CI as non-root may skip it.
describe.skipIf(missing || !isRoot)('local provider with images, as root', () => {
  it('refuses a cache folder the sandbox user cannot reach, naming the folder', async () => {
    const scratch = tempDir('wnw-local-image-root-');
    const provider = createLocalProvider({ logger: quiet, imageCacheDir: join(scratch.dir, 'cache') });
    try {
      await expect(provider.create({ image: 'oci:/nowhere:v1' })).rejects.toThrow(
        /cannot pass through .*wnw-local-image-root-\w+ \(mode 700\)/,
      );
    } finally {
      await provider.close();
      scratch.remove();
    }
  });
});

const registryImage = process.env.WINNOWER_TEST_REGISTRY_IMAGE;
const registrySkip =
  missing ?? (registryImage ? undefined : 'WINNOWER_TEST_REGISTRY_IMAGE is not set (.ci/run starts a loopback registry and sets it)');

describe.skipIf(registrySkip)(
  `[images] local provider with an image from a registry${registrySkip ? ` (skipped: ${registrySkip})` : ''}`,
  () => {
    let scratch: { dir: string; remove(): void };
    let provider: SandboxProvider;
    beforeAll(() => {
      scratch = tempDir('wnw-local-image-registry-');
      chmodSync(scratch.dir, 0o711);
      provider = createLocalProvider({ logger: quiet, imageCacheDir: join(scratch.dir, 'cache') });
    });
    afterAll(async () => {
      await provider?.close();
      scratch?.remove();
    });

    it("keys the rootfs by the registry's manifest digest, so name:tag and name@digest share it", async () => {
      const inspected = JSON.parse(
        execFileSync('skopeo', ['inspect', '--tls-verify=false', `docker://${registryImage}`], { encoding: 'utf8' }),
      ) as { Digest: string };
      const byTag = await provider.create({ image: registryImage! });
      const byDigest = await provider.create({ image: `${registryImage!.replace(/:[^:/]+$/, '')}@${inspected.Digest}` });
      try {
        expect((await byTag.exec('git log --format=%s -1; python3 -c "import unittest; print(unittest.__name__)"')).stdout).toBe(
          'durations: base commit of the demo task\nunittest\n',
        );
        expect((await byDigest.exec('ls durations.py')).stdout).toBe('durations.py\n');
        expect(readdirSync(join(scratch.dir, 'cache')).filter((name) => !name.startsWith('.'))).toEqual([
          inspected.Digest.replace('sha256:', ''),
        ]);
      } finally {
        await Promise.all([byTag.close(), byDigest.close()]);
      }
    }, 120_000);
  },
);
