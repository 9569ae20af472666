/**
 * The seccomp filter of local sandboxes and the process budget of all sandboxes together.
 * The filter is checked twice: by a classic-BPF interpreter written here from the kernel's
 * documented semantics (both architectures, every branch), and by the kernel itself in a real
 * sandbox (this machine's architecture).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createLocalProvider } from '../../src/sandbox/providers/local/provider.js';
import { DENIED_SYSCALLS, seccompProgram } from '../../src/sandbox/providers/local/seccomp.js';
import type { SandboxSpec } from '../../src/sandbox/types.js';
import { bwrapMissing, localProviders, makeTestRepo, tempDir } from './local-helpers.js';

const AUDIT_ARCH = { x86_64: 0xc000003e, aarch64: 0xc00000b7, i386: 0x40000003 };
const ALLOW = 0x7fff0000;
const EPERM = 0x00050001;
const ENOSYS = 0x00050026;
const CLONE_NEWUSER = 0x10000000;

/** Runs a classic-BPF seccomp program over one struct seccomp_data (linux/filter.h semantics). */
function runFilter(program: Buffer, data: { nr: number; arch: number; args?: number[] }): number {
  const word = (offset: number): number => {
    if (offset === 0) return data.nr >>> 0;
    if (offset === 4) return data.arch >>> 0;
    if (offset >= 16 && offset < 64 && offset % 8 === 0) return (data.args?.[(offset - 16) / 8] ?? 0) >>> 0;
    if (offset >= 16 && offset < 64 && offset % 8 === 4) return 0;
    throw new Error(`load at ${offset}`);
  };
  let accumulator = 0;
  for (let pc = 0; pc * 8 < program.length; ) {
    const code = program.readUInt16LE(pc * 8);
    const jt = program.readUInt8(pc * 8 + 2);
    const jf = program.readUInt8(pc * 8 + 3);
    const k = program.readUInt32LE(pc * 8 + 4);
    if (code === 0x20) accumulator = word(k);
    else if (code === 0x06) return k;
    else if (code === 0x15) pc += accumulator === k ? jt : jf;
    else if (code === 0x35) pc += accumulator >= k ? jt : jf;
    else if (code === 0x45) pc += (accumulator & k) !== 0 ? jt : jf;
    else throw new Error(`opcode ${code.toString(16)}`);
    pc += 1;
  }
  throw new Error('fell off the end of the program');
}

describe('seccomp filter: the program', () => {
  const program = seccompProgram();

  it.skipIf(!program)('is a valid classic-BPF program the kernel accepts in size', () => {
    expect(program!.length % 8).toBe(0);
    expect(program!.length / 8).toBeLessThanOrEqual(4096);
    expect(DENIED_SYSCALLS).toEqual(
      expect.arrayContaining([
        'mount',
        'umount2',
        'pivot_root',
        'keyctl',
        'add_key',
        'request_key',
        'bpf',
        'init_module',
        'finit_module',
        'delete_module',
        'ptrace',
        'process_vm_readv',
        'process_vm_writev',
        'kexec_load',
        'perf_event_open',
        'userfaultfd',
      ]),
    );
  });

  const cases: Array<{ arch: 'x86_64' | 'aarch64'; numbers: Record<string, number> }> = [
    {
      arch: 'x86_64',
      numbers: {
        read: 0,
        write: 1,
        getpid: 39,
        mount: 165,
        umount2: 166,
        pivot_root: 155,
        ptrace: 101,
        bpf: 321,
        keyctl: 250,
        add_key: 248,
        request_key: 249,
        init_module: 175,
        finit_module: 313,
        delete_module: 176,
        kexec_load: 246,
        perf_event_open: 298,
        userfaultfd: 323,
        process_vm_readv: 310,
        process_vm_writev: 311,
        unshare: 272,
        clone: 56,
        clone3: 435,
      },
    },
    {
      arch: 'aarch64',
      numbers: {
        read: 63,
        write: 64,
        getpid: 172,
        mount: 40,
        umount2: 39,
        pivot_root: 41,
        ptrace: 117,
        bpf: 280,
        keyctl: 219,
        add_key: 217,
        request_key: 218,
        init_module: 105,
        finit_module: 273,
        delete_module: 106,
        kexec_load: 104,
        perf_event_open: 241,
        userfaultfd: 282,
        process_vm_readv: 270,
        process_vm_writev: 271,
        unshare: 97,
        clone: 220,
        clone3: 435,
      },
    },
  ];
  for (const { arch, numbers } of cases) {
    it.skipIf(!program)(`${arch}: denies the list with EPERM, new user namespaces by flag, clone3 with ENOSYS, allows the rest`, () => {
      const run = (name: string, args?: number[]): number => runFilter(program!, { nr: numbers[name]!, arch: AUDIT_ARCH[arch], args });
      for (const name of ['read', 'write', 'getpid']) expect(run(name), name).toBe(ALLOW);
      for (const name of [
        'mount',
        'umount2',
        'pivot_root',
        'ptrace',
        'bpf',
        'keyctl',
        'add_key',
        'request_key',
        'init_module',
        'finit_module',
        'delete_module',
        'kexec_load',
        'perf_event_open',
        'userfaultfd',
        'process_vm_readv',
        'process_vm_writev',
      ]) {
        expect(run(name), name).toBe(EPERM);
      }
      expect(run('clone3')).toBe(ENOSYS);
      // fork/pthread_create flags pass; CLONE_NEWUSER alone or with others does not.
      expect(run('clone', [0x01200011])).toBe(ALLOW);
      expect(run('clone', [0x003d0f00])).toBe(ALLOW);
      expect(run('clone', [CLONE_NEWUSER | 0x11])).toBe(EPERM);
      expect(run('unshare', [0x00020000])).toBe(ALLOW);
      expect(run('unshare', [CLONE_NEWUSER])).toBe(EPERM);
      expect(run('unshare', [CLONE_NEWUSER | 0x00020000])).toBe(EPERM);
    });
  }

  it.skipIf(!program)('refuses x32 calls and foreign architectures outright, so no number slips past the list', () => {
    expect(runFilter(program!, { nr: 0x40000000 + 165, arch: AUDIT_ARCH.x86_64 })).toBe(ENOSYS);
    expect(runFilter(program!, { nr: 0x40000000 + 39, arch: AUDIT_ARCH.x86_64 })).toBe(ENOSYS);
    expect(runFilter(program!, { nr: 21, arch: AUDIT_ARCH.i386 })).toBe(ENOSYS);
    expect(runFilter(program!, { nr: 20, arch: AUDIT_ARCH.i386 })).toBe(ENOSYS);
  });
});

const repo = tempDir('wnw-syscalls-repo-');
const { base } = makeTestRepo(repo.dir);
const spec: SandboxSpec = { repo: { path: repo.dir, base_commit: base } };

describe.skipIf(bwrapMissing)('seccomp filter and process budget in real sandboxes', () => {
  const { make, closeAll } = localProviders();
  afterAll(async () => {
    await closeAll();
    repo.remove();
  });

  it.skipIf(!seccompProgram())(
    'runs every command under the filter: no nested user namespace, denied calls fail',
    { timeout: 60_000 },
    async () => {
      const sandbox = await make().create(spec);
      try {
        expect((await sandbox.exec('grep Seccomp: /proc/self/status')).stdout).toMatch(/^Seccomp:\s+2$/m);
        const unshare = await sandbox.exec('unshare -U true');
        expect(unshare.exitCode).not.toBe(0);
        expect(unshare.stderr).toMatch(/Operation not permitted|No space left on device/);
        const root = await sandbox.exec('unshare -r id');
        expect(root.exitCode).not.toBe(0);
        expect(root.stdout).not.toContain('uid=0');
        const probe = [
          'import ctypes, os',
          'libc = ctypes.CDLL(None, use_errno=True)',
          'names = {"x64": {"mount": 165, "ptrace": 101, "bpf": 321, "keyctl": 250, "init_module": 175, "userfaultfd": 323, "perf_event_open": 298, "clone3": 435},',
          '         "arm64": {"mount": 40, "ptrace": 117, "bpf": 280, "keyctl": 219, "init_module": 105, "userfaultfd": 282, "perf_event_open": 241, "clone3": 435}}',
          `for name, nr in names["${process.arch}"].items():`,
          '    ctypes.set_errno(0)',
          '    result = libc.syscall(nr, 0, 0, 0, 0, 0, 0)',
          '    print(name, result, os.strerror(ctypes.get_errno()))',
        ].join('\n');
        const denied = await sandbox.exec('python3 -', { stdin: probe });
        expect(denied.stderr).toBe('');
        const lines = Object.fromEntries(
          denied.stdout
            .trim()
            .split('\n')
            .map((line) => [line.split(' ')[0], line.slice(line.indexOf(' ') + 1)]),
        );
        for (const name of ['mount', 'ptrace', 'bpf', 'keyctl', 'init_module', 'userfaultfd', 'perf_event_open'])
          expect(lines[name], name).toBe('-1 Operation not permitted');
        expect(lines.clone3).toBe('-1 Function not implemented');
      } finally {
        await sandbox.close();
      }
    },
  );

  it('still runs normal work: git, python3 with threads and processes, bash pipelines', { timeout: 60_000 }, async () => {
    const sandbox = await make().create(spec);
    try {
      const work = await sandbox.exec(
        [
          'set -e',
          'git -c user.name=a -c user.email=a@b commit -q --allow-empty -m step && git log --oneline | wc -l',
          "python3 -c \"import threading, subprocess; t = threading.Thread(target=print, args=('thread',)); t.start(); t.join(); print(subprocess.run(['echo', 'child'], capture_output=True, text=True).stdout.strip())\"",
          'python3 -c "import multiprocessing as m; print(sum(m.Pool(2).map(abs, [-1, -2, -3])))"',
          'seq 1 100 | grep 7 | sort -r | head -n 2 | tr "\\n" " "; echo',
          'echo "$(echo nested $(echo subshells))" & wait',
        ].join('\n'),
      );
      expect(work.stderr).toBe('');
      expect(work.stdout).toBe('2\nthread\nchild\n6\n97 87 \nnested subshells\n');
      expect(work.exitCode).toBe(0);
    } finally {
      await sandbox.close();
    }
  });

  it('bounds the processes of all sandboxes together: two bounded fork bombs share one budget', { timeout: 60_000 }, async (context) => {
    const budget = 60;
    const provider = make({ maxTotalProcesses: budget });
    const description = await provider.describe();
    const limits = description.limits as Record<string, unknown>;
    expect(limits.allSandboxes).toMatchObject({ processes: budget });
    if (!String(limits.pids).startsWith('cgroup'))
      context.skip(`no cgroup pids controller here (limits: ${JSON.stringify(limits)}); the budget is RLIMIT_NPROC of the sandbox uid`);
    const group = providerPidsGroup(limits);
    expect(readFileSync(join(group, 'pids.max'), 'utf8').trim()).toBe(String(budget));
    const sandboxes = await Promise.all([1, 2].map(() => provider.create({ ...spec, maxProcesses: 50 })));
    try {
      // Each tries 45 children that stay alive a while: under 50 per sandbox, but 90 together.
      const bomb = [
        'import os, time',
        'started = 0',
        'for _ in range(45):',
        '    try:',
        '        pid = os.fork()',
        '    except OSError:',
        '        break',
        '    if pid == 0:',
        '        time.sleep(4)',
        '        os._exit(0)',
        '    started += 1',
        'print(started, flush=True)',
        'for _ in range(started):',
        '    os.wait()',
      ].join('\n');
      let peak = 0;
      const sampler = setInterval(() => {
        peak = Math.max(peak, Number(readFileSync(join(group, 'pids.current'), 'utf8')));
      }, 50);
      const results = await Promise.all(sandboxes.map((sandbox) => sandbox.exec('python3 -', { stdin: bomb, timeoutMs: 30_000 })));
      clearInterval(sampler);
      const started = results.map((result) => Number(result.stdout.trim()));
      expect(started.every((count) => count > 0 && count <= 45)).toBe(true);
      expect(started[0]! + started[1]!).toBeLessThan(budget);
      expect(peak).toBeLessThanOrEqual(budget);
      // The budget is free again once the bombs are gone.
      for (const sandbox of sandboxes) expect((await sandbox.exec('echo fine')).stdout).toBe('fine\n');
    } finally {
      await Promise.all(sandboxes.map((sandbox) => sandbox.close()));
    }
  });

  it('refuses a budget that is not a positive integer, naming the setting', () => {
    expect(() => createLocalProvider({ maxTotalProcesses: 0 })).toThrow(/sandbox\.settings\.maxTotalProcesses/);
    expect(() => createLocalProvider({ maxTotalMemoryMb: 1.5 })).toThrow(/sandbox\.settings\.maxTotalMemoryMb/);
  });
});

/** The provider's own group that holds pids.max (describe() names the provider's groups). */
function providerPidsGroup(limits: Record<string, unknown>): string {
  const groups = (limits.allSandboxes as { groups: string[] }).groups;
  const dir = groups.find((group) => existsSync(join(group, 'pids.max')));
  if (!dir) throw new Error(`no pids group among ${groups.join(', ')}`);
  return dir;
}
