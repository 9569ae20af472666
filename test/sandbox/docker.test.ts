import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, statSync } from 'node:fs';
import { mkdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createDockerProvider, type DockerProviderSettings } from '../../src/sandbox/providers/docker/provider.js';
import type { DockerSandbox } from '../../src/sandbox/providers/docker/sandbox.js';
import { readTar } from '../../src/sandbox/providers/docker/tar.js';
import type { Sandbox, SandboxProvider } from '../../src/sandbox/types.js';
import { FakeDocker } from '../fakes/fake-docker.js';
import { expectCode } from '../support/expect-code.js';
import { createRepoImage } from '../fakes/fake-orchard.js';
import { makeContractRepo, runSandboxContract } from './contract.js';

const IMAGE = 'swebench/sweb.eval.x86_64.demo__demo-1:latest';
const CONTRACT_IMAGE = 'contract-image';
const contractImage = mkdtempSync(join(tmpdir(), 'docker-contract-image-'));
makeContractRepo(join(contractImage, 'testbed'));

let image: string;
let fake: FakeDocker;
let provider: SandboxProvider;

beforeAll(async () => {
  image = await createRepoImage({ 'a.py': 'one\ntwo\nthree\n', 'docs/readme.md': 'docs\n' });
  fake = await FakeDocker.start({
    images: { [IMAGE]: image, [CONTRACT_IMAGE]: contractImage },
    pullable: { 'registry.example/pullable:1.0': image },
    pullErrors: { 'registry.example/broken': 'manifest for registry.example/broken:latest not found: manifest unknown' },
  });
});

afterAll(async () => {
  await fake.close();
  await rm(image, { recursive: true, force: true });
  await rm(contractImage, { recursive: true, force: true });
});

afterEach(async () => {
  await provider?.close();
});

function makeProvider(settings: DockerProviderSettings = {}): SandboxProvider {
  provider = createDockerProvider({ socketPath: fake.socketPath, ...settings });
  return provider;
}

function lastBody(method: string, path: RegExp): Record<string, unknown> {
  return fake.requests.filter((request) => request.method === method && path.test(request.path)).at(-1)?.body as Record<string, unknown>;
}

let contractProvider: SandboxProvider | undefined;
runSandboxContract({
  name: 'docker (fake Docker daemon)',
  create: async (settings) => {
    if (settings) return { provider: createDockerProvider({ socketPath: fake.socketPath, ...settings }), spec: { image: CONTRACT_IMAGE } };
    contractProvider ??= createDockerProvider({ socketPath: fake.socketPath });
    return { provider: contractProvider, spec: { image: CONTRACT_IMAGE } };
  },
});

describe('docker provider: availability and settings', () => {
  it('does no I/O until first use, then reports a missing socket clearly', async () => {
    const missing = createDockerProvider({ socketPath: '/nonexistent/docker.sock' });
    const error = await expectCode(missing.create({ image: IMAGE }), 'WNW_ERR_SBX_UNAVAILABLE');
    expect(error.message).toContain('no Docker socket at /nonexistent/docker.sock');
    expect(error.message).toContain('DOCKER_HOST');
    expect((await missing.describe()).engine).toMatch(/^unavailable: /);
    await missing.close();
  });

  it('takes the socket from DOCKER_HOST (unix:// only)', async () => {
    const saved = process.env.DOCKER_HOST;
    try {
      process.env.DOCKER_HOST = `unix://${fake.socketPath}`;
      provider = createDockerProvider();
      expect(await provider.describe()).toMatchObject({
        engine: 'Docker 20.10.24-fake (API 1.12 to 1.41, linux/amd64)',
        apiVersion: 'v1.41',
        fork: expect.stringMatching(/^commit: /),
      });
      expect(provider.fork).toBeTypeOf('function');
      await provider.close();
      process.env.DOCKER_HOST = 'tcp://10.0.0.1:2375';
      provider = createDockerProvider();
      const error = await expectCode(provider.create({ image: IMAGE }), 'WNW_ERR_SBX_UNAVAILABLE');
      expect(error.message).toContain('unix://');
    } finally {
      if (saved === undefined) delete process.env.DOCKER_HOST;
      else process.env.DOCKER_HOST = saved;
    }
  });

  it('a socket with no daemon behind it is WNW_ERR_SBX_UNAVAILABLE', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dead-docker-'));
    // A daemon killed with SIGKILL leaves its socket file behind with nobody listening.
    const listenThenDie = "require('net').createServer().listen(process.argv[1], () => process.kill(process.pid, 'SIGKILL'))";
    spawnSync(process.execPath, ['-e', listenThenDie, join(dir, 'docker.sock')]);
    const error = await expectCode(
      makeProvider({ socketPath: join(dir, 'docker.sock') }).create({ image: IMAGE }),
      'WNW_ERR_SBX_UNAVAILABLE',
    );
    expect(error.message).toContain('ECONNREFUSED');
    await rm(dir, { recursive: true, force: true });
  });

  it('rejects bad settings naming the field', () => {
    expect(() => createDockerProvider({ apiVersion: 'latest' })).toThrow(/sandbox\.settings\.api_version/);
    expect(() => createDockerProvider({ socket: '/x' } as never)).toThrow(/sandbox\.settings\.socket/);
  });

  it('needs an image', async () => {
    await expectCode(makeProvider().create({ repo: { path: '/tmp/x' } }), 'WNW_ERR_SBX_UNSUPPORTED');
  });
});

describe('docker provider: containers', () => {
  it('creates a container without network and with the spec limits, then starts it', async () => {
    const sandbox = (await makeProvider({ user: '1000:1000' }).create({
      image: IMAGE,
      cpu: 1.5,
      memoryMb: 512,
      maxProcesses: 64,
      env: { A: 'b' },
      label: 'job-1',
    })) as DockerSandbox;
    const create = fake.requests.filter((request) => request.path === '/containers/create').at(-1);
    expect(create?.version).toBe('v1.41');
    expect(create?.query.name).toMatch(/^winnower-[0-9a-f]{12}$/);
    expect(create?.body).toMatchObject({
      Image: IMAGE,
      Entrypoint: ['sleep'],
      Cmd: ['infinity'],
      WorkingDir: '/testbed',
      Env: ['PYTHONDONTWRITEBYTECODE=1', 'HOME=/tmp', 'A=b'],
      // Root only for the ownership exec, with nothing but what chown -R needs.
      User: '0:0',
      NetworkDisabled: true,
      Labels: { 'winnower.sandbox': 'true', 'winnower.label': 'job-1' },
      HostConfig: {
        NetworkMode: 'none',
        Memory: 512 * 1024 * 1024,
        NanoCpus: 1_500_000_000,
        PidsLimit: 64,
        Init: true,
        SecurityOpt: ['no-new-privileges'],
        CapDrop: ['ALL'],
        CapAdd: ['CHOWN', 'DAC_OVERRIDE', 'FOWNER'],
      },
    });
    expect(fake.count('POST', new RegExp(`^/containers/${sandbox.id}/start$`))).toBe(1);
    expect(sandbox.baseCommit).toMatch(/^[0-9a-f]{40}$/);
    expect((await sandbox.exec('echo "$A"')).stdout).toBe('b\n');
    // Ownership through the tar headers: docker 20.10 answers copyUIDGID with a numeric user by a 500.
    await sandbox.writeFile('owned.txt', 'x');
    expect(fake.requests.filter((request) => request.method === 'PUT').at(-1)?.query).toEqual({ path: '/testbed' });
    if (process.getuid?.() === 0)
      expect(statSync(join(fake.rootOf(sandbox.id), 'testbed/owned.txt'))).toMatchObject({ uid: 1000, gid: 1000 });
    await sandbox.close();
  });

  it('asks for a network and a lifetime when the spec says so', async () => {
    const sandbox = await makeProvider().create({ image: IMAGE, network: true, lifetimeS: 600 });
    expect(lastBody('POST', /^\/containers\/create$/)).toMatchObject({
      NetworkDisabled: false,
      Cmd: ['600'],
      HostConfig: { NetworkMode: 'bridge' },
    });
    await sandbox.close();
  });

  it('pulls a missing image, and fails clearly when it cannot', async () => {
    const sandbox = await makeProvider().create({ image: 'registry.example/pullable:1.0' });
    expect(fake.requests.filter((request) => request.path === '/images/create').at(-1)?.query).toEqual({
      fromImage: 'registry.example/pullable:1.0',
    });
    await sandbox.close();
    const broken = await expectCode(makeProvider().create({ image: 'registry.example/broken' }), 'WNW_ERR_SBX_CREATE');
    expect(broken.message).toContain('manifest unknown');
    expect(fake.requests.filter((request) => request.path === '/images/create').at(-1)?.query).toEqual({
      fromImage: 'registry.example/broken:latest',
    });
    const unknown = await expectCode(makeProvider().create({ image: 'nobody/nothing:1' }), 'WNW_ERR_SBX_CREATE');
    expect(unknown.message).toContain('pull access denied');
    const noPull = await expectCode(makeProvider({ pull: false }).create({ image: 'nobody/nothing:2' }), 'WNW_ERR_SBX_CREATE');
    expect(noPull.message).toContain('No such image');
  });

  it('removes the container with force on close, once', async () => {
    const sandbox = await makeProvider().create({ image: IMAGE });
    await Promise.all([sandbox.close(), sandbox.close()]);
    await sandbox.close();
    const deletes = fake.requests.filter((request) => request.method === 'DELETE' && request.path === `/containers/${sandbox.id}`);
    expect(deletes).toHaveLength(1);
    expect(deletes[0]?.query).toEqual({ force: 'true', v: 'true' });
    expect(fake.containers.has(sandbox.id)).toBe(false);
  });

  it('provider.close() removes what is still open', async () => {
    const p = makeProvider();
    const [one, two] = await Promise.all([p.create({ image: IMAGE }), p.create({ image: IMAGE })]);
    await p.close();
    expect(fake.removed).toEqual(expect.arrayContaining([one?.id, two?.id]));
    await expectCode(p.create({ image: IMAGE }), 'WNW_ERR_SBX_CLOSED');
  });

  it('removes the container when it cannot be started', async () => {
    fake.inject({ method: 'POST', path: /\/start$/, fault: '500', times: 1 });
    const error = await expectCode(makeProvider().create({ image: IMAGE }), 'WNW_ERR_SBX_UPSTREAM');
    expect(error.details.status).toBe(500);
    const created = fake.requests.filter((request) => request.path === '/containers/create').length;
    expect(fake.removed.length).toBeGreaterThan(0);
    expect(created).toBeGreaterThan(0);
  });
});

describe('docker provider: exec and files', () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await createDockerProvider({ socketPath: fake.socketPath }).create({ image: IMAGE });
  });
  afterAll(async () => sandbox.close());

  it('creates the exec under timeout -s KILL in bash, in the workdir, with env', async () => {
    const result = await sandbox.exec(`echo "$X it's"; echo oops >&2; exit 5`, { env: { X: 'y' }, timeoutMs: 1_500 });
    expect(result).toMatchObject({ exitCode: 5, stdout: "y it's\n", stderr: 'oops\n', timedOut: false, truncated: false });
    const body = lastBody('POST', /^\/containers\/[^/]+\/exec$/);
    expect(body).toMatchObject({
      AttachStdin: false,
      AttachStdout: true,
      AttachStderr: true,
      Tty: false,
      Cmd: ['timeout', '-s', 'KILL', '1.5', 'bash', '-c', `echo "$X it's"; echo oops >&2; exit 5`],
      Env: ['X=y'],
      WorkingDir: '/testbed',
    });
    expect(lastBody('POST', /^\/exec\/[^/]+\/start$/)).toEqual({ Detach: false, Tty: false });
  });

  it('decodes interleaved, large and binary-ish output', async () => {
    const result = await sandbox.exec("for i in 1 2 3; do echo out$i; echo err$i >&2; done; head -c 300000 /dev/zero | tr '\\0' z");
    expect(result.stdout.startsWith('out1\nout2\nout3\n')).toBe(true);
    expect(result.stdout.length).toBe(15 + 300_000);
    expect(result.stderr).toBe('err1\nerr2\nerr3\n');
  });

  it('reports a timeout even when a setsid child keeps the stream open', async () => {
    const started = Date.now();
    const result = await sandbox.exec('echo begun; setsid sleep 4 & sleep 20', { timeoutMs: 500 });
    expect(result).toMatchObject({ timedOut: true, exitCode: null, stdout: 'begun\n' });
    expect(Date.now() - started).toBeLessThan(4_000);
  });

  it('keeps a command that exits 137 by itself apart from a timeout', async () => {
    expect(await sandbox.exec('kill -9 $$')).toMatchObject({ exitCode: 137, timedOut: false });
  });

  it('writes files through a tar into their folder (the nearest existing one) and reads them back from the archive endpoint', async () => {
    await sandbox.writeFile('new/dir/f.bin', Uint8Array.from([0, 255, 10]));
    const puts = fake.requests.filter((request) => request.method === 'PUT');
    expect(puts.slice(-2).map((put) => put.query)).toEqual([{ path: '/testbed/new/dir' }, { path: '/testbed' }]);
    // The missing folders travel in the tar, so they are the sandbox user's, not the engine's root's.
    if (process.getuid?.() === 0)
      for (const made of ['new', 'new/dir', 'new/dir/f.bin'])
        expect(statSync(join(fake.rootOf(sandbox.id), 'testbed', made))).toMatchObject({ uid: 1000, gid: 1000 });
    expect((await sandbox.exec('touch new/dir/g && echo made')).stdout).toBe('made\n');
    expect(await readFile(join(fake.rootOf(sandbox.id), 'testbed/new/dir/f.bin'))).toEqual(Buffer.from([0, 255, 10]));
    expect(await sandbox.readFile('/testbed/new/dir/f.bin')).toEqual(Uint8Array.from([0, 255, 10]));
    expect(fake.requests.filter((request) => request.method === 'GET' && request.path.endsWith('/archive')).at(-1)?.query).toEqual({
      path: '/testbed/new/dir/f.bin',
    });
  });

  it('follows a symlink when reading, and refuses a directory', async () => {
    await symlink('docs/readme.md', join(fake.rootOf(sandbox.id), 'testbed/link.md'));
    expect(new TextDecoder().decode(await sandbox.readFile('link.md'))).toBe('docs\n');
    const error = await expectCode(sandbox.readFile('docs'), 'WNW_ERR_SBX_FILE');
    expect(error.message).toContain('not a regular file');
    await expectCode(sandbox.listFiles('a.py'), 'WNW_ERR_SBX_FILE');
    expect((await sandbox.listFiles('.')).find((entry) => entry.name === 'link.md')?.type).toBe('symlink');
  });

  it('a missing cwd gives the engine error as output, not a crash', async () => {
    const result = await sandbox.exec('true', { cwd: '/does/not/exist' });
    expect(result.exitCode).toBe(126);
    expect(result.stdout).toContain('chdir to cwd');
  });

  it('the archive the daemon sends is a real tar', async () => {
    const response = await fetchArchive(sandbox.id, '/testbed/docs');
    expect(readTar(response).map((entry) => entry.name)).toEqual(['docs/', 'docs/readme.md']);
  });
});

describe('docker provider: faults', () => {
  it('a 500 on exec create is WNW_ERR_SBX_UPSTREAM with the daemon message', async () => {
    const sandbox = await makeProvider().create({ image: IMAGE });
    fake.inject({ method: 'POST', path: /^\/containers\/[^/]+\/exec$/, fault: '500', times: 1 });
    const error = await expectCode(sandbox.exec('true'), 'WNW_ERR_SBX_UPSTREAM');
    expect(error.message).toBe('Docker Engine answered 500 to POST /containers/' + sandbox.id + '/exec: injected failure');
    expect(error.details).toMatchObject({ status: 500, message: 'injected failure' });
  });

  it('malformed JSON is WNW_ERR_SBX_UPSTREAM', async () => {
    fake.inject({ method: 'POST', path: /^\/containers\/create$/, fault: 'malformed', times: 1 });
    const error = await expectCode(makeProvider().create({ image: IMAGE }), 'WNW_ERR_SBX_UPSTREAM');
    expect(error.message).toContain('malformed');
  });

  it('a hanging daemon is WNW_ERR_SBX_TIMEOUT after the request deadline', async () => {
    // A deadline wide enough for the other requests (create, and the DELETE afterEach sends) on a loaded machine.
    const sandbox = await makeProvider({ requestTimeoutMs: 1_500 }).create({ image: IMAGE });
    fake.inject({ method: 'PUT', path: /\/archive$/, fault: 'hang', times: 1 });
    const started = Date.now();
    await expectCode(sandbox.writeFile('x.txt', 'x'), 'WNW_ERR_SBX_TIMEOUT');
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('a dropped exec start is an error and the exec is not created again', async () => {
    const sandbox = await makeProvider().create({ image: IMAGE });
    const before = fake.count('POST', new RegExp(`^/containers/${sandbox.id}/exec$`));
    fake.inject({ method: 'POST', path: /^\/exec\/[^/]+\/start$/, fault: 'drop', times: 1 });
    await expectCode(sandbox.exec('echo once'), 'WNW_ERR_SBX_UPSTREAM');
    expect(fake.count('POST', new RegExp(`^/containers/${sandbox.id}/exec$`)) - before).toBe(1);
  });

  // As local and orchard say it (docs/errors.md): the sandbox is gone, create a new one; every
  // later call says so at once, without asking the engine again.
  it('a container that dies mid-exec is WNW_ERR_SBX_LOST, and every later call fails alike at once', async () => {
    const sandbox = await makeProvider().create({ image: IMAGE });
    setTimeout(() => fake.killContainer(sandbox.id, { oomKilled: true }), 200);
    const error = await expectCode(sandbox.exec('sleep 5'), 'WNW_ERR_SBX_LOST');
    expect(error.message).toContain('out of memory');
    expect(error.details).toMatchObject({ sandbox: sandbox.id, lost: true });
    const asked = fake.requests.length;
    await expectCode(sandbox.exec('true'), 'WNW_ERR_SBX_LOST');
    await expectCode(sandbox.readFile('a.py'), 'WNW_ERR_SBX_LOST');
    await expectCode(sandbox.writeFile('b.py', 'x'), 'WNW_ERR_SBX_LOST');
    await expectCode(sandbox.diff(), 'WNW_ERR_SBX_LOST');
    expect(fake.requests.length).toBe(asked);
    await sandbox.close();
  });

  it('a container removed under a command (docker rm -f) is WNW_ERR_SBX_LOST', async () => {
    const sandbox = await makeProvider().create({ image: IMAGE });
    setTimeout(() => void fake.removeContainer(sandbox.id), 200);
    const error = await expectCode(sandbox.exec('sleep 5'), 'WNW_ERR_SBX_LOST');
    expect(error.details).toMatchObject({ sandbox: sandbox.id, lost: true });
    await sandbox.close();
  });

  it('a container removed between commands is WNW_ERR_SBX_LOST at the next one, with or without stdin', async () => {
    for (const stdin of [undefined, 'input']) {
      const sandbox = await makeProvider().create({ image: IMAGE });
      await fake.removeContainer(sandbox.id);
      const error = await expectCode(sandbox.exec('cat', stdin === undefined ? {} : { stdin }), 'WNW_ERR_SBX_LOST');
      expect(error.message).toContain('is gone');
      expect(error.details).toMatchObject({ sandbox: sandbox.id, lost: true });
      await sandbox.close();
    }
  });

  it('a command that exits 137 while its container runs on is an exit, not a lost sandbox', async () => {
    const sandbox = await makeProvider().create({ image: IMAGE });
    expect(await sandbox.exec('kill -9 $$')).toMatchObject({ exitCode: 137, timedOut: false });
    expect((await sandbox.exec('echo alive')).stdout).toBe('alive\n');
    await sandbox.close();
  });
});

/** GET /containers/{id}/archive straight from the fake, to check what it serves. */
async function fetchArchive(id: string, path: string): Promise<Buffer> {
  const { Client } = await import('undici');
  const client = new Client('http://docker', { socketPath: fake.socketPath });
  try {
    const response = await client.request({ method: 'GET', path: `/v1.41/containers/${id}/archive?path=${encodeURIComponent(path)}` });
    return Buffer.from(await response.body.arrayBuffer());
  } finally {
    await client.close();
  }
}

describe('docker provider: read size', () => {
  it('refuses a file larger than maxTransferBytes, and a directory, without taking in the archive', async () => {
    const sandbox = await makeProvider({ maxTransferBytes: 100_000 }).create({ image: IMAGE });
    try {
      await sandbox.writeFile('big.bin', new Uint8Array(150_000));
      const error = await expectCode(sandbox.readFile('big.bin'), 'WNW_ERR_SBX_FILE');
      expect(error.message).toMatch(/larger than 100000 bytes/);
      await sandbox.writeFile('small.bin', new Uint8Array(90_000));
      expect((await sandbox.readFile('small.bin')).length).toBe(90_000);
      expect((await expectCode(sandbox.readFile('/'), 'WNW_ERR_SBX_FILE')).message).toContain('not a regular file');
    } finally {
      await sandbox.close();
    }
  });
});

describe('docker provider: close during create', () => {
  it('removes a container whose creation finishes after the provider closed, instead of handing it out', async () => {
    const closing = makeProvider();
    const before = new Set(fake.containers.keys());
    const creating = closing.create({ image: IMAGE });
    await closing.close();
    const error = await expectCode(creating, 'WNW_ERR_SBX_CLOSED');
    expect(error.message).toContain('closed while');
    expect([...fake.containers.keys()].filter((id) => !before.has(id))).toEqual([]);
  });
});

describe('docker provider: API version', () => {
  const engines: { api: { min: string; max: string }; expected: string }[] = [
    { api: { min: '1.12', max: '1.41' }, expected: 'v1.41' }, // Debian's docker.io 20.10
    { api: { min: '1.24', max: '1.45' }, expected: 'v1.45' }, // Docker 26
    { api: { min: '1.44', max: '1.52' }, expected: 'v1.47' }, // Docker 29: no older than 1.44, and this client stops at 1.47
  ];
  it.each(engines)('negotiates $expected with an engine speaking $api.min to $api.max, once', async ({ api, expected }) => {
    const engine = await FakeDocker.start({ api, images: { [IMAGE]: image } });
    const negotiated = createDockerProvider({ socketPath: engine.socketPath });
    try {
      const sandboxes = await Promise.all([negotiated.create({ image: IMAGE }), negotiated.create({ image: IMAGE })]);
      expect(await sandboxes[0]?.exec('echo ok')).toMatchObject({ exitCode: 0, stdout: 'ok\n' });
      expect(new Set(engine.requests.filter((request) => request.version).map((request) => request.version))).toEqual(new Set([expected]));
      expect(engine.count('GET', /^\/_ping$/)).toBe(1);
      expect((await negotiated.describe()).apiVersion).toBe(expected);
    } finally {
      await negotiated.close();
      await engine.close();
    }
  });

  it('an engine outside the range this client speaks is WNW_ERR_SBX_UNAVAILABLE saying why', async () => {
    for (const [api, why] of [
      [{ min: '1.12', max: '1.24' }, 'up to 1.24, older than'],
      [{ min: '1.50', max: '1.52' }, 'from 1.50 only, newer than'],
    ] as const) {
      const engine = await FakeDocker.start({ api, images: { [IMAGE]: image } });
      try {
        const error = await expectCode(
          createDockerProvider({ socketPath: engine.socketPath }).create({ image: IMAGE }),
          'WNW_ERR_SBX_UNAVAILABLE',
        );
        expect(error.message).toContain(why);
        expect(error.retryable).toBe(false);
        expect(engine.count('POST', /^\/containers\/create$/)).toBe(0);
      } finally {
        await engine.close();
      }
    }
  });

  it('a fixed version the engine refuses is an engine error, not a rejected create', async () => {
    const error = await expectCode(makeProvider({ apiVersion: 'v1.43' }).create({ image: IMAGE }), 'WNW_ERR_SBX_UNAVAILABLE');
    expect(error.message).toContain('refuses API v1.43 (client version 1.43 is too new. Maximum supported API version is 1.41)');
    expect(error.message).toContain('leave sandbox.settings.apiVersion unset');
    expect(fake.requests.filter((request) => request.path === '/containers/create').at(-1)?.version).toBe('v1.43');
  });
});

describe('docker provider: engine behaviours of docker 20.10', () => {
  it('an exec in a container that is being killed is WNW_ERR_SBX_LOST, not an exit 126', async () => {
    const sandbox = await makeProvider().create({ image: IMAGE });
    fake.killContainer(sandbox.id, { lagMs: 2_000 });
    const error = await expectCode(sandbox.exec('echo never'), 'WNW_ERR_SBX_LOST');
    expect(error.message).toContain('is not running');
    expect(error.details).toMatchObject({ sandbox: sandbox.id, lost: true });
  });

  it('an exec in a container that has stopped is WNW_ERR_SBX_LOST (the engine answers 409)', async () => {
    const sandbox = await makeProvider().create({ image: IMAGE });
    fake.killContainer(sandbox.id, { lagMs: 0 });
    await new Promise((resolve) => setTimeout(resolve, 50));
    const error = await expectCode(sandbox.exec('echo never'), 'WNW_ERR_SBX_LOST');
    expect(error.message).toContain('is not running');
  });

  it('a missing manifest, refused before any stream, is WNW_ERR_SBX_CREATE and not retried', async () => {
    const gone = 'registry.example/gone:1';
    const engine = await FakeDocker.start({
      pullRefusals: { [gone]: { status: 404, message: `manifest for ${gone} not found: manifest unknown: manifest unknown` } },
    });
    try {
      const error = await expectCode(createDockerProvider({ socketPath: engine.socketPath }).create({ image: gone }), 'WNW_ERR_SBX_CREATE');
      expect(error.message).toBe(
        `image ${gone} not found (not on this engine, and the registry has no such image): manifest for ${gone} not found: manifest unknown: manifest unknown`,
      );
      expect(error.details).toMatchObject({ image: gone, missingImage: true, status: 404 });
      expect(error.retryable).toBe(false);
      expect(engine.count('POST', /^\/images\/create$/)).toBe(1);
    } finally {
      await engine.close();
    }
  });

  it('binds spec.mounts read-only unless asked, and checks them before any container exists', async () => {
    const source = mkdtempSync(join(tmpdir(), 'docker-bind-'));
    try {
      const sandbox = await makeProvider().create({
        image: IMAGE,
        mounts: [
          { source, target: '/opt/tool' },
          { source, target: '/mnt/out', readOnly: false },
        ],
      });
      expect(lastBody('POST', /^\/containers\/create$/)).toMatchObject({
        HostConfig: { Binds: [`${source}:/opt/tool:ro`, `${source}:/mnt/out:rw`] },
      });
      await sandbox.close();
      const before = fake.count('POST', /^\/containers\/create$/);
      for (const [mount, why] of [
        [{ source: join(source, 'missing'), target: '/opt/x' }, 'does not exist'],
        [{ source, target: '/testbed/inside' }, 'overlaps the workspace'],
        [{ source, target: '/usr/local/x' }, 'system or private folder'],
        [{ source: join(source, 'a:b'), target: '/opt/x' }, "with ':'"],
      ] as const) {
        if (mount.source.endsWith('a:b')) mkdirSync(mount.source);
        const error = await expectCode(makeProvider().create({ image: IMAGE, mounts: [mount] }), 'WNW_ERR_INPUT_INVALID');
        expect(error.message).toContain(why);
      }
      expect(fake.count('POST', /^\/containers\/create$/)).toBe(before);
    } finally {
      await rm(source, { recursive: true, force: true });
    }
  });
});

describe('docker provider: the sandbox user', () => {
  const asRoot = process.getuid?.() === 0;
  const execUsers = (id: string): unknown[] =>
    fake.requests
      .filter((request) => request.method === 'POST' && request.path === `/containers/${id}/exec`)
      .map((request) => (request.body as { User?: unknown }).User);

  it('runs every command as 1000:1000 by default, after one root exec that gives it the workdir', async () => {
    const sandbox = await makeProvider().create({ image: IMAGE });
    try {
      const rootExecs = fake.requests.filter(
        (request) => request.path === `/containers/${sandbox.id}/exec` && (request.body as { User?: string }).User === '0:0',
      );
      expect(rootExecs).toHaveLength(1);
      expect((rootExecs[0]?.body as { Cmd: string[]; WorkingDir: string }).Cmd.at(-1)).toMatch(
        /^find \. -path \.\/\.git\/objects -prune -o \\\( ! -user 1000 -o ! -group 1000 \\\) -exec chown -h 1000:1000 \{\} \+ /,
      );
      expect((rootExecs[0]?.body as { WorkingDir: string }).WorkingDir).toBe('/testbed');
      await sandbox.exec('true');
      await sandbox.diff();
      expect(execUsers(sandbox.id).filter((user) => user !== '0:0')).toEqual(expect.arrayContaining(['1000:1000']));
      expect(new Set(execUsers(sandbox.id).slice(1))).toEqual(new Set(['1000:1000']));
      if (!asRoot) return; // the fake switches uids only as root
      expect((await sandbox.exec('id -u; id -g; echo "$HOME"')).stdout).toBe('1000\n1000\n/tmp\n');
      expect((await sandbox.exec('stat -c %u:%g a.py docs/readme.md .')).stdout).toBe('1000:1000\n1000:1000\n1000:1000\n');
      // git's object files stay root's (not copied up); their folders are the user's, so git can add objects.
      expect(
        (await sandbox.exec('h=$(git rev-parse HEAD); stat -c %u .git/index .git/objects ".git/objects/${h:0:2}/${h:2}"')).stdout,
      ).toBe('1000\n1000\n0\n');
      expect(
        await sandbox.exec(
          'echo changed > a.py && mkdir -p made && touch made/x && git add -A && git -c user.name=a -c user.email=a@b commit -qm mine && git gc -q && echo ok',
        ),
      ).toMatchObject({ exitCode: 0, stdout: 'ok\n' });
      // Outside the workdir the image's root-owned files stay out of its reach.
      expect((await sandbox.exec('touch ../root-only 2>&1; echo "$?"')).stdout).toMatch(/Permission denied\n1\n$/);
    } finally {
      await sandbox.close();
    }
  });

  it('refuses root without allowRoot, naming sandbox.settings.user', () => {
    for (const user of ['0', 'root', '0:0', 'root:root', '0:1000']) {
      let error: unknown;
      try {
        createDockerProvider({ socketPath: fake.socketPath, user });
      } catch (caught) {
        error = caught;
      }
      expect(error).toMatchObject({ code: 'WNW_ERR_CFG_INVALID', details: { field: 'sandbox.settings.user' } });
      expect((error as Error).message).toContain('sandbox.settings.allowRoot');
    }
    expect(() => createDockerProvider({ user: '1000:' })).toThrow(/sandbox\.settings\.user/);
  });

  it('runs as root with allowRoot, without the ownership exec', async () => {
    const sandbox = await makeProvider({ user: '0:0', allowRoot: true }).create({ image: IMAGE });
    try {
      expect(new Set(execUsers(sandbox.id))).toEqual(new Set(['0:0']));
      expect(
        fake.requests.some(
          (request) =>
            request.path === `/containers/${sandbox.id}/exec` && String((request.body as { Cmd: string[] }).Cmd.at(-1)).includes('chown'),
        ),
      ).toBe(false);
      if (asRoot) expect((await sandbox.exec('id -u')).stdout).toBe('0\n');
    } finally {
      await sandbox.close();
    }
  });

  it('an explicit user wins, by number or by a name the image knows; a name that is uid 0 is refused', async () => {
    const named = await createRepoImage({ 'a.py': 'x\n' });
    await mkdir(join(named, 'etc'), { recursive: true });
    await writeFile(
      join(named, 'etc/passwd'),
      'root:x:0:0:root:/root:/bin/bash\ntoor:x:0:0::/root:/bin/bash\napp:x:1234:1235::/home/app:/bin/bash\n',
    );
    const engine = await FakeDocker.start({ images: { [IMAGE]: image, named } });
    try {
      const byNumber = await createDockerProvider({ socketPath: engine.socketPath, user: '4242:4243' }).create({ image: IMAGE });
      if (asRoot) expect((await byNumber.exec('id -u; id -g; stat -c %u:%g a.py')).stdout).toBe('4242\n4243\n4242:4243\n');
      await byNumber.close();
      if (!asRoot) return; // not root, the fake runs every user as its own uid: names resolve to it
      const byName = await createDockerProvider({ socketPath: engine.socketPath, user: 'app' }).create({ image: 'named' });
      // The name is resolved inside (`id -u`, as that user), then the workdir is given to its numbers.
      expect(
        engine.requests
          .filter((request) => request.path === `/containers/${byName.id}/exec`)
          .map((request) => (request.body as { Cmd: string[] }).Cmd.at(-1))[1],
      ).toContain('chown -h 1234:1235');
      expect((await byName.exec('id -u; stat -c %u:%g a.py; echo "$HOME"')).stdout).toBe('1234\n1234:1235\n/home/app\n');
      await byName.close();
      const error = await expectCode(
        createDockerProvider({ socketPath: engine.socketPath, user: 'toor' }).create({ image: 'named' }),
        'WNW_ERR_CFG_INVALID',
      );
      expect(error.message).toContain('toor is uid 0');
      expect(engine.containers.size).toBe(0);
    } finally {
      await engine.close();
      await rm(named, { recursive: true, force: true });
    }
  });

  it('a failed ownership step fails the create and removes the container', async () => {
    const engine = await FakeDocker.start({ images: { [IMAGE]: image } });
    try {
      engine.inject({ method: 'POST', path: /^\/containers\/[^/]+\/exec$/, fault: '500', times: 1 });
      await expectCode(createDockerProvider({ socketPath: engine.socketPath }).create({ image: IMAGE }), 'WNW_ERR_SBX_UPSTREAM');
      expect(engine.containers.size).toBe(0);
    } finally {
      await engine.close();
    }
  });
});
