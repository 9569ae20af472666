/**
 * Base snapshots: one immutable checkout per (repository, commit), prepared once on the host and
 * shared read-only by every sandbox of that repository (the lower layer of their overlays).
 * A URL is cloned here, on the host side, never from inside a sandbox.
 */
import { createHash } from 'node:crypto';
import { realpath, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { abortedError, throwIfAborted, wnwError, WinnowerError } from '../../../errors.js';
import type { RepoSource } from '../../../types/task.js';
import { redactUrlCredentials } from '../../../util/redact-url.js';
import { SharedTaskMap } from '../../../util/shared-task.js';
import { hostGitEnv, revParseCommitArgs, runHostCommand, tail, type HostCommandResult } from '../../host-command.js';
import { makeDirs } from '../../reachable.js';
import { removeTree, type Owner } from './overlay.js';

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
  /** Refreshes the git index as seen from inside a sandbox (docs/design/04-local-sandbox.md#3). */
  refreshIndex(treeDir: string, signal: AbortSignal): Promise<void>;
  /** Deadline for each git step (clone, fetch, checkout) of a snapshot (default DEFAULT_CLONE_TIMEOUT_MS). */
  cloneTimeoutMs?: number;
}

/** A clone that takes longer than this is given up (sandbox.settings.cloneTimeoutMs to change it). */
export const DEFAULT_CLONE_TIMEOUT_MS = 5 * 60_000;

/**
 * Prepares and caches snapshots; close() aborts the ones still being prepared and removes every
 * one it made. A preparation is shared by every caller asking for the same snapshot and is
 * aborted (its git processes killed) only when all of them have given up.
 */
export class SnapshotStore {
  readonly #snapshots = new SharedTaskMap<Snapshot>();
  readonly #dirs = new Set<string>();
  #made = 0;
  #closed = false;

  constructor(readonly options: SnapshotStoreOptions) {}

  /**
   * The snapshot of `repo` at its base commit, prepared on first request. A local repository's
   * commit is resolved first, so a moved HEAD or branch gets a new snapshot, not the old one.
   */
  get(repo: RepoSource, signal?: AbortSignal): Promise<Snapshot> {
    if (repo.path === undefined) return this.#cached(`url\0${repo.url ?? ''}\0${repo.base_commit ?? 'HEAD'}`, repo, signal);
    return resolveLocal(repo.path, repo.base_commit, signal).then(({ real, sha }) =>
      this.#cached(`path\0${real}\0${sha}`, { ...repo, path: real, base_commit: sha }, signal),
    );
  }

  #cached(key: string, repo: RepoSource, signal: AbortSignal | undefined): Promise<Snapshot> {
    if (this.#closed) return Promise.reject(wnwError('WNW_ERR_SBX_CLOSED', 'the local sandbox provider is closed'));
    return this.#snapshots.join(key, (abort) => this.#prepare(repo, abort), signal);
  }

  /** Number of snapshots prepared or being prepared. */
  get size(): number {
    return this.#snapshots.size;
  }

  async close(): Promise<void> {
    this.#closed = true;
    await this.#snapshots.abortAll(wnwError('WNW_ERR_SBX_CLOSED', 'the local sandbox provider is closed'));
    for (const dir of this.#dirs) await removeTree(dir);
    this.#dirs.clear();
  }

  async #prepare(repo: RepoSource, signal: AbortSignal): Promise<Snapshot> {
    if (repo.path === undefined && repo.url === undefined) {
      throw wnwError('WNW_ERR_SBX_REPO', `repo ${repo.name ?? ''} has neither path nor url: the local provider needs one of them`, {
        details: { field: 'repo' },
      });
    }
    const dir = join(
      this.options.rootDir,
      'snapshots',
      `${hashKey(repo.path ?? repo.url ?? '', repo.base_commit ?? 'HEAD')}-${(this.#made += 1)}`,
    );
    this.#dirs.add(dir);
    const treeDir = join(dir, 'tree');
    try {
      makeDirs(dir, 0o711);
      const { commit, source } =
        repo.path !== undefined
          ? await this.#cloneLocal(repo.path, repo.base_commit, treeDir, signal)
          : await this.#cloneUrl(repo.url!, repo.base_commit, treeDir, signal);
      await this.#git(['checkout', '--quiet', '--detach', commit], treeDir, `checking out ${commit} of ${source}`, signal);
      await this.#git(['remote', 'remove', 'origin'], treeDir, 'removing the origin remote', signal);
      if (this.options.owner) {
        const chown = await runHostCommand('chown', ['-R', '-h', `${this.options.owner.uid}:${this.options.owner.gid}`, '--', treeDir], {
          signal,
        });
        if (chown.code !== 0) throw new Error(`chown of the snapshot failed: ${tail(chown.stderr)}`);
      }
      await this.options.refreshIndex(treeDir, signal);
      throwIfAborted(signal);
      return { treeDir, commit, source };
    } catch (error) {
      this.#dirs.delete(dir);
      await removeTree(dir).catch(() => undefined);
      // Stopped by close() or by the last caller leaving: say so, not what the kill made fail.
      if (signal.aborted) throw WinnowerError.isInstance(signal.reason) ? signal.reason : abortedError(signal);
      if (WinnowerError.isInstance(error)) throw error;
      throw wnwError('WNW_ERR_SBX_CREATE', `could not prepare the base snapshot: ${(error as Error).message}`, { cause: error });
    }
  }

  async #cloneLocal(
    path: string,
    commit: string | undefined,
    treeDir: string,
    signal: AbortSignal,
  ): Promise<{ commit: string; source: string }> {
    const { real, sha } = await resolveLocal(path, commit, signal);
    await this.#git(
      ['clone', '--quiet', '--no-checkout', '--no-hardlinks', LOCAL_UPLOAD_PACK, '--', real, treeDir],
      undefined,
      `cloning ${path}`,
      signal,
    );
    if (!(await resolveCommit(treeDir, sha, signal))) {
      // The commit is not on any branch or tag of the source: fetch it by id.
      await this.#git(['fetch', '--quiet', LOCAL_UPLOAD_PACK, 'origin', sha], treeDir, `fetching ${sha} from ${path}`, signal);
    }
    return { commit: sha, source: path };
  }

  async #cloneUrl(
    url: string,
    commit: string | undefined,
    treeDir: string,
    signal: AbortSignal,
  ): Promise<{ commit: string; source: string }> {
    const source = redactUrlCredentials(url, '***');
    const local = url.startsWith('file://') ? [LOCAL_UPLOAD_PACK] : [];
    const clone = await this.#runGit(
      ['clone', '--quiet', '--no-checkout', ...local, '--', url, treeDir],
      `cloning ${source}`,
      { field: 'repo.url', url: source },
      signal,
    );
    if (clone.code !== 0) {
      throw wnwError('WNW_ERR_SBX_REPO', `could not clone ${source}: ${tail(redactText(clone.stderr, url, source))}`, {
        details: { field: 'repo.url', url: source },
      });
    }
    let sha = await resolveCommit(treeDir, commit, signal);
    if (!sha && commit) {
      // --end-of-options: a commit such as `--upload-pack=<command>` is a revision to look for, never an option that runs.
      const fetch = await this.#runGit(
        ['-C', treeDir, 'fetch', '--quiet', ...local, 'origin', '--end-of-options', commit],
        `fetching ${commit} from ${source}`,
        { field: 'repo.base_commit', url: source },
        signal,
      );
      if (fetch.code === 0) sha = await resolveCommit(treeDir, 'FETCH_HEAD', signal);
    }
    if (!sha) throw unknownCommit(commit, source);
    return { commit: sha, source };
  }

  get #timeoutMs(): number {
    return this.options.cloneTimeoutMs ?? DEFAULT_CLONE_TIMEOUT_MS;
  }

  #timedOut(what: string, details: Record<string, unknown>): WinnowerError {
    const seconds = Math.round(this.#timeoutMs / 1000);
    return wnwError('WNW_ERR_SBX_TIMEOUT', `${what} did not finish within ${seconds} s (sandbox.settings.cloneTimeoutMs)`, {
      details: { ...details, timeout_ms: this.#timeoutMs },
    });
  }

  /** Runs host git under the clone deadline; past it, WNW_ERR_SBX_TIMEOUT saying `what` (with `details`). */
  async #runGit(args: string[], what: string, details: Record<string, unknown>, signal: AbortSignal): Promise<HostCommandResult> {
    const result = await runHostCommand('git', args, { env: hostGitEnv(), timeoutMs: this.#timeoutMs, signal });
    if (result.timedOut) throw this.#timedOut(what, details);
    return result;
  }

  /** #runGit in `cwd`, failing on a non-zero exit. */
  async #git(args: string[], cwd: string | undefined, what: string, signal: AbortSignal): Promise<HostCommandResult> {
    const result = await this.#runGit(cwd ? ['-C', cwd, ...args] : args, what, {}, signal);
    if (result.code !== 0) throw new Error(`${what} failed: ${tail(result.stderr)}`);
    return result;
  }
}

/** The real path of a local repository and the full SHA of `commit` in it (WNW_ERR_SBX_REPO otherwise). */
async function resolveLocal(
  path: string,
  commit: string | undefined,
  signal: AbortSignal | undefined,
): Promise<{ real: string; sha: string }> {
  let real: string;
  try {
    real = await realpath(path);
    await stat(real);
  } catch {
    throw wnwError('WNW_ERR_SBX_REPO', `repository path not found: ${path}`, { details: { field: 'repo.path', path } });
  }
  const check = await runHostCommand('git', ['-C', real, 'rev-parse', '--git-dir'], { env: hostGitEnv(), signal });
  if (check.code !== 0)
    throw wnwError('WNW_ERR_SBX_REPO', `not a git repository: ${path}`, {
      details: { field: 'repo.path', path, stderr: tail(check.stderr) },
    });
  const sha = await resolveCommit(real, commit, signal);
  if (!sha) throw unknownCommit(commit, path);
  return { real, sha };
}

async function resolveCommit(repoDir: string, commit: string | undefined, signal: AbortSignal | undefined): Promise<string | undefined> {
  const result = await runHostCommand('git', revParseCommitArgs(repoDir, commit ?? 'HEAD'), { env: hostGitEnv(), signal });
  const sha = result.stdout.trim();
  return result.code === 0 && /^[0-9a-f]{40,64}$/.test(sha) ? sha : undefined;
}

function unknownCommit(commit: string | undefined, source: string): WinnowerError {
  return wnwError('WNW_ERR_SBX_REPO', commit ? `commit ${commit} not found in ${source}` : `${source} has no commit at HEAD`, {
    details: { field: 'repo.base_commit', commit, repo: source },
  });
}

function hashKey(...parts: string[]): string {
  return createHash('sha256').update(parts.join('\0')).digest('hex').slice(0, 16);
}

function redactText(text: string, url: string, redacted: string): string {
  return text.split(url).join(redacted);
}
