/**
 * spec.mounts on the local provider: a host folder bound read-only (a harness CLI installed on the
 * host) or read-write (the recording proxy's socket folder), and a unix socket in it reachable from
 * inside although the sandbox has no network. Bad mounts fail at create, naming the mount.
 */
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { WinnowerError } from '../../src/errors.js';
import { createLocalProvider, type LocalProviderSettings } from '../../src/sandbox/providers/local/provider.js';
import type { SandboxSpec } from '../../src/sandbox/types.js';
import { bwrapMissing, makeTestRepo, tempDir } from './local-helpers.js';

const quiet: LocalProviderSettings['logger'] = { info: () => undefined, warn: () => undefined };
const repo = tempDir('wnw-mounts-repo-');
const { base } = makeTestRepo(repo.dir);
const host = tempDir('wnw-mounts-host-');
chmodSync(host.dir, 0o755);
const tools = join(host.dir, 'tools');
const sockets = join(host.dir, 'sockets');
mkdirSync(tools);
mkdirSync(sockets);
// The sandbox user is not root: the socket folder must be theirs to write, as the proxy makes it.
chmodSync(sockets, 0o777);
writeFileSync(join(tools, 'hello.sh'), '#!/bin/sh\necho hello from the host install\n', { mode: 0o755 });
const spec = (mounts: SandboxSpec['mounts']): SandboxSpec => ({ repo: { path: repo.dir, base_commit: base }, mounts });

describe.skipIf(bwrapMissing)('local provider: spec.mounts', () => {
  const provider = createLocalProvider({ logger: quiet });
  let server: Server | undefined;
  afterAll(async () => {
    server?.close();
    await provider.close?.();
    repo.remove();
    host.remove();
  });

  it('binds read-only by default and read-write when asked', async () => {
    const sandbox = await provider.create(
      spec([
        { source: tools, target: '/opt/harness' },
        { source: sockets, target: '/run/winnower', readOnly: false },
      ]),
    );
    try {
      const run = await sandbox.exec('/opt/harness/hello.sh');
      expect(run.stdout).toBe('hello from the host install\n');
      const write = await sandbox.exec('touch /opt/harness/x 2>&1; echo rc=$?');
      expect(write.stdout).toMatch(/Read-only file system[\s\S]*rc=1/);
      const rw = await sandbox.exec('echo from-inside > /run/winnower/note && cat /run/winnower/note');
      expect(rw.stdout).toBe('from-inside\n');
    } finally {
      await sandbox.close();
    }
  });

  it('a unix socket in a mounted folder is reachable with the network off', async () => {
    const path = join(sockets, 'proxy.sock');
    server = createServer((socket) => socket.end('pong\n'));
    await new Promise<void>((resolve) => server!.listen(path, resolve));
    chmodSync(path, 0o666);
    const sandbox = await provider.create(spec([{ source: sockets, target: '/run/winnower', readOnly: false }]));
    try {
      const script =
        "import socket; s = socket.socket(socket.AF_UNIX); s.connect('/run/winnower/proxy.sock'); print(s.recv(16).decode().strip())";
      const result = await sandbox.exec(`python3 -c "${script}"`);
      expect(result.stderr).toBe('');
      expect(result.stdout).toBe('pong\n');
      // And no TCP to the host: the network stays off.
      const tcp = await sandbox.exec('python3 -c "import socket; socket.create_connection((\'127.0.0.1\', 22), 1)" 2>&1; echo rc=$?');
      expect(tcp.stdout).toMatch(/rc=1/);
    } finally {
      await sandbox.close();
    }
  });

  it.each([
    [{ source: 'relative/path', target: '/opt/x' }, 'spec.mounts[0]: source must be an absolute host path'],
    [{ source: '/nonexistent-wnw-mount', target: '/opt/x' }, 'does not exist on the host'],
    [{ source: tools, target: '/usr/local/bin' }, 'inside a system or private folder'],
    [{ source: tools, target: '/tmp/x' }, 'inside a system or private folder'],
    [{ source: tools, target: '/' }, 'target must be an absolute path'],
    [{ source: tools, target: '/workspace/sub' }, 'overlaps the workspace'],
    [{ source: tools, target: '/opt/../usr' }, 'inside a system or private folder'],
  ])('rejects %j at create', async (mount, message) => {
    const caught = await provider.create(spec([mount])).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(WinnowerError.isInstance(caught)).toBe(true);
    expect((caught as WinnowerError).code).toBe('WNW_ERR_INPUT_INVALID');
    expect((caught as WinnowerError).message).toContain(message);
  });
});
