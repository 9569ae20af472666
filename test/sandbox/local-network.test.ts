/**
 * The network of local sandboxes, for real (CI is root on Debian with bubblewrap, passt and
 * slirp4netns, iproute2): a networked sandbox has its own network namespace with egress only.
 * It reaches a listener in a separate test namespace (the outside, over a veth pair), and not the
 * host's loopback (directly or through the gateway address), the host's own addresses, nor the
 * metadata address 169.254.169.254; no port reaches into it; its helper runs unprivileged and is
 * gone with it. An offline sandbox reaches nothing and starts no helper.
 */
import { spawn } from 'node:child_process';
import { readdirSync, readlinkSync, writeFileSync } from 'node:fs';
import { connect, type Server } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxProvider, SandboxSpec } from '../../src/sandbox/types.js';
import { bwrapMissing, eventually, hostCommandLines, isRoot, localProviders, makeTestRepo, tempDir } from './local-helpers.js';
import { createTestNamespace, hostListener, type TestNamespace } from './netns-helpers.js';

const repo = tempDir('wnw-network-repo-');
const { base } = makeTestRepo(repo.dir);
const spec: SandboxSpec = { repo: { path: repo.dir, base_commit: base } };
const providers = localProviders();
afterAll(async () => {
  await providers.closeAll();
  repo.remove();
});

/** A bounded TCP connect from inside the sandbox: what the peer said, then ` rc=<status>` (124: timed out). */
const probe = (address: string, port: number): string =>
  `timeout 5 bash -c 'exec 3<>/dev/tcp/${address}/${port} && cat <&3'; echo " rc=$?"`;

/** The pids of every host process in the network namespace `ns` (`net:[inode]`). */
function processesIn(ns: string): number[] {
  const pids: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (readlinkSync(`/proc/${name}/ns/net`) === ns) pids.push(Number(name));
    } catch {
      // exited meanwhile
    }
  }
  return pids;
}

/** Host processes of a network helper attached to one of `pids` (pasta names the pid, slirp4netns its /proc path). */
function helpersOf(pids: number[]): Array<{ pid: number; uid: number; cmdline: string }> {
  return hostCommandLines().filter(
    (entry) =>
      /(^|\/)(pasta|slirp4netns) /.test(entry.cmdline) &&
      pids.some((pid) => entry.cmdline.endsWith(` ${pid}`) || entry.cmdline.includes(`/proc/${pid}/ns/net`)),
  );
}

describe.skipIf(bwrapMissing || !isRoot)('local sandbox network', () => {
  let outside: TestNamespace;
  let loopback: { port: number; server: Server };
  let anyAddress: { port: number; server: Server };

  beforeAll(async () => {
    // Before any sandbox: the veth's host end is one of the host's addresses the sandbox must not reach.
    outside = await createTestNamespace('far secret');
    loopback = await hostListener('127.0.0.1', 'host secret');
    anyAddress = await hostListener('0.0.0.0', 'any secret');
  });
  afterAll(() => {
    loopback?.server.close();
    anyAddress?.server.close();
    outside?.remove();
  });

  describe.each([
    { exec: 'agent', helper: 'pasta' },
    { exec: 'launch', helper: 'pasta' },
    { exec: 'agent', helper: 'slirp4netns' },
  ] as const)('with $helper (exec: $exec)', ({ exec, helper }) => {
    let provider: SandboxProvider;
    let hostUid = -1;
    beforeAll(async () => {
      provider = providers.make({ exec, networkHelper: helper });
      hostUid = Number(((await provider.describe()).runsAs as Record<string, unknown> | undefined)?.hostUid);
    });

    it("reaches a listener in another network namespace, not the host's loopback, its addresses or 169.254.169.254", async () => {
      const sandbox = await provider.create({ ...spec, network: true });
      try {
        const far = await sandbox.exec(probe(outside.farAddress, outside.farPort), { timeoutMs: 20_000 });
        expect(far.stdout).toBe('far secret rc=0\n');
        const gateway = (await sandbox.exec("ip route show default | awk '{print $3; exit}'")).stdout.trim();
        expect(gateway).toMatch(/^[0-9.]+$/);
        // The host's loopback, straight and through the gateway address (which both helpers would map to it if asked).
        for (const address of ['127.0.0.1', gateway]) {
          const result = await sandbox.exec(probe(address, loopback.port), { timeoutMs: 20_000 });
          expect(result.stdout, address).not.toContain('host secret');
          expect(result.stdout, address).not.toContain('rc=0');
        }
        // A listener on every address of the host, through the host's end of the veth pair and its loopback.
        for (const address of [outside.hostAddress, '127.0.0.1']) {
          const result = await sandbox.exec(probe(address, anyAddress.port), { timeoutMs: 20_000 });
          expect(result.stdout, address).not.toContain('any secret');
        }
        // Refused by a route at once, not left to time out (on a cloud host it would answer).
        const metadata = await sandbox.exec(probe('169.254.169.254', 80), { timeoutMs: 20_000 });
        expect(metadata.stdout).toContain('rc=1');
        expect(metadata.stderr).toContain('No route to host');
        // The sandbox user cannot lift the block.
        const lift = await sandbox.exec('ip route del 169.254.0.0/16');
        expect(lift.exitCode).not.toBe(0);
        expect((await sandbox.exec('ip route')).stdout).toContain('unreachable 169.254.0.0/16');
      } finally {
        await sandbox.close();
      }
    });

    it('forwards no port into the sandbox: its listener is unreachable from the host', async () => {
      const sandbox = await provider.create({ ...spec, network: true });
      const port = 18_000 + (process.pid % 2000);
      const stop = new AbortController();
      let listening: () => void = () => undefined;
      const ready = new Promise<void>((resolve) => {
        listening = resolve;
      });
      try {
        const running = sandbox
          .exec(
            `python3 -c 'import socket,sys; s=socket.socket(); s.bind(("0.0.0.0", ${port})); s.listen(); print("listening", flush=True); s.accept()'`,
            {
              timeoutMs: 60_000,
              signal: stop.signal,
              onOutput: (_stream, chunk) => {
                if (Buffer.from(chunk).toString().includes('listening')) listening();
              },
            },
          )
          .catch(() => undefined);
        await ready;
        const reached = await new Promise<string>((resolve) => {
          const socket = connect(port, '127.0.0.1');
          socket.once('connect', () => {
            socket.destroy();
            resolve('connected');
          });
          socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'error'));
        });
        expect(reached).toBe('ECONNREFUSED');
        stop.abort();
        await running;
      } finally {
        await sandbox.close();
      }
    });

    it("runs its helper as the sandbox's unprivileged uid, and leaves nothing behind at close", async () => {
      const sandbox = await provider.create({ ...spec, network: true });
      let ns = '';
      let helpers: Array<{ pid: number; uid: number; cmdline: string }> = [];
      try {
        ns = (await sandbox.exec('readlink /proc/self/ns/net')).stdout.trim();
        expect(ns).toMatch(/^net:\[\d+\]$/);
        expect(ns).not.toBe(readlinkSync('/proc/self/ns/net'));
        // A short-lived child of pasta (it does some of its work inside the namespace from a clone() of itself) can be
        // listed beside it for a moment, under load: one helper is what stays.
        helpers = helpersOf(processesIn(ns));
        for (let tries = 0; helpers.length > 1 && tries < 20; tries += 1) {
          await new Promise((resolve) => setTimeout(resolve, 100));
          helpers = helpersOf(processesIn(ns));
        }
        expect(helpers.map((entry) => entry.cmdline.split(' ')[0]!.split('/').pop())).toEqual([helper]);
        expect(helpers[0]!.uid).toBe(hostUid);
        expect(hostUid).not.toBe(0);
      } finally {
        await sandbox.close();
      }
      expect(hostCommandLines().filter((entry) => helpers.some((found) => found.pid === entry.pid))).toEqual([]);
      expect(processesIn(ns)).toEqual([]);
    });
  });

  it('an offline sandbox reaches nothing, not even the outside, and starts no helper', async () => {
    const provider = providers.make();
    const sandbox = await provider.create(spec);
    try {
      for (const [address, port] of [
        [outside.farAddress, outside.farPort],
        ['127.0.0.1', loopback.port],
        [outside.hostAddress, anyAddress.port],
        ['169.254.169.254', 80],
      ] as const) {
        const result = await sandbox.exec(probe(address, port), { timeoutMs: 20_000 });
        expect(result.stdout, address).not.toMatch(/secret|rc=0/);
      }
      // Only bwrap's own loopback: no interface leads anywhere.
      expect((await sandbox.exec("ip -o link show | awk -F': ' '{print $2}'")).stdout.trim()).toBe('lo');
      const ns = (await sandbox.exec('readlink /proc/self/ns/net')).stdout.trim();
      expect(helpersOf(processesIn(ns))).toEqual([]);
    } finally {
      await sandbox.close();
    }
  });

  it('a server killed outright leaves no helper behind (it dies with its parent)', { timeout: 60_000 }, async () => {
    const dir = tempDir('wnw-network-kill-');
    try {
      const script = join(dir.dir, 'child.mts');
      writeFileSync(
        script,
        [
          `import { createLocalProvider } from ${JSON.stringify(join(process.cwd(), 'src/sandbox/providers/local/provider.ts'))};`,
          "const provider = createLocalProvider({ networkHelper: 'pasta', logger: { info: () => undefined, warn: () => undefined } });",
          `const sandbox = await provider.create({ repo: { path: ${JSON.stringify(repo.dir)}, base_commit: ${JSON.stringify(base)} }, network: true });`,
          "process.stdout.write((await sandbox.exec('readlink /proc/self/ns/net')).stdout);",
          'setInterval(() => undefined, 1000);',
        ].join('\n'),
      );
      const child = spawn(process.execPath, ['--import', 'tsx', script], { cwd: process.cwd(), stdio: ['ignore', 'pipe', 'pipe'] });
      let stderr = '';
      child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      const ns = await new Promise<string>((resolve, reject) => {
        let out = '';
        child.stdout!.on('data', (chunk: Buffer) => {
          out += chunk.toString();
          if (out.includes('\n')) resolve(out.trim());
        });
        child.once('exit', (code) => reject(new Error(`the child exited (${code}): ${stderr}`)));
      });
      const helpers = helpersOf(processesIn(ns));
      expect(helpers).toHaveLength(1);
      child.kill('SIGKILL');
      const alive = await eventually(
        () => hostCommandLines().filter((entry) => helpers.some((found) => found.pid === entry.pid)),
        (left) => left.length === 0,
        10_000,
      );
      expect(alive).toEqual([]);
      expect(
        await eventually(
          () => processesIn(ns),
          (left) => left.length === 0,
          10_000,
        ),
      ).toEqual([]);
    } finally {
      dir.remove();
    }
  });
});
