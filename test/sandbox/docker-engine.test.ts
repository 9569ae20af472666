/**
 * The docker provider against engines: the fake daemon always, and a real Docker engine when
 * WINNOWER_DOCKER_HOST names its socket (.ci/run starts dockerd and imports the base image; see
 * docker-targets.ts). The same assertions hold on both: this is what keeps the fake honest about
 * the engine behaviours of docs/design/03-docker-engine.md (kill race, OOM, ownership, binds).
 * With a real engine the sandbox conformance suite runs against it too; those tests carry
 * `[docker-engine]`, and .ci/run fails when it started an engine and none of them ran.
 */
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDockerProvider, type DockerProviderSettings } from '../../src/sandbox/providers/docker/provider.js';
import { writeTar } from '../../src/sandbox/providers/docker/tar.js';
import type { SandboxProvider } from '../../src/sandbox/types.js';
import { expectCode } from '../support/expect-code.js';
import { runSandboxContract } from './contract.js';
import { fakeTarget, realEngineSocket, realTarget, type DockerTarget } from './docker-targets.js';

const realSocket = realEngineSocket();
const makers: { name: string; make: () => Promise<DockerTarget> }[] = [
  { name: 'fake daemon', make: fakeTarget },
  // The tag lets .ci/run check that these ran wherever it started an engine.
  ...(realSocket ? [{ name: 'real engine [docker-engine]', make: () => realTarget(realSocket) }] : []),
];

if (realSocket) {
  let target: Promise<DockerTarget> | undefined;
  const providers: SandboxProvider[] = [];
  runSandboxContract({
    name: `docker (real engine at ${realSocket}) [docker-engine]`,
    create: async (settings) => {
      target ??= realTarget(realSocket);
      const { socketPath, contractImage } = await target;
      const provider = createDockerProvider({ socketPath, ...settings });
      providers.push(provider);
      return { provider, spec: { image: contractImage } };
    },
  });
  afterAll(async () => {
    await Promise.all(providers.map((provider) => provider.close()));
    await (await target)?.close();
  });
}

describe.each(makers)('docker provider against the $name', ({ make }) => {
  let target: DockerTarget;
  const providers: SandboxProvider[] = [];
  const provider = (settings: DockerProviderSettings = {}): SandboxProvider => {
    const made = createDockerProvider({ socketPath: target.socketPath, ...settings });
    providers.push(made);
    return made;
  };
  beforeAll(async () => {
    target = await make();
  }, 120_000);
  afterAll(async () => {
    await Promise.all(providers.map((each) => each.close()));
    await target?.close();
  });

  it('negotiates the API version with the engine and names both in describe()', async () => {
    const described = await provider().describe();
    expect(described.engine).toMatch(/^Docker \S+ \(API \d+\.\d+ to \d+\.\d+/);
    const max = /to (\d+\.\d+)/.exec(String(described.engine))?.[1] ?? '';
    expect(described.apiVersion).toBe(Number(max.split('.')[1]) > 47 ? 'v1.47' : `v${max}`);
  });

  it('labels a Tty-less exec stream raw-stream up to API 1.41, multiplexed-stream after (framed either way)', async () => {
    const sandbox = await provider().create({ image: target.contractImage });
    const agent = new Agent({ connect: { socketPath: target.socketPath } });
    try {
      const version = String((await provider().describe()).apiVersion);
      const post = (path: string, body: unknown) =>
        request(`http://docker/${version}${path}`, {
          method: 'POST',
          dispatcher: agent,
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
      const created = (await (
        await post(`/containers/${sandbox.id}/exec`, { AttachStdout: true, AttachStderr: true, Tty: false, Cmd: ['echo', 'hi'] })
      ).body.json()) as { Id: string };
      const started = await post(`/exec/${created.Id}/start`, { Detach: false, Tty: false });
      const frames = Buffer.from(await started.body.arrayBuffer());
      expect(started.headers['content-type']).toBe(
        Number(version.split('.')[1]) <= 41 ? 'application/vnd.docker.raw-stream' : 'application/vnd.docker.multiplexed-stream',
      );
      expect([...frames.subarray(0, 8)]).toEqual([1, 0, 0, 0, 0, 0, 0, 3]);
      expect(frames.subarray(8).toString()).toBe('hi\n');
    } finally {
      await agent.close();
      await sandbox.close();
    }
  });

  it('files written for a numeric user get its uid/gid from the tar headers', async (context) => {
    if (!target.real && process.getuid?.() !== 0) context.skip(); // the fake keeps owners only as root
    const sandbox = await provider({ user: '1000:1000' }).create({ image: target.contractImage });
    try {
      await sandbox.writeFile('owned.txt', 'mine\n');
      await sandbox.exec('true', { stdin: 'through an uploaded file' });
      expect((await sandbox.exec('stat -c %u:%g owned.txt')).stdout).toBe('1000:1000\n');
      expect((await sandbox.exec('cat owned.txt')).stdout).toBe('mine\n');
    } finally {
      await sandbox.close();
    }
  });

  it('docker 20.10 answers copyUIDGID with a numeric container user by a 500 (why the provider writes owners into the tar)', async () => {
    const described = await provider().describe();
    // Later engines parse a numeric uid:gid (docs/design/03-docker-engine.md#2).
    const is2010 = String(described.engine).startsWith('Docker 20.10.');
    // The container's own user is 0:0 (the sandbox user is set per exec).
    const sandbox = await provider().create({ image: target.contractImage });
    const agent = new Agent({ connect: { socketPath: target.socketPath } });
    try {
      const archive = writeTar([{ name: 'testbed/copied.txt', content: new TextEncoder().encode('x') }]);
      const response = await request(`http://docker/${String(described.apiVersion)}/containers/${sandbox.id}/archive?path=/&copyUIDGID=1`, {
        method: 'PUT',
        dispatcher: agent,
        headers: { 'content-type': 'application/x-tar' },
        body: archive,
      });
      const answer = await response.body.text();
      expect(response.statusCode).toBe(is2010 ? 500 : 200);
      if (is2010) expect(JSON.parse(answer)).toEqual({ message: 'getent unable to find entry "0:0" in passwd database' });
    } finally {
      await agent.close();
      await sandbox.close();
    }
  });

  it('runs commands as 1000:1000 by default, without capabilities, in a workdir and HOME it may write', async (context) => {
    if (!target.real && process.getuid?.() !== 0) context.skip(); // the fake switches uids only as root
    const sandbox = await provider().create({ image: target.contractImage });
    try {
      expect((await sandbox.exec('id -u; id -g; echo "$HOME"')).stdout).toBe('1000\n1000\n/tmp\n');
      expect((await sandbox.exec('stat -c %u:%g . src')).stdout).toBe('1000:1000\n1000:1000\n');
      expect(await sandbox.exec('echo new > new.txt && mkdir -p "$HOME/.cache/x" deep/er && touch deep/er/f && echo ok')).toMatchObject({
        exitCode: 0,
        stdout: 'ok\n',
      });
      // git's object files stay root's (not copied up); the user can still add objects, and repack.
      expect((await sandbox.exec('h=$(git rev-parse HEAD); stat -c %u .git/objects ".git/objects/${h:0:2}/${h:2}"')).stdout).toBe(
        '1000\n0\n',
      );
      expect(
        await sandbox.exec('git add -A && git -c user.name=a -c user.email=a@b commit -qm mine && git gc -q --prune=now && echo ok'),
      ).toMatchObject({ exitCode: 0, stdout: 'ok\n' });
      await sandbox.writeFile('made/by/upload.txt', 'x\n');
      expect((await sandbox.exec('stat -c %u:%g made made/by made/by/upload.txt && touch made/by/more')).stdout).toBe(
        '1000:1000\n1000:1000\n1000:1000\n',
      );
      if (!target.real) return;
      // The engine's own settings: no capabilities, no-new-privileges, system folders out of reach.
      expect((await sandbox.exec("grep -E '^(CapEff|NoNewPrivs)' /proc/self/status")).stdout).toBe(
        'CapEff:\t0000000000000000\nNoNewPrivs:\t1\n',
      );
      expect((await sandbox.exec('touch /usr/x 2>&1; echo "$?"')).stdout).toMatch(/Permission denied\n1\n$/);
    } finally {
      await sandbox.close();
    }
  });

  it('refuses root unless allowRoot; an explicit user wins', async (context) => {
    await expectCode(
      Promise.resolve().then(() => provider({ user: 'root' })),
      'WNW_ERR_CFG_INVALID',
    );
    if (!target.real && process.getuid?.() !== 0) context.skip();
    const root = await provider({ user: '0:0', allowRoot: true }).create({ image: target.contractImage });
    try {
      expect((await root.exec('id -u')).stdout).toBe('0\n');
      // Root keeps only what the ownership step needs (CHOWN, DAC_OVERRIDE, FOWNER = 0xb).
      if (target.real) expect((await root.exec("grep '^CapEff' /proc/self/status")).stdout).toBe('CapEff:\t000000000000000b\n');
    } finally {
      await root.close();
    }
    const other = await provider({ user: '4242:4243' }).create({ image: target.contractImage });
    try {
      await other.writeFile('mine.txt', 'x');
      expect((await other.exec('id -u; id -g; stat -c %u:%g . mine.txt; touch more && echo ok')).stdout).toBe(
        '4242\n4243\n4242:4243\n4242:4243\nok\n',
      );
    } finally {
      await other.close();
    }
  });

  it('a container killed during a command is WNW_ERR_SBX_LOST, not the command exiting 137', async () => {
    const sandbox = await provider().create({ image: target.contractImage });
    try {
      setTimeout(() => void target.kill(sandbox.id), 500);
      const error = await expectCode(sandbox.exec('sleep 5'), 'WNW_ERR_SBX_LOST');
      // Inspected while stopping, or after AutoRemove took it: either way the sandbox died.
      expect(error.message).toMatch(/stopped during the command|is gone|is not running|vanished/);
      expect(error.details).toMatchObject({ sandbox: sandbox.id, lost: true });
      await expectCode(sandbox.exec('true'), 'WNW_ERR_SBX_LOST');
    } finally {
      await sandbox.close();
    }
  });

  it('a command killed for memory exits 137 with a note, and the sandbox lives on', async () => {
    const sandbox = await provider().create({ image: target.contractImage, memoryMb: 64 });
    try {
      const result = await target.runOutOfMemory(sandbox);
      expect(result).toMatchObject({ exitCode: 137, timedOut: false });
      expect(result.stderr).toContain('killed for lack of memory');
      expect((await sandbox.exec('echo alive')).stdout).toBe('alive\n');
      // A later command that kills itself is not blamed on memory.
      const self = await sandbox.exec('kill -9 $$');
      expect(self).toMatchObject({ exitCode: 137, timedOut: false });
      expect(self.stderr).not.toContain('memory');
    } finally {
      await sandbox.close();
    }
  });

  it('a missing image is WNW_ERR_SBX_CREATE naming it, without or after a pull', async () => {
    const image = 'winnower-test/no-such-image:1';
    const pulled = await expectCode(provider().create({ image }), 'WNW_ERR_SBX_CREATE');
    expect(pulled.message).toContain(image);
    const local = await expectCode(provider({ pull: false }).create({ image }), 'WNW_ERR_SBX_CREATE');
    expect(local.message).toMatch(/not found: No such image/);
  });

  it('binds host folders read-only by default, read-write when asked', async () => {
    const ro = mkdtempSync(join(tmpdir(), 'docker-bind-ro-'));
    const rw = mkdtempSync(join(tmpdir(), 'docker-bind-rw-'));
    writeFileSync(join(ro, 'input.txt'), 'from the host\n');
    // Commands run as 1000:1000: bound folders must be open to that user (mkdtemp makes them 0700).
    chmodSync(ro, 0o755);
    chmodSync(rw, 0o777);
    const sandbox = await provider().create({
      image: target.contractImage,
      mounts: [
        { source: ro, target: '/mnt/in' },
        { source: rw, target: '/mnt/out', readOnly: false },
      ],
    });
    try {
      expect(new TextDecoder().decode(await sandbox.readFile('/mnt/in/input.txt'))).toBe('from the host\n');
      expect((await sandbox.exec('cat input.txt', { cwd: '/mnt/in' })).stdout).toBe('from the host\n');
      const refused = await expectCode(sandbox.writeFile('/mnt/in/new.txt', 'x'), 'WNW_ERR_SBX_FILE');
      expect(refused.message).toContain('read-only');
      if (target.real) expect((await sandbox.exec('touch /mnt/in/new.txt')).stderr).toContain('Read-only file system');
      await sandbox.writeFile('/mnt/out/result.txt', 'to the host\n');
      await sandbox.exec('echo made > made.txt', { cwd: '/mnt/out' });
      expect(readFileSync(join(rw, 'result.txt'), 'utf8')).toBe('to the host\n');
      expect(readFileSync(join(rw, 'made.txt'), 'utf8')).toBe('made\n');
    } finally {
      await sandbox.close();
      rmSync(ro, { recursive: true, force: true });
      rmSync(rw, { recursive: true, force: true });
    }
  });
});
