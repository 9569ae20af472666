/**
 * The network of a sandbox that asked for one (`spec.network`): the workspace holder's own network
 * namespace (overlay.ts unshares it), which every process of the sandbox enters, joined to the
 * outside by a user-mode helper, pasta (Debian's `passt`) or slirp4netns, that turns the
 * sandbox's packets into sockets of its own on the host. Egress only: nothing is forwarded into the
 * sandbox, the host's loopback is not mapped in, and the namespace's routing table refuses
 * link-local addresses (169.254.0.0/16, the cloud metadata service) and every address of the host
 * itself, so a listener on the host (`winnower serve`, a scorer) is out of reach whatever it binds.
 * The helper runs as the sandbox's host uid, is SIGKILLed with the sandbox, and dies with this
 * process (parent-death signal) if that goes first.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { wnwError } from '../../../errors.js';
import { HOST_PATH, runHostCommand, tail } from '../../host-command.js';
import type { Owner } from './overlay.js';

export type NetworkHelperKind = 'pasta' | 'slirp4netns';
export const NETWORK_HELPERS: readonly NetworkHelperKind[] = ['pasta', 'slirp4netns'];

export interface NetworkHelper {
  kind: NetworkHelperKind;
  path: string;
}

/** What to install for networked sandboxes: pasta first (Debian's passt package), else slirp4netns. */
export const NETWORK_INSTALL_HINT = 'apt-get install -y passt iproute2 (or slirp4netns instead of passt)';

/**
 * Routes refused inside every networked sandbox, besides the host's own addresses: IPv4
 * link-local (the metadata service of every major cloud is 169.254.169.254) and AWS's IPv6
 * metadata address.
 */
export const BLOCKED_PREFIXES = ['169.254.0.0/16', 'fd00:ec2::254/128'];

/** How long the helper may take to configure the namespace (an address and a default route). */
const READY_TIMEOUT_MS = 15_000;
const READY_POLL_MS = 20;

export interface NetworkTools {
  helper: NetworkHelper;
  nsenter: string;
  /** iproute2's `ip`, which writes the blocked routes. */
  ip: string;
  /** Sets the helper's parent-death signal; without it the helper outlives a crashed server. */
  setpriv: string | undefined;
  /** The sandbox's host uid (the holder's, which owns the namespaces); undefined: ourselves. */
  owner: Owner | undefined;
}

export interface SandboxNetwork {
  readonly helper: NetworkHelperKind;
  /** The helper process, which belongs to the sandbox. */
  readonly helperPid: number | undefined;
  /** SIGKILLs the helper and waits for it. */
  close(): Promise<void>;
  /** SIGKILLs the helper at once (process exit). */
  killNow(): void;
}

/** The helper to use: the one named, or the first installed of pasta and slirp4netns. */
export function pickNetworkHelper(
  found: Partial<Record<NetworkHelperKind, string>>,
  wanted: NetworkHelperKind | 'auto' = 'auto',
): NetworkHelper | undefined {
  const kinds = wanted === 'auto' ? NETWORK_HELPERS : [wanted];
  for (const kind of kinds) {
    const path = found[kind];
    if (path) return { kind, path };
  }
  return undefined;
}

/** The helper's argv (after the optional setpriv), attached to the holder's user and network namespaces. */
export function helperArgs(helper: NetworkHelper, holderPid: number): string[] {
  if (helper.kind === 'pasta') {
    // -f: stay our child. --no-map-gw: the gateway address is the real gateway, not the host's
    // loopback. -t/-u none: no port of the host forwarded into the sandbox; -T/-U none: none of the
    // sandbox's loopback forwarded to the host's (the default, auto, would follow the host's listeners).
    return [
      helper.path,
      '--foreground',
      '--quiet',
      '--config-net',
      '--no-map-gw',
      '--tcp-ports',
      'none',
      '--udp-ports',
      'none',
      '--tcp-ns',
      'none',
      '--udp-ns',
      'none',
      String(holderPid),
    ];
  }
  // slirp4netns forwards no port unless asked through its API socket, which is not opened here.
  return [
    helper.path,
    '--configure',
    '--mtu=65520',
    '--disable-host-loopback',
    `--userns-path=/proc/${holderPid}/ns/user`,
    '--netns-type=path',
    `/proc/${holderPid}/ns/net`,
    'tap0',
  ];
}

/**
 * `ip -batch` lines for the namespace: loopback up, then an unreachable route for each blocked
 * prefix and for each address of the host (connect then fails at once with "No route to host").
 * The host's IPv6 link-local addresses are left out: they need an interface to be named, and the
 * namespace's own interface is not there yet.
 */
export function blockedRoutes(hostAddresses: string[], ipv6: boolean): string[] {
  const prefixes = [
    ...BLOCKED_PREFIXES,
    ...hostAddresses.filter((address) => !/^fe80:/i.test(address)).map((address) => `${address}/${address.includes(':') ? 128 : 32}`),
  ];
  const unique = [...new Set(prefixes)].filter((prefix) => ipv6 || !prefix.includes(':'));
  return ['link set lo up', ...unique.map((prefix) => `route add unreachable ${prefix}`)];
}

/**
 * The host's addresses now, from `ip -o addr show` output, loopback excluded (the sandbox's
 * loopback is its own). Every interface counts, up or down: the host accepts connections to the
 * address of a down bridge (docker0) all the same, and Node's networkInterfaces() leaves those out.
 */
export function parseHostAddresses(ipAddrOutput: string): string[] {
  const addresses: string[] = [];
  for (const match of ipAddrOutput.matchAll(/^\d+:\s+(\S+)\s+inet6?\s+([0-9A-Fa-f.:]+)\//gm)) {
    const [, device, address] = match as unknown as [string, string, string];
    if (device !== 'lo' && !address.startsWith('127.') && address !== '::1') addresses.push(address);
  }
  return addresses;
}

/**
 * Gives the holder's network namespace its blocked routes, then starts the helper and waits until
 * the namespace has a default route; WNW_ERR_SBX_CREATE with the helper's own words otherwise.
 */
export async function startSandboxNetwork(holderPid: number, tools: NetworkTools, signal?: AbortSignal): Promise<SandboxNetwork> {
  const listed = await runHostCommand(tools.ip, ['-o', 'addr', 'show'], { timeoutMs: 30_000, signal });
  if (listed.code !== 0)
    throw wnwError(
      'WNW_ERR_SBX_CREATE',
      `the sandbox's network could not be set up: ip addr failed: ${tail(listed.stderr) || `exit ${listed.code}`}`,
    );
  const enter = [tools.nsenter, `--target=${holderPid}`, '--user', '--net', '--preserve-credentials'];
  const routes = await runHostCommand(enter[0]!, [...enter.slice(1), tools.ip, '-batch', '-'], {
    uid: tools.owner?.uid,
    gid: tools.owner?.gid,
    input: `${blockedRoutes(parseHostAddresses(listed.stdout), existsSync('/proc/net/if_inet6')).join('\n')}\n`,
    timeoutMs: 30_000,
    signal,
  });
  if (routes.code !== 0) {
    throw wnwError(
      'WNW_ERR_SBX_CREATE',
      `the sandbox's network could not be set up: ip failed: ${tail(routes.stderr) || `exit ${routes.code}`}`,
    );
  }
  const argv = [...(tools.setpriv ? [tools.setpriv, '--pdeathsig', 'KILL', '--'] : []), ...helperArgs(tools.helper, holderPid)];
  const child = spawn(argv[0]!, argv.slice(1), {
    env: { PATH: HOST_PATH },
    uid: tools.owner?.uid,
    gid: tools.owner?.gid,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const network = new HelperProcess(tools.helper.kind, child);
  try {
    await network.ready(holderPid, signal);
  } catch (error) {
    await network.close();
    throw error;
  }
  return network;
}

class HelperProcess implements SandboxNetwork {
  readonly #child: ChildProcess;
  readonly #exited: Promise<void>;
  #stderr = '';
  #exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;

  constructor(
    readonly helper: NetworkHelperKind,
    child: ChildProcess,
  ) {
    this.#child = child;
    child.stderr!.on('data', (chunk: Buffer) => {
      this.#stderr = `${this.#stderr}${chunk.toString('utf8')}`.slice(-8000);
    });
    this.#exited = new Promise<void>((resolve) => {
      child.once('error', (error) => {
        this.#stderr ||= error.message;
        this.#exit ??= { code: null, signal: null };
        resolve();
      });
      child.once('exit', (code, exitSignal) => {
        this.#exit = { code, signal: exitSignal };
        resolve();
      });
    });
  }

  /** What the helper said, less pasta's complaint, for every line it logs, that there is no syslog. */
  #said(): string {
    return tail(
      this.#stderr
        .split('\n')
        .filter((line) => !/^Failed to send \d+ bytes to syslog/.test(line))
        .join('\n'),
    );
  }

  get helperPid(): number | undefined {
    return this.#child.pid;
  }

  /** Resolves once the namespace has a default route (the helper configured it). */
  async ready(holderPid: number, signal: AbortSignal | undefined): Promise<void> {
    const deadline = performance.now() + READY_TIMEOUT_MS;
    while (!(await hasDefaultRoute(holderPid))) {
      if (this.#exit) {
        const why = this.#said() || `exit ${this.#exit.code ?? this.#exit.signal}`;
        throw wnwError('WNW_ERR_SBX_CREATE', `the sandbox's network helper ${this.helper} failed: ${why}`, {
          details: { helper: this.helper },
        });
      }
      if (signal?.aborted) throw wnwError('WNW_ERR_OP_ABORTED', 'sandbox creation cancelled', { cause: signal.reason });
      if (performance.now() > deadline) {
        throw wnwError(
          'WNW_ERR_SBX_CREATE',
          `the sandbox's network helper ${this.helper} did not configure the network within ${READY_TIMEOUT_MS / 1000} s${this.#said() ? `: ${this.#said()}` : ''}`,
          { details: { helper: this.helper } },
        );
      }
      await new Promise((resolve) => setTimeout(resolve, READY_POLL_MS));
    }
  }

  killNow(): void {
    if (!this.#exit) this.#child.kill('SIGKILL');
  }

  async close(): Promise<void> {
    this.killNow();
    await this.#exited;
    this.#child.stderr?.destroy();
  }
}

/**
 * Whether the namespace of `pid` has a default route through an interface (not the kernel's
 * unreachable IPv6 default on lo, nor one of our unreachable routes), read from its /proc.
 */
export async function hasDefaultRoute(pid: number): Promise<boolean> {
  const [v4 = '', v6 = ''] = await Promise.all(
    [`/proc/${pid}/net/route`, `/proc/${pid}/net/ipv6_route`].map((path) => readFile(path, 'utf8').catch(() => '')),
  );
  const ipv4 = v4
    .split('\n')
    .slice(1)
    .some((line) => {
      const [iface, destination, , , , , , mask] = line.trim().split(/\s+/);
      return iface !== undefined && iface !== '*' && destination === '00000000' && mask === '00000000';
    });
  if (ipv4) return true;
  return v6.split('\n').some((line) => {
    const fields = line.trim().split(/\s+/);
    if (fields.length < 10) return false;
    const rejects = (Number.parseInt(fields[8]!, 16) & 0x0200) !== 0;
    return /^0{32}$/.test(fields[0]!) && fields[1] === '00' && fields[9] !== 'lo' && !rejects;
  });
}
