/**
 * What the local provider must keep in: network, filesystem, host processes, runaway commands.
 * Runs for real (CI is root on Debian with bubblewrap); each check looks at the host, not only at
 * what the sandbox reports. Every check runs on both ways of running commands: the resident exec
 * agent (the default) and a fresh bwrap per exec (sandbox.settings.exec: launch).
 */
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalProvider } from '../../src/sandbox/providers/local/provider.js';
import type { SandboxSpec } from '../../src/sandbox/types.js';
import { bwrapMissing, eventually, hostCommandLines, makeTestRepo, mountsMentioning, tempDir } from './local-helpers.js';

const repo = tempDir('wnw-isolation-repo-');
const { base } = makeTestRepo(repo.dir);
const spec: SandboxSpec = { repo: { path: repo.dir, base_commit: base } };
afterAll(() => repo.remove());

/** Host processes whose command line contains `marker`. */
const withMarker = (marker: string) => (): string[] =>
  hostCommandLines()
    .filter((entry) => entry.cmdline.includes(marker) && entry.pid !== process.pid)
    .map((entry) => `${entry.pid} ${entry.cmdline}`);

describe.skipIf(bwrapMissing).each(['agent', 'launch'] as const)('local sandbox isolation (exec: %s)', (execMode) => {
  const provider = createLocalProvider({ exec: execMode, logger: { info: () => undefined, warn: () => undefined } });
  let rootDir = '';
  let limits: Record<string, string> = {};
  let server: Server;
  let port = 0;

  beforeAll(async () => {
    const description = await provider.describe();
    rootDir = String(description.rootDir);
    limits = description.limits as Record<string, string>;
    server = createServer((_, response) => response.end('host secret'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    server?.close();
    await provider.close();
  });

  it("has no network unless asked, and a networked one has its own: the host loopback's server is unreachable either way", async () => {
    const probe = `exec 3<>/dev/tcp/127.0.0.1/${port} && printf 'GET / HTTP/1.0\\r\\n\\r\\n' >&3 && cat <&3`;
    const sandbox = await provider.create(spec);
    try {
      const blocked = await sandbox.exec(probe, { timeoutMs: 10_000 });
      expect(blocked.exitCode).not.toBe(0);
      expect(blocked.stdout).not.toContain('host secret');
      expect(
        (
          await sandbox.exec('cat /sys/class/net/*/operstate 2>/dev/null; ls /sys/class/net 2>/dev/null | grep -v "^lo$" || true')
        ).stdout.trim(),
      ).toBe('');
    } finally {
      await sandbox.close();
    }
    const networked = await provider.create({ ...spec, network: true });
    try {
      // Its own network namespace (test/sandbox/local-network.test.ts): the host's loopback is not its.
      expect((await networked.exec(probe, { timeoutMs: 10_000 })).stdout).not.toContain('host secret');
    } finally {
      await networked.close();
    }
  });

  it('cannot write outside its workspace, nor change the base snapshot or the source repository', async () => {
    const marker = `wnw-escape-${process.pid}`;
    const sandbox = await provider.create(spec);
    try {
      const attempts = [
        `echo x > /usr/${marker}`,
        `echo x > /etc/${marker}`,
        `echo x > /${marker}`,
        `echo x > ../${marker}`,
        `mkdir -p /root && echo x > /root/${marker}`,
        `echo x > ${repo.dir}/${marker}`,
        `ln -s /tmp/${marker} link-out && echo x > link-out`,
        `echo x > /tmp/${marker}`,
        'echo changed > README.md',
      ];
      for (const attempt of attempts) await sandbox.exec(attempt);
      expect((await sandbox.exec('cat README.md')).stdout).toBe('changed\n');
      for (const path of [`/usr/${marker}`, `/etc/${marker}`, `/${marker}`, `/root/${marker}`, `/tmp/${marker}`, join(repo.dir, marker)]) {
        expect(existsSync(path), path).toBe(false);
      }
      expect(readFileSync(join(repo.dir, 'README.md'), 'utf8')).not.toContain('changed');
      for (const snapshot of readdirSync(join(rootDir, 'snapshots'))) {
        expect(readFileSync(join(rootDir, 'snapshots', snapshot, 'tree', 'README.md'), 'utf8')).toContain('# contract');
      }
      const view = await sandbox.exec(`ls / ; test -e ${repo.dir} && echo SOURCE-VISIBLE; test -e ${rootDir} && echo ROOT-VISIBLE; true`);
      expect(view.stdout).not.toMatch(/SOURCE-VISIBLE|ROOT-VISIBLE|^root$/m);
      // Of the host's home folders nothing shows: only the sandbox's own, empty home (test/sandbox/local-home.test.ts).
      const homes = (await sandbox.exec('echo "$HOME"; find /home /root -mindepth 1 2>/dev/null; true')).stdout.trim().split('\n');
      const [home, ...found] = homes as [string, ...string[]];
      expect(found.filter((path) => path !== home && !home.startsWith(`${path}/`))).toEqual([]);
    } finally {
      await sandbox.close();
      rmSync(`/tmp/${marker}`, { force: true });
    }
  });

  it('cannot read /etc/shadow and holds no capabilities', async () => {
    const sandbox = await provider.create(spec);
    try {
      const shadow = await sandbox.exec('cat /etc/shadow');
      expect(shadow.exitCode).not.toBe(0);
      expect(shadow.stdout).toBe('');
      const status = (await sandbox.exec('grep -E "^(CapEff|CapPrm|CapBnd|NoNewPrivs|Uid)" /proc/self/status')).stdout;
      expect(status).toMatch(/CapEff:\s+0+\n/);
      expect(status).toMatch(/CapBnd:\s+0+\n/);
      expect(status).toMatch(/NoNewPrivs:\s+1/);
      expect(status).not.toMatch(/Uid:\s+0\s/);
      expect((await sandbox.exec('env | sort')).stdout).not.toMatch(/^(VITEST|NODE_OPTIONS|npm_)/m);
    } finally {
      await sandbox.close();
    }
  });

  it("gets no descriptor the server inherited without close-on-exec (a parent's pipe)", { timeout: 30_000 }, async () => {
    // A child winnower with fd 40 a pipe to this test, inherited without close-on-exec (node marks
    // the inherited fds from 0 up to its first gap close-on-exec, not one past a gap).
    const dir = tempDir('wnw-fds-');
    try {
      const script = join(dir.dir, 'child.mts');
      writeFileSync(
        script,
        [
          `import { createLocalProvider } from ${JSON.stringify(join(process.cwd(), 'src/sandbox/providers/local/provider.ts'))};`,
          `const provider = createLocalProvider({ exec: '${execMode}', logger: { info: () => undefined, warn: () => undefined } });`,
          `const sandbox = await provider.create({ repo: { path: ${JSON.stringify(repo.dir)}, base_commit: ${JSON.stringify(base)} } });`,
          `const result = await sandbox.exec('{ echo leaked >&40; } 2>/dev/null && echo "fd 40 open"; echo done');`,
          'process.stdout.write(result.stdout);',
          'await provider.close();',
        ].join('\n'),
      );
      const child = spawn('bash', ['-c', 'exec 40>&3 3>&-; exec "$0" --import tsx "$1"', process.execPath, script], {
        cwd: process.cwd(),
        stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      let leaked = '';
      child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      (child.stdio[3] as NodeJS.ReadableStream).on('data', (chunk: Buffer) => (leaked += chunk.toString()));
      const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
      expect(code, stderr).toBe(0);
      expect(stdout).toBe('done\n');
      expect(leaked).toBe('');
    } finally {
      dir.remove();
    }
  });

  it('cannot see host processes', async () => {
    const marker = '4242.123';
    const host = spawn('sleep', [marker], { stdio: 'ignore' });
    const sandbox = await provider.create(spec);
    try {
      const seen = await sandbox.exec(
        'for f in /proc/[0-9]*/cmdline; do tr "\\0" " " < "$f"; echo; done; echo "count $(ls -d /proc/[0-9]* | wc -l)"',
      );
      expect(seen.stdout).not.toContain(marker);
      expect(Number(/count (\d+)/.exec(seen.stdout)?.[1])).toBeLessThan(10);
      expect((await sandbox.exec(`kill -9 ${host.pid}`)).exitCode).not.toBe(0);
      expect(host.exitCode).toBeNull();
    } finally {
      host.kill('SIGKILL');
      await sandbox.close();
    }
  });

  it('shows no host path or host environment through its pid 1 (/proc/1/environ, /proc/1/cmdline)', async () => {
    const sandbox = await provider.create(spec);
    try {
      expect((sandbox as unknown as { execMode: string }).execMode).toBe(execMode);
      const environ = await sandbox.exec("tr '\\0' '\\n' < /proc/1/environ");
      expect(environ.exitCode).toBe(0);
      // Was PWD=<the server's working folder>, SHLVL and PATH of the launcher.
      expect(environ.stdout).toBe('');
      const cmdline = await sandbox.exec("tr '\\0' ' ' < /proc/1/cmdline");
      // pid 1 is bwrap's (a bwrap per exec) or the exec agent, whose program comes through a pipe.
      expect(cmdline.stdout).toContain(execMode === 'launch' ? 'bwrap --args' : 'winnower-exec-agent');
      for (const hostPath of [rootDir, process.cwd(), 'winnower-local-', '/sandboxes/']) expect(cmdline.stdout).not.toContain(hostPath);
    } finally {
      await sandbox.close();
    }
  });

  it('contains a fork bomb: it ends, stays under the process limit, and the host keeps working', { timeout: 30_000 }, async () => {
    const marker = 'wnw_fork_bomb_4244';
    const sandbox = await provider.create({ ...spec, maxProcesses: 64 });
    try {
      const peaks: number[] = [];
      const sampler = setInterval(() => peaks.push(withMarker(marker)().length), 100);
      const result = await sandbox.exec(`${marker}(){ ${marker} | ${marker} & }; ${marker}; sleep 3; echo survived`, { timeoutMs: 8_000 });
      clearInterval(sampler);
      expect(result.timedOut || result.exitCode !== null).toBe(true);
      if (limits.pids?.startsWith('cgroup')) expect(Math.max(0, ...peaks)).toBeLessThanOrEqual(64);
      expect(await eventually(withMarker(marker), (left) => left.length === 0)).toEqual([]);
      expect((await sandbox.exec('echo still works')).stdout).toBe('still works\n');
    } finally {
      await sandbox.close();
    }
  });

  it('contains a memory bomb under the memory limit', async (context) => {
    if (!limits.memory?.startsWith('cgroup')) context.skip(`no cgroup memory controller on this host (limits: ${JSON.stringify(limits)})`);
    const sandbox = await provider.create({ ...spec, memoryMb: 128 });
    try {
      const result = await sandbox.exec('x=$(head -c 600M /dev/zero | tr "\\0" a); echo "allocated ${#x}"', { timeoutMs: 20_000 });
      expect(result.stdout).not.toContain('allocated 629145600');
      expect(result.exitCode).not.toBe(0);
      expect((await sandbox.exec('echo fine')).stdout).toBe('fine\n');
    } finally {
      await sandbox.close();
    }
  });

  it('tells the agent when a command was killed for lack of memory, and when a SIGKILL was something else', async (context) => {
    if (!limits.memory?.startsWith('cgroup')) context.skip(`no cgroup memory controller on this host (limits: ${JSON.stringify(limits)})`);
    const sandbox = await provider.create({ ...spec, memoryMb: 64 });
    try {
      const killed = await sandbox.exec("python3 -c 'x = bytearray(300 * 1024 * 1024)'");
      expect(killed.exitCode).toBe(137);
      expect(killed.note).toBe('killed: out of memory (memory cap 64 MiB)');
      // The shell lives on: a process of the command was killed.
      const child = await sandbox.exec("python3 -c 'x = bytearray(300 * 1024 * 1024)'; echo after");
      expect(child.stdout).toBe('after\n');
      expect(child.note).toBe('a process of this command was killed: out of memory (memory cap 64 MiB)');
      const signalled = await sandbox.exec('kill -9 $$');
      expect(signalled.exitCode).toBe(137);
      expect(signalled.note).toBe('exit 137: killed by SIGKILL, not for lack of memory');
      expect((await sandbox.exec('echo fine')).note).toBeUndefined();
    } finally {
      await sandbox.close();
    }
  });

  it('kills setsid and background children on timeout, leaving no process behind', async () => {
    const marker = '4243.5';
    const sandbox = await provider.create(spec);
    try {
      const started = Date.now();
      const command = [
        `setsid sleep ${marker}1 >/dev/null 2>&1 &`,
        `(setsid sh -c "sleep ${marker}2" &)`,
        `nohup sleep ${marker}3 >/dev/null 2>&1 &`,
        `sleep ${marker}4 &`,
        `sleep ${marker}5`,
      ].join('\n');
      const result = await sandbox.exec(command, { timeoutMs: 500 });
      expect(result).toMatchObject({ timedOut: true, exitCode: null });
      expect(Date.now() - started).toBeLessThan(3000);
      expect(await eventually(withMarker(`sleep ${marker}`), (left) => left.length === 0)).toEqual([]);
    } finally {
      await sandbox.close();
    }
  });

  it('leaves no process, mount, folder or cgroup behind after 100 create/exec/close cycles', { timeout: 60_000 }, async () => {
    // Other test files may run sandboxes meanwhile: count only this provider's processes (its
    // paths appear in every launcher's and holder's command line) and this test's commands.
    const ours = (): number[] =>
      hostCommandLines()
        .filter(
          (entry) =>
            entry.pid !== process.pid &&
            (entry.cmdline.includes(rootDir) || entry.cmdline.includes('wnw-cycle') || entry.cmdline.includes('sleep 61.789')),
        )
        .map((entry) => entry.pid);
    const before = new Set(ours());
    // A Docker engine on the same host (CI runs the docker tests beside these) mounts overlay2
    // container roots in this namespace as it pleases: only the other overlays are counted.
    const hostOverlays = (): string[] => mountsMentioning('overlay').filter((line) => !line.includes('/overlay2/'));
    const overlayMounts = hostOverlays().length;
    const cycle = async (index: number): Promise<void> => {
      const sandbox = await provider.create(spec);
      try {
        const result = await sandbox.exec(`echo wnw-cycle ${index} > cycle.txt; sleep 61.789 & cat cycle.txt`);
        expect(result.stdout).toBe(`wnw-cycle ${index}\n`);
      } finally {
        await sandbox.close();
      }
    };
    const workers = Array.from({ length: 4 }, async (_, worker) => {
      for (let index = worker; index < 100; index += 4) await cycle(index);
    });
    await Promise.all(workers);
    const leftovers = await eventually(
      () => ours().filter((pid) => !before.has(pid)),
      (left) => left.length === 0,
    );
    expect(leftovers).toEqual([]);
    expect(mountsMentioning(rootDir)).toEqual([]);
    expect(hostOverlays()).toHaveLength(overlayMounts);
    expect(readdirSync(join(rootDir, 'sandboxes'))).toEqual([]);
    for (const controller of ['memory', 'pids']) {
      const groups = readFileSync('/proc/self/mountinfo', 'utf8').includes(`cgroup`) ? findProviderGroups(controller) : [];
      for (const group of groups)
        expect(
          readdirSync(group).filter((name) => name.startsWith('local-')),
          group,
        ).toEqual([]);
    }
  });
});

/** Our provider's cgroup folders (winnower-<pid>-*) under a v1 controller, if any. */
function findProviderGroups(controller: string): string[] {
  const found: string[] = [];
  const walk = (dir: string, depth: number): void => {
    if (depth > 4) return;
    for (const entry of readdirSafe(dir)) {
      const path = join(dir, entry);
      if (entry.startsWith(`winnower-${process.pid}-`)) found.push(path);
      else if (!entry.includes('.')) walk(path, depth + 1);
    }
  };
  walk(join('/sys/fs/cgroup', controller), 0);
  return found;
}

function readdirSafe(dir: string): string[] {
  try {
    return readdirSync(dir, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name);
  } catch {
    return [];
  }
}
