/**
 * Resource limits for local sandboxes: finds which cgroup controllers (v1 or v2) this process may
 * use, creates one group per sandbox under one provider group, and falls back to prlimit where no
 * controller is usable. The provider group carries the server-wide budgets (all sandboxes together:
 * processes, memory), so N runaway rollouts cannot exhaust the host's pid space or memory.
 */
import { randomBytes } from 'node:crypto';
import { readdirSync, rmdirSync } from 'node:fs';
import { mkdir, readdir, readFile, rmdir, writeFile } from 'node:fs/promises';
import { join, posix } from 'node:path';
import { isAlive } from '../../../util/process-alive.js';

export type Controller = 'memory' | 'pids' | 'cpu';
export type LimitMechanism = 'cgroup v1' | 'cgroup v2' | 'prlimit' | 'pid namespace' | 'none';

export interface SandboxLimits {
  memoryMb?: number;
  maxProcesses?: number;
  cpu?: number;
}

/** Limits on all the provider's sandboxes together (undefined: the defaults, from the host). */
export interface ProviderBudget {
  /** Processes and threads (default: half of the host's pid_max and threads-max, the smaller). */
  maxTotalProcesses?: number;
  /** Memory in MiB, tmpfs workspaces included (default: three quarters of the host's memory). */
  maxTotalMemoryMb?: number;
}

/** The budget in force, and what enforces each part. */
export interface BudgetInForce {
  processes: number;
  processesBy: LimitMechanism;
  memoryMb: number;
  memoryBy: LimitMechanism;
  /** The provider's own groups, which carry the budget (the sandboxes' groups are their children). */
  groups: string[];
}

interface ControllerHome {
  version: 1 | 2;
  /** Our provider's own group, under which every sandbox gets a child. */
  dir: string;
}

/** One sandbox's cgroups: join them before dropping privileges, remove them on close. */
export interface SandboxCgroup {
  /** `cgroup.procs` files the exec wrapper writes its pid into. */
  readonly procsFiles: string[];
  /** How many processes the kernel has killed in this sandbox for lack of memory; undefined without a memory group. */
  oomKills(): Promise<number | undefined>;
  /** Kills whatever is still in the groups and removes them. */
  remove(): Promise<void>;
}

const CONTROLLERS: Controller[] = ['memory', 'pids', 'cpu'];
const CPU_PERIOD_US = 100_000;

/** Parses /proc/self/mountinfo + /proc/self/cgroup into where each controller's groups live. */
export async function findCgroupBases(): Promise<Map<Controller, { version: 1 | 2; base: string }>> {
  const found = new Map<Controller, { version: 1 | 2; base: string }>();
  let mountinfo: string;
  let membership: string;
  try {
    [mountinfo, membership] = await Promise.all([readFile('/proc/self/mountinfo', 'utf8'), readFile('/proc/self/cgroup', 'utf8')]);
  } catch {
    return found;
  }
  const ownPath = new Map<string, string>();
  for (const line of membership.split('\n')) {
    const match = /^(\d+):([^:]*):(.*)$/.exec(line);
    if (!match) continue;
    const names = match[2] === '' ? ['<v2>'] : match[2]!.split(',');
    for (const name of names) ownPath.set(name, match[3]!);
  }
  let v2: { mountRoot: string; mountPoint: string } | undefined;
  for (const line of mountinfo.split('\n')) {
    const [left, right] = line.split(' - ');
    if (!left || !right) continue;
    const fields = left.split(' ');
    const [fsType, , superOptions = ''] = right.split(' ');
    const mountRoot = fields[3] ?? '/';
    const mountPoint = unescapeMount(fields[4] ?? '');
    if (fsType === 'cgroup2') {
      v2 ??= { mountRoot, mountPoint };
      continue;
    }
    if (fsType !== 'cgroup') continue;
    for (const option of superOptions.split(',')) {
      const controller = option as Controller;
      if (!CONTROLLERS.includes(controller) || found.has(controller)) continue;
      const own = ownPath.get(controller);
      if (own === undefined) continue;
      found.set(controller, { version: 1, base: join(mountPoint, posix.relative(mountRoot, own)) });
    }
  }
  const ownV2 = ownPath.get('<v2>');
  if (v2 && ownV2 !== undefined) {
    const base = join(v2.mountPoint, posix.relative(v2.mountRoot, ownV2));
    const available = (await readFile(join(base, 'cgroup.controllers'), 'utf8').catch(() => '')).split(/\s+/);
    for (const controller of CONTROLLERS) {
      if (!found.has(controller) && available.includes(controller)) found.set(controller, { version: 2, base });
    }
  }
  return found;
}

function unescapeMount(value: string): string {
  return value.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)));
}

/** The cgroups this provider may use; made once per provider, removed by close(). */
export class LocalCgroups {
  readonly #homes = new Map<Controller, ControllerHome>();
  #budget: BudgetInForce = { processes: 0, processesBy: 'none', memoryMb: 0, memoryBy: 'none', groups: [] };

  private constructor() {}

  /**
   * Creates our provider group under each usable controller (unusable ones are left out) and sets
   * the budget of all sandboxes on it.
   */
  static async create(budget: ProviderBudget = {}): Promise<LocalCgroups> {
    const cgroups = new LocalCgroups();
    const name = `winnower-${process.pid}-${randomBytes(3).toString('hex')}`;
    const bases = await findCgroupBases();
    const v2Dirs = new Map<string, Controller[]>();
    for (const [controller, { version, base }] of bases) {
      await removeStaleGroups(base);
      const dir = join(base, name);
      if (version === 2) {
        v2Dirs.set(dir, [...(v2Dirs.get(dir) ?? []), controller]);
        continue;
      }
      try {
        await mkdir(dir, { recursive: false });
        cgroups.#homes.set(controller, { version: 1, dir });
      } catch {
        // not writable: that limit falls back to prlimit
      }
    }
    for (const [dir, controllers] of v2Dirs) {
      const enable = controllers.map((controller) => `+${controller}`).join(' ');
      try {
        await writeFile(join(dir, '..', 'cgroup.subtree_control'), enable);
        await mkdir(dir);
        await writeFile(join(dir, 'cgroup.subtree_control'), enable);
        for (const controller of controllers) cgroups.#homes.set(controller, { version: 2, dir });
      } catch {
        await rmdir(dir).catch(() => undefined);
      }
    }
    await cgroups.#setBudget(budget);
    return cgroups;
  }

  async #setBudget(budget: ProviderBudget): Promise<void> {
    const processes = budget.maxTotalProcesses ?? (await defaultProcessBudget());
    const memoryMb = budget.maxTotalMemoryMb ?? (await defaultMemoryBudgetMb());
    const pids = this.#homes.get('pids');
    if (pids) await writeFile(join(pids.dir, 'pids.max'), String(processes));
    const memory = this.#homes.get('memory');
    if (memory)
      await writeFile(join(memory.dir, memory.version === 1 ? 'memory.limit_in_bytes' : 'memory.max'), String(memoryMb * 1024 * 1024));
    const mechanisms = this.mechanisms();
    // Without a pids group, RLIMIT_NPROC (per uid: one count for every sandbox) carries the budget.
    const groups = [...new Set([...this.#homes.values()].map((home) => home.dir))];
    this.#budget = { processes, processesBy: mechanisms.pids, memoryMb, memoryBy: memory ? mechanisms.memory : 'none', groups };
  }

  /** The limits on all sandboxes together, for describe(). */
  budget(): BudgetInForce {
    return { ...this.#budget, groups: [...this.#budget.groups] };
  }

  /** How each limit is enforced, for describe() and the start-up log. */
  mechanisms(): Record<Controller, LimitMechanism> {
    const of = (controller: Controller, fallback: LimitMechanism): LimitMechanism => {
      const home = this.#homes.get(controller);
      return home ? (home.version === 1 ? 'cgroup v1' : 'cgroup v2') : fallback;
    };
    return { memory: of('memory', 'prlimit'), pids: of('pids', 'prlimit'), cpu: of('cpu', 'none') };
  }

  /** prlimit options for the limits no cgroup enforces. */
  prlimitArgs(limits: SandboxLimits): string[] {
    const args: string[] = [];
    if (!this.#homes.has('memory') && limits.memoryMb) args.push(`--as=${limits.memoryMb * 1024 * 1024}`);
    if (!this.#homes.has('pids')) {
      // Per uid, so it counts every sandbox of this uid at once: never above the total budget.
      const nproc = Math.min(limits.maxProcesses ?? Infinity, this.#budget.processes || Infinity);
      if (Number.isFinite(nproc)) args.push(`--nproc=${nproc}`);
    }
    return args;
  }

  /** Creates and configures the groups of one sandbox. */
  async createSandboxGroup(id: string, limits: SandboxLimits): Promise<SandboxCgroup> {
    const dirs = new Map<string, 1 | 2>();
    const settings: Array<[string, string]> = [];
    const add = (controller: Controller, file: string, value: string): void => {
      const home = this.#homes.get(controller);
      if (!home) return;
      const dir = join(home.dir, id);
      dirs.set(dir, home.version);
      settings.push([join(dir, file), value]);
    };
    if (limits.memoryMb) {
      const bytes = String(limits.memoryMb * 1024 * 1024);
      const v1 = this.#homes.get('memory')?.version === 1;
      add('memory', v1 ? 'memory.limit_in_bytes' : 'memory.max', bytes);
      if (!v1) add('memory', 'memory.swap.max', '0');
    }
    if (limits.maxProcesses) add('pids', 'pids.max', String(limits.maxProcesses));
    if (limits.cpu) {
      const quota = String(Math.max(1000, Math.round(limits.cpu * CPU_PERIOD_US)));
      const v1 = this.#homes.get('cpu')?.version === 1;
      if (v1) {
        add('cpu', 'cpu.cfs_period_us', String(CPU_PERIOD_US));
        add('cpu', 'cpu.cfs_quota_us', quota);
      } else add('cpu', 'cpu.max', `${quota} ${CPU_PERIOD_US}`);
    }
    const memory = this.#homes.get('memory');
    // The kernel counts OOM kills per group: `oom_kill` in memory.oom_control (v1), memory.events (v2).
    const oomFile =
      limits.memoryMb && memory ? join(memory.dir, id, memory.version === 1 ? 'memory.oom_control' : 'memory.events') : undefined;
    const group = new CgroupDirs(dirs, oomFile);
    try {
      for (const dir of dirs.keys()) await mkdir(dir);
      for (const [file, value] of settings) await writeFile(file, value);
      if (limits.memoryMb && this.#homes.get('memory')?.version === 1) {
        // Swap accounting, where the kernel has it: keep memory+swap at the same cap.
        const memsw = join(this.#homes.get('memory')!.dir, id, 'memory.memsw.limit_in_bytes');
        await writeFile(memsw, String(limits.memoryMb * 1024 * 1024)).catch(() => undefined);
      }
    } catch (error) {
      await group.remove();
      throw error;
    }
    return group;
  }

  /** At process exit: removes whatever groups are already empty, synchronously. */
  removeSync(): void {
    for (const { dir } of this.#homes.values()) {
      for (let attempt = 0; attempt < 10; attempt += 1) {
        try {
          for (const child of readdirSync(dir, { withFileTypes: true })) if (child.isDirectory()) rmdirSync(join(dir, child.name));
          rmdirSync(dir);
          break;
        } catch {
          Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20);
        }
      }
    }
  }

  /** Removes the provider groups (sandbox groups must be gone). */
  async close(): Promise<void> {
    const dirs = new Map([...this.#homes.values()].map((home) => [home.dir, home.version]));
    this.#homes.clear();
    for (const [dir, version] of dirs) await removeGroupDir(dir, version);
  }
}

/** Half of what the kernel allows (pids and threads), so the host keeps the other half whatever the sandboxes do. */
async function defaultProcessBudget(): Promise<number> {
  const read = async (file: string): Promise<number> => Number((await readFile(file, 'utf8').catch(() => '')).trim()) || 32768;
  const [pidMax, threadsMax] = await Promise.all([read('/proc/sys/kernel/pid_max'), read('/proc/sys/kernel/threads-max')]);
  return Math.max(64, Math.floor(Math.min(pidMax, threadsMax) / 2));
}

/** Three quarters of the host's memory: sandbox memory (tmpfs workspaces included) leaves the server room. */
async function defaultMemoryBudgetMb(): Promise<number> {
  const meminfo = await readFile('/proc/meminfo', 'utf8').catch(() => '');
  const totalKb = Number(/^MemTotal:\s+(\d+) kB/m.exec(meminfo)?.[1] ?? 0);
  return totalKb > 0 ? Math.max(256, Math.floor((totalKb / 1024) * 0.75)) : 16384;
}

/** Groups left by a winnower process that died without cleaning up (empty ones only). */
async function removeStaleGroups(base: string): Promise<void> {
  const entries = await readdir(base, { withFileTypes: true }).catch(() => []);
  for (const entry of entries) {
    const match = /^winnower-(\d+)-[0-9a-f]+$/.exec(entry.name);
    if (!entry.isDirectory() || !match || isAlive(Number(match[1]))) continue;
    const dir = join(base, entry.name);
    for (const child of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
      if (child.isDirectory()) await rmdir(join(dir, child.name)).catch(() => undefined);
    }
    await rmdir(dir).catch(() => undefined);
  }
}

class CgroupDirs implements SandboxCgroup {
  readonly procsFiles: string[];
  constructor(
    readonly dirs: Map<string, 1 | 2>,
    readonly oomFile: string | undefined,
  ) {
    this.procsFiles = [...dirs.keys()].map((dir) => join(dir, 'cgroup.procs'));
  }

  async oomKills(): Promise<number | undefined> {
    if (!this.oomFile) return undefined;
    const text = await readFile(this.oomFile, 'utf8').catch(() => '');
    const match = /^oom_kill (\d+)$/m.exec(text);
    return match ? Number(match[1]) : undefined;
  }

  async remove(): Promise<void> {
    for (const [dir, version] of this.dirs) await removeGroupDir(dir, version);
  }
}

/** Kills every process still in the group (cgroup.kill on v2, one by one on v1), then rmdir. */
async function removeGroupDir(dir: string, version: 1 | 2): Promise<void> {
  for (let attempt = 0; attempt < 40; attempt += 1) {
    try {
      await rmdir(dir);
      return;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return;
      if (code !== 'EBUSY') throw error;
    }
    if (version === 2) await writeFile(join(dir, 'cgroup.kill'), '1').catch(() => undefined);
    const procs = await readFile(join(dir, 'cgroup.procs'), 'utf8').catch(() => '');
    for (const pid of procs.split('\n').filter(Boolean)) {
      try {
        process.kill(Number(pid), 'SIGKILL');
      } catch {
        // already gone
      }
    }
    await new Promise((resolve) => setTimeout(resolve, Math.min(10 * (attempt + 1), 100)));
  }
  throw new Error(`cgroup ${dir} could not be removed: processes remain`);
}
