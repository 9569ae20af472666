/**
 * The host files a harness rollout binds into its sandbox (the loopback forwarder, the node
 * binary, the model proxy's socket folders), in one runtime folder per process that the sandbox
 * user can reach. The checkout may sit under a mode-0700 folder (`mktemp -d`, /root, a private
 * $HOME), and so may node (nvm under /root) or TMPDIR: the sandbox's uid, not ours, opens the bind
 * sources, and it must pass through every folder above them. So the forwarder is copied here, node
 * is linked or copied here when its own folders are closed, and the proxies' sockets go here. The
 * folder is made under TMPDIR, else /tmp, /var/tmp or /dev/shm (the first the sandbox user can
 * pass through), mode 0755, and removed when the process exits (or, after a kill, by the next
 * process that makes one).
 */
import { chmodSync, copyFileSync, linkSync, mkdtempSync, lstatSync, readdirSync, realpathSync, rmSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { wnwError } from '../../errors.js';
import { onProcessExit } from '../../sandbox/lifecycle.js';
import { isAlive } from '../../util/process-alive.js';
import { describeBlocker, findBlocker, firstReachable, sandboxUser, userLabel, type PathUser } from '../../sandbox/reachable.js';
import { harnessesDir } from './harness-definition.js';

export interface HarnessRuntime {
  /** The runtime folder: the proxies' socket folders are made in it. */
  readonly dir: string;
  /** The loopback forwarder (a copy of config/harnesses/loopback-forwarder.mjs). */
  readonly forwarder: string;
  /** The node binary the sandbox runs the forwarder with (this process's, or a link or copy of it). */
  readonly node: string;
}

const FORWARDER = 'loopback-forwarder.mjs';
let prepared: HarnessRuntime | undefined;

/** The runtime folder and its files, made on first use; WNW_ERR_SBX_UNAVAILABLE naming the folder and the fix when no folder will do. */
export function harnessRuntime(): HarnessRuntime {
  prepared ??= prepareRuntime(sandboxUser());
  return prepared;
}

/** Exported for tests: the runtime for `user`, under the first of `parents` it can reach. */
export function prepareRuntime(user: PathUser, parents = [tmpdir(), '/tmp', '/var/tmp', '/dev/shm']): HarnessRuntime {
  const { dir: parent, passedOver } = firstReachable(parents, user);
  if (!parent) {
    const closed = passedOver[0]!;
    const { where, fix } = describeBlocker(closed.blocker);
    throw wnwError(
      'WNW_ERR_SBX_UNAVAILABLE',
      `no folder for the files harness rollouts bind into sandboxes: ${userLabel(user)} cannot pass through ${where}, above ${closed.dir}; run \`${fix}\`, or set TMPDIR to a folder every user can pass through`,
      {
        details: { folder: closed.blocker.folder },
      },
    );
  }
  removeStale(parent);
  const dir = mkdtempSync(join(parent, `winnower-run-${process.pid}-`));
  chmodSync(dir, 0o755);
  onProcessExit(() => rmSync(dir, { recursive: true, force: true }));
  const forwarder = join(dir, FORWARDER);
  copyFileSync(join(harnessesDir(), FORWARDER), forwarder);
  chmodSync(forwarder, 0o644);
  return { dir, forwarder, node: reachableNode(dir, user) };
}

/** This process's node binary where the sandbox user can run it: in place, else a hard link or a copy in `dir`. */
function reachableNode(dir: string, user: PathUser): string {
  const node = realpathSync(process.execPath);
  if (!findBlocker(node, user, 'rx')) return node;
  const staged = join(dir, 'node');
  try {
    linkSync(node, staged);
    // A link shares the file's mode: usable only if the binary itself lets the user read and run it.
    if (!findBlocker(staged, user, 'rx')) return staged;
    unlinkSync(staged);
  } catch {
    // another filesystem, or links not allowed: copy
  }
  copyFileSync(node, staged);
  chmodSync(staged, 0o755);
  return staged;
}

/** Runtime folders of winnower processes that died without their exit hook: ours, that pid gone. */
function removeStale(parent: string): void {
  const uid = process.getuid?.();
  let entries: string[];
  try {
    entries = readdirSync(parent);
  } catch {
    return;
  }
  for (const name of entries) {
    const match = /^winnower-run-(\d+)-[A-Za-z0-9]{6}$/.exec(name);
    if (!match || isAlive(Number(match[1]))) continue;
    const dir = join(parent, name);
    try {
      const info = lstatSync(dir);
      if (info.isDirectory() && info.uid === uid) rmSync(dir, { recursive: true, force: true });
    } catch {
      // gone meanwhile, or not ours to remove
    }
  }
}
