/**
 * Base snapshots: one immutable checkout per (repository, commit), prepared once on the host and
 * shared read-only by every sandbox of that repository (the lower layer of their overlays).
 * A URL is cloned here, on the host side, never from inside a sandbox.
 */
import { createHash } from 'node:crypto';
import { mkdir, realpath, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { wnwError, WinnowerError } from '../../errors.js';
import type { RepoSource } from '../../types/task.js';
import { hostGitEnv, runHostCommand, tail, type HostCommandResult } from './local-host-command.js';
import { removeTree, type Owner } from './local-overlay.js';

// git drops GIT_CONFIG_* for the upload-pack it runs on a local source repository, whose owner
// may differ from ours ("dubious ownership"): trust it on upload-pack's own command line.
const LOCAL_UPLOAD_PACK = "--upload-pack=git -c safe.directory='*' upload-pack";

export interface Snapshot {
  /** Host folder holding the checkout (owned by the sandbox user). */
  readonly treeDir: string;
  /** Full SHA of the base commit. */
  readonly commit: string;
  /** Where it came from, for messages (URL credentials removed). */
  readonly source: string;
}

export interface SnapshotStoreOptions {
  rootDir: string;
  /** Owner to give the files (the sandbox user) when running as root. */
  owner: Owner | undefined;
  /** Refreshes the git index as seen from inside a sandbox (pitfall 3). */
  refreshIndex(treeDir: string): Promise<void>;
  cloneTimeoutMs?: number;
}

/** Prepares and caches snapshots; close() removes every one it made. */
export class SnapshotStore {
  readonly #snapshots = new Map<string, Promise<Snapshot>>();
  readonly #dirs = new Set<string>();
  #made = 0;
  #closed = false;

  constructor(readonly options: SnapshotStoreOptions) {}

  /**
   * The snapshot of `repo` at its base commit, prepared on first request. A local repository's
   * commit is resolved first, so a moved HEAD or branch gets a new snapshot, not the old one.
   */
  get(repo: RepoSource): Promise<Snapshot> {
    if (repo.path === undefined) return this.#cached(`url\0${repo.url ?? ''}\0${repo.base_commit ?? 'HEAD'}`, repo);
    return resolveLocal(repo.path, repo.base_commit).then(({ real, sha }) => this.#cached(`path\0${real}\0${sha}`, { ...repo, path: real, base_commit: sha }));
  }

  #cached(key: string, repo: RepoSource): Promise<Snapshot> {
    if (this.#closed) return Promise.reject(wnwError('WNW_ERR_SBX_CLOSED', 'the local sandbox provider is closed'));
    let snapshot = this.#snapshots.get(key);
    if (!snapshot) {
      snapshot = this.#prepare(repo);
      this.#snapshots.set(key, snapshot);
      snapshot.catch(() => this.#snapshots.delete(key));
    }
    return snapshot;
  }

  /** Number of snapshots prepared or being prepared. */
  get size(): number {
    return this.#snapshots.size;
  }

  async close(): Promise<void> {
    this.#closed = true;
    await Promise.allSettled(this.#snapshots.values());
    this.#snapshots.clear();
    for (const dir of this.#dirs) await removeTree(dir);
    this.#dirs.clear();
  }

  async #prepare(repo: RepoSource): Promise<Snapshot> {
    if (repo.path === undefined && repo.url === undefined) {
      throw wnwError('WNW_ERR_SBX_REPO', `repo ${repo.name ?? ''} has neither path nor url: the local provider needs one of them`, { details: { field: 'repo' } });
    }
    const dir = join(this.options.rootDir, 'snapshots', `${hashKey(repo.path ?? repo.url ?? '', repo.base_commit ?? 'HEAD')}-${(this.#made += 1)}`);
    this.#dirs.add(dir);
    const treeDir = join(dir, 'tree');
    try {
      await mkdir(dir, { recursive: true, mode: 0o711 });
      const { commit, source } = repo.path !== undefined ? await this.#cloneLocal(repo.path, repo.base_commit, treeDir) : await this.#cloneUrl(repo.url!, repo.base_commit, treeDir);
      await git(['checkout', '--quiet', '--detach', commit], treeDir, `checking out ${commit} of ${source}`);
      await git(['remote', 'remove', 'origin'], treeDir, 'removing the origin remote');
      if (this.options.owner) {
        const chown = await runHostCommand('chown', ['-R', '-h', `${this.options.owner.uid}:${this.options.owner.gid}`, '--', treeDir]);
        if (chown.code !== 0) throw new Error(`chown of the snapshot failed: ${tail(chown.stderr)}`);
      }
      await this.options.refreshIndex(treeDir);
      return { treeDir, commit, source };
    } catch (error) {
      this.#dirs.delete(dir);
      await removeTree(dir).catch(() => undefined);
      if (WinnowerError.isInstance(error)) throw error;
      throw wnwError('WNW_ERR_SBX_CREATE', `could not prepare the base snapshot: ${(error as Error).message}`, { cause: error });
    }
  }

  async #cloneLocal(path: string, commit: string | undefined, treeDir: string): Promise<{ commit: string; source: string }> {
    const { real, sha } = await resolveLocal(path, commit);
    await git(['clone', '--quiet', '--no-checkout', '--no-hardlinks', LOCAL_UPLOAD_PACK, '--', real, treeDir], undefined, `cloning ${path}`, this.options.cloneTimeoutMs);
    if (!(await resolveCommit(treeDir, sha))) {
      // The commit is not on any branch or tag of the source: fetch it by id.
      await git(['fetch', '--quiet', LOCAL_UPLOAD_PACK, 'origin', sha], treeDir, `fetching ${sha} from ${path}`, this.options.cloneTimeoutMs);
    }
    return { commit: sha, source: path };
  }

  async #cloneUrl(url: string, commit: string | undefined, treeDir: string): Promise<{ commit: string; source: string }> {
    const source = redactUrl(url);
    const local = url.startsWith('file://') ? [LOCAL_UPLOAD_PACK] : [];
    const clone = await runHostCommand('git', ['clone', '--quiet', '--no-checkout', ...local, '--', url, treeDir], { env: hostGitEnv(), timeoutMs: this.options.cloneTimeoutMs ?? 600_000 });
    if (clone.code !== 0) {
      throw wnwError('WNW_ERR_SBX_REPO', `could not clone ${source}: ${tail(redactText(clone.stderr, url, source))}`, { details: { field: 'repo.url', url: source } });
    }
    let sha = await resolveCommit(treeDir, commit);
    if (!sha && commit) {
      // --end-of-options: a commit such as `--upload-pack=<command>` is a revision to look for, never an option that runs.
      const fetch = await runHostCommand('git', ['-C', treeDir, 'fetch', '--quiet', ...local, 'origin', '--end-of-options', commit], { env: hostGitEnv(), timeoutMs: this.options.cloneTimeoutMs ?? 600_000 });
      if (fetch.code === 0) sha = await resolveCommit(treeDir, 'FETCH_HEAD');
    }
    if (!sha) throw unknownCommit(commit, source);
    return { commit: sha, source };
  }
}

/** The real path of a local repository and the full SHA of `commit` in it (WNW_ERR_SBX_REPO otherwise). */
async function resolveLocal(path: string, commit: string | undefined): Promise<{ real: string; sha: string }> {
  let real: string;
  try {
    real = await realpath(path);
    await stat(real);
  } catch {
    throw wnwError('WNW_ERR_SBX_REPO', `repository path not found: ${path}`, { details: { field: 'repo.path', path } });
  }
  const check = await runHostCommand('git', ['-C', real, 'rev-parse', '--git-dir'], { env: hostGitEnv() });
  if (check.code !== 0) throw wnwError('WNW_ERR_SBX_REPO', `not a git repository: ${path}`, { details: { field: 'repo.path', path, stderr: tail(check.stderr) } });
  const sha = await resolveCommit(real, commit);
  if (!sha) throw unknownCommit(commit, path);
  return { real, sha };
}

async function resolveCommit(repoDir: string, commit: string | undefined): Promise<string | undefined> {
  const result = await runHostCommand('git', ['-C', repoDir, 'rev-parse', '--verify', '--quiet', '--end-of-options', `${commit ?? 'HEAD'}^{commit}`], { env: hostGitEnv() });
  const sha = result.stdout.trim();
  return result.code === 0 && /^[0-9a-f]{40,64}$/.test(sha) ? sha : undefined;
}

function unknownCommit(commit: string | undefined, source: string): WinnowerError {
  return wnwError('WNW_ERR_SBX_REPO', commit ? `commit ${commit} not found in ${source}` : `${source} has no commit at HEAD`, {
    details: { field: 'repo.base_commit', commit, repo: source },
  });
}

async function git(args: string[], cwd: string | undefined, what: string, timeoutMs = 600_000): Promise<HostCommandResult> {
  const result = await runHostCommand('git', cwd ? ['-C', cwd, ...args] : args, { env: hostGitEnv(), timeoutMs });
  if (result.code !== 0) throw new Error(`${what} failed: ${tail(result.stderr)}`);
  return result;
}

function hashKey(...parts: string[]): string {
  return createHash('sha256').update(parts.join('\0')).digest('hex').slice(0, 16);
}

/** Removes user:password@ from a URL before it appears in a message. */
export function redactUrl(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/@]*@/i, '$1***@');
}

function redactText(text: string, url: string, redacted: string): string {
  return text.split(url).join(redacted);
}
