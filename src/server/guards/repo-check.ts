/**
 * What can be known about a request's host repository before any rollout: the path is absolute,
 * exists, is a git repository, and has the commit. One `git rev-parse` (no shell, short timeout)
 * answers the last two; without it each rollout would fail alike, after its sandbox was made.
 * A URL is not checked: cloning it is the expensive part the rollouts do.
 */
import { stat } from 'node:fs/promises';
import { isAbsolute } from 'node:path';
import { wnwError } from '../../errors.js';
import { hostGitEnv, revParseCommitArgs, runHostCommand } from '../../sandbox/host-command.js';

/** Long enough for a cold disk, short enough that a submit never hangs on a stuck filesystem. */
const REV_PARSE_TIMEOUT_MS = 10_000;

interface RevParse {
  code: number | null;
  /** The process could not run or did not finish (git missing, timeout): nothing is known. */
  inconclusive: boolean;
  stderr: string;
}

async function revParse(dir: string, revision: string): Promise<RevParse> {
  try {
    const result = await runHostCommand('git', revParseCommitArgs(dir, revision), { env: hostGitEnv(), timeoutMs: REV_PARSE_TIMEOUT_MS });
    return { code: result.code, inconclusive: result.timedOut || result.code === null, stderr: result.stderr };
  } catch {
    // git could not be started.
    return { code: null, inconclusive: true, stderr: '' };
  }
}

const invalid = (field: string, message: string) => wnwError('WNW_ERR_INPUT_INVALID', `${field}: ${message}`, { details: { field } });

/**
 * Throws WNW_ERR_INPUT_INVALID naming `fields.path` or `fields.commit` when `repo.path` cannot be
 * the repository a sandbox starts from. Call it after the repo_roots check, so that a server with
 * roots tells a client nothing about folders outside them.
 */
export async function checkLocalRepo(
  repo: { path?: string; commit?: string } | undefined,
  fields: { path: string; commit: string },
): Promise<void> {
  if (repo?.path === undefined) return;
  const { path, commit } = repo;
  if (!isAbsolute(path)) throw invalid(fields.path, `${path} is not an absolute path (the server's working directory is not the client's)`);
  const info = await stat(path).catch(() => undefined);
  if (!info) throw invalid(fields.path, `${path} does not exist`);
  if (!info.isDirectory()) throw invalid(fields.path, `${path} is not a folder`);
  const result = await revParse(path, commit ?? 'HEAD');
  if (result.inconclusive || result.code === 0) return;
  // rev-parse exits 128 outside a repository and 1 (quietly) for a revision it does not know.
  if (result.code !== 1) throw invalid(fields.path, `${path} is not a git repository`);
  if (commit === undefined) throw invalid(fields.path, `${path} has no commit at HEAD (an empty repository)`);
  throw invalid(fields.commit, `commit ${JSON.stringify(commit)} not found in ${path}`);
}
