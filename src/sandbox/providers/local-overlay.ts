/**
 * Workspaces of local sandboxes: a kernel overlayfs over the shared, immutable base snapshot,
 * mounted unprivileged inside a small "holder" process's own user and mount namespaces (so the
 * mount never shows in the host's mount table and disappears with the holder), or a plain copy
 * where overlay is unavailable.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { chmod, chown, lstat, mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { HOST_PATH, runHostCommand, tail } from './local-host-command.js';

export type WorkspaceMode = 'overlay' | 'copy';

export interface Owner {
  uid: number;
  gid: number;
}

export interface Workspace {
  readonly mode: WorkspaceMode;
  /** Host path to bind at the sandbox's workdir (seen through the holder's mount namespace). */
  readonly hostPath: string;
  /** The holder whose namespaces each exec enters (overlay only). */
  readonly holderPid: number | undefined;
  /** False once the holder has died: the workspace is gone. */
  alive(): boolean;
  /** Stops the holder (the mount goes with it). The folders are removed by removeTree. */
  close(): Promise<void>;
  /** SIGKILLs the holder at once (process exit); close() still reaps it. */
  killNow(): void;
}

export interface WorkspaceTools {
  unshare: string;
  /** Owner of the files (the unprivileged sandbox user); undefined: the current user. */
  owner: Owner | undefined;
}

// Runs inside `unshare --user --map-root-user --mount`: mount, say so, then wait for stdin's EOF
// (the provider closing it, or this process dying) and exit, which releases the mount.
const HOLDER_SCRIPT = 'mount -t overlay overlay -o "lowerdir=$1,upperdir=$2,workdir=$3" "$4" || exit 1; echo ready; read -r _; exit 0';
const HOLDER_START_TIMEOUT_MS = 10_000;

/** Creates folders owned by the sandbox user. */
export async function makeOwnedDirs(dirs: string[], owner: Owner | undefined, mode = 0o755): Promise<void> {
  for (const dir of dirs) {
    await mkdir(dir, { recursive: true, mode });
    await chmod(dir, mode);
    if (owner) await chown(dir, owner.uid, owner.gid);
  }
}

/** Mounts an overlay of `lowerDir` at `<sandboxDir>/merged` inside a new holder process. */
export async function createOverlayWorkspace(sandboxDir: string, lowerDir: string, tools: WorkspaceTools): Promise<Workspace> {
  const [upper, work, merged] = ['upper', 'work', 'merged'].map((name) => join(sandboxDir, name)) as [string, string, string];
  await makeOwnedDirs([upper, work, merged], tools.owner);
  const holder = spawn(tools.unshare, ['--user', '--map-root-user', '--mount', '--propagation', 'private', 'sh', '-c', HOLDER_SCRIPT, 'holder', lowerDir, upper, work, merged], {
    env: { PATH: HOST_PATH },
    uid: tools.owner?.uid,
    gid: tools.owner?.gid,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  await waitReady(holder);
  return new OverlayWorkspace(holder, merged);
}

class OverlayWorkspace implements Workspace {
  readonly mode = 'overlay' as const;
  #exited: Promise<void>;
  #alive = true;

  constructor(
    readonly holder: ChildProcess,
    readonly hostPath: string,
  ) {
    this.#exited = new Promise<void>((resolve) => {
      if (holder.exitCode !== null || holder.signalCode !== null) resolve();
      holder.once('exit', () => resolve());
    }).then(() => {
      this.#alive = false;
    });
  }

  get holderPid(): number | undefined {
    return this.holder.pid;
  }

  alive(): boolean {
    return this.#alive;
  }

  killNow(): void {
    if (this.#alive) this.holder.kill('SIGKILL');
  }

  async close(): Promise<void> {
    this.killNow();
    await this.#exited;
    for (const stream of this.holder.stdio) stream?.destroy();
  }
}

function waitReady(holder: ChildProcess): Promise<void> {
  return new Promise((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    const onStdout = (chunk: Buffer): void => {
      stdout += chunk.toString('utf8');
      if (!stdout.includes('ready\n')) return;
      cleanup();
      resolve();
    };
    const onStderr = (chunk: Buffer): void => {
      stderr += chunk.toString('utf8');
    };
    const fail = (message: string): void => {
      cleanup();
      holder.kill('SIGKILL');
      reject(new Error(`${message}${stderr ? `: ${tail(stderr)}` : ''}`));
    };
    const onError = (error: Error): void => fail(`overlay holder could not start (${error.message})`);
    const onExit = (code: number | null, signal: NodeJS.Signals | null): void => fail(`overlay mount failed (exit ${code ?? signal})`);
    const timer = setTimeout(() => fail('overlay holder did not start in time'), HOLDER_START_TIMEOUT_MS);
    const cleanup = (): void => {
      clearTimeout(timer);
      holder.stdout!.off('data', onStdout);
      holder.off('error', onError);
      holder.off('exit', onExit);
    };
    holder.stdout!.on('data', onStdout);
    holder.stderr!.on('data', onStderr);
    holder.stdin!.on('error', () => undefined);
    holder.on('error', onError);
    holder.on('exit', onExit);
  });
}

/** Copies the snapshot (fallback when overlay mounts are not possible on this host). */
export async function createCopyWorkspace(sandboxDir: string, lowerDir: string): Promise<Workspace> {
  const target = join(sandboxDir, 'workspace');
  const result = await runHostCommand('cp', ['-a', '--reflink=auto', '--', lowerDir, target]);
  if (result.code !== 0) throw new Error(`copying the base snapshot failed: ${tail(result.stderr)}`);
  return { mode: 'copy', hostPath: target, holderPid: undefined, alive: () => true, close: async () => undefined, killNow: () => undefined };
}

/** Removes a sandbox or snapshot folder; overlay work dirs are left mode 000 (pitfall 4). */
export async function removeTree(dir: string): Promise<void> {
  const workDir = join(dir, 'work', 'work');
  if ((await lstat(workDir).catch(() => undefined))?.isDirectory()) await chmod(workDir, 0o700).catch(() => undefined);
  try {
    await rm(dir, { recursive: true, force: true, maxRetries: 3 });
  } catch {
    // Folders the sandbox made unwritable (chmod 000) stop a non-root rm: open them up first.
    await runHostCommand('chmod', ['-R', 'u+rwX', '--', dir]);
    await rm(dir, { recursive: true, force: true, maxRetries: 3 });
  }
}
