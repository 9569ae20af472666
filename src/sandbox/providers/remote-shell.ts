/**
 * Shell scripts and path helpers for sandboxes driven over an API rather than a local process
 * (orchard, and docker which reuses them): the diff (patch-policy.ts's script), `git apply` of an
 * uploaded patch with the rejected hunk named, stdin fed from an uploaded file.
 *
 * Every script refers to files by paths relative to the exec's working directory, which the
 * API sets, so nothing depends on where the sandbox's filesystem is mounted.
 */
import { randomUUID } from 'node:crypto';
import { posix } from 'node:path';
import { wnwError } from '../../errors.js';
import { shellQuote } from '../base-sandbox.js';
import { decodePatch, encodePatch } from '../patch-bytes.js';
import { finishPatch, parseBaseTree, patchBaseScript, patchDiffScript, patchOutputCap, type PatchPolicy } from '../patch-policy.js';
import type { ExecResult } from '../types.js';

/** Lets git work in a repository owned by another uid (the image's), without a config file. */
export const GIT_SAFE_ENV: Readonly<Record<string, string>> = {
  GIT_CONFIG_COUNT: '1',
  GIT_CONFIG_KEY_0: 'safe.directory',
  GIT_CONFIG_VALUE_0: '*',
};

/** An absolute path inside the sandbox: absolute paths are normalised, relative ones joined to `base`. */
export function resolveSandboxPath(base: string, path: string | undefined): string {
  if (path === undefined || path === '') return base;
  return posix.isAbsolute(path) ? posix.normalize(path) : posix.join(base, path);
}

/** A file name for a transient upload (patch, stdin) that cannot collide. */
export function transientName(kind: 'patch' | 'stdin'): string {
  return `.winnower-${kind}-${randomUUID()}`;
}

/** Prints the full commit id of HEAD, or nothing when the workdir is not a repository with commits. */
export const BASE_COMMIT_SCRIPT = 'git rev-parse -q --verify HEAD 2>/dev/null || true';

/** Applies the uploaded patch `fileName` (in the working directory) atomically, then removes it. */
export function applyScript(fileName: string): string {
  const file = shellQuote(fileName);
  return `git apply --verbose --whitespace=nowarn ${file}; rc=$?; rm -f ${file}; exit $rc`;
}

/** Runs `command` with the uploaded file `fileName` as stdin; the file is removed before it starts. */
export function withStdinFile(command: string, fileName: string): string {
  const file = shellQuote(fileName);
  return `{ rm -f ${file}; bash -c ${shellQuote(command)}; } < ${file}`;
}

export interface PatchFailure {
  message: string;
  details: { file?: string; line?: number; hunk?: number; stderr: string };
}

/** Names the rejected hunk from `git apply` stderr: "hunk 2 of src/a.py (line 12) rejected". */
export function describePatchFailure(stderr: string, patch: string): PatchFailure {
  const errors = stderr
    .split('\n')
    .filter((line) => line.startsWith('error: '))
    .map((line) => line.slice('error: '.length));
  const details: PatchFailure['details'] = { stderr: stderr.slice(-4000) };
  const failed = /^patch failed: (.+):(\d+)$/m.exec(errors.join('\n'));
  if (failed) {
    const file = failed[1] ?? '';
    const line = Number(failed[2]);
    const hunk = hunkIndex(patch, file, line);
    Object.assign(details, { file, line, ...(hunk === undefined ? {} : { hunk }) });
    const which = hunk === undefined ? `hunk at ${file}:${line}` : `hunk ${hunk} of ${file} (line ${line})`;
    return { message: `patch does not apply: ${which} rejected`, details };
  }
  const missing = /^(.+): (No such file or directory|does not exist in index|already exists in working directory)$/m.exec(
    errors.join('\n'),
  );
  if (missing) {
    details.file = missing[1] ?? '';
    return { message: `patch does not apply: ${missing[1]}: ${missing[2]}`, details };
  }
  const first = errors[0] ?? (stderr.trim().split('\n').pop() || 'git apply failed');
  return { message: `patch does not apply: ${first}`, details };
}

/** 1-based index of the hunk of `file` whose old range starts at `line` (git reports that line). */
function hunkIndex(patch: string, file: string, line: number): number | undefined {
  const lines = patch.split('\n');
  let current: string | undefined;
  let count = 0;
  for (let i = 0; i < lines.length; i++) {
    const text = lines[i] ?? '';
    const gitHeader = /^diff --git a\/(.+) b\/(.+)$/.exec(text);
    if (gitHeader) {
      current = gitHeader[2];
      count = 0;
      continue;
    }
    const next = lines[i + 1] ?? '';
    if (text.startsWith('--- ') && next.startsWith('+++ ')) {
      const minus = stripPrefix(text.slice(4), 'a/');
      const plus = stripPrefix(next.slice(4), 'b/');
      const name = plus === '/dev/null' ? minus : plus;
      if (name !== current) {
        current = name;
        count = 0;
      }
      i++;
      continue;
    }
    const hunk = /^@@ -(\d+)(?:,\d+)? \+\d+(?:,\d+)? @@/.exec(text);
    if (hunk) {
      count++;
      if (current === file && Number(hunk[1]) === line) return count;
    }
  }
  return undefined;
}

function stripPrefix(path: string, prefix: string): string {
  const name = path.replace(/\t.*$/, '').trimEnd();
  return name.startsWith(prefix) ? name.slice(prefix.length) : name;
}

/** The exec a provider offers its helpers: cwd absolute, env added, output capped. */
export type RemoteExec = (
  command: string,
  options: { cwd: string; env: Record<string, string>; timeoutMs: number; maxOutputBytes: number; signal?: AbortSignal },
) => Promise<ExecResult>;

/** Uploads bytes to an absolute path inside the sandbox. */
export type RemoteUpload = (path: string, content: Uint8Array, signal?: AbortSignal) => Promise<void>;

const GIT_TIMEOUT_MS = 300_000;

/**
 * `Sandbox.diff` for API-driven sandboxes: runs the shared patch script (patch-policy.ts) in the
 * workdir. With `base64`, the script's output travels base64-encoded, for services whose exec
 * output is not byte-safe (Orchard Env decodes it as UTF-8 with replacement).
 */
export async function diffVia(
  exec: RemoteExec,
  workdir: string,
  base: string | undefined,
  policy: PatchPolicy,
  sandboxId: string,
  signal?: AbortSignal,
  transport: { base64?: boolean } = {},
): Promise<string> {
  const script = patchDiffScript(base, policy);
  const command = transport.base64 ? `bash -c ${shellQuote(script)} | base64 -w0; exit "\${PIPESTATUS[0]}"` : script;
  const cap = transport.base64 ? Math.ceil(patchOutputCap(policy) / 3) * 4 : patchOutputCap(policy);
  const result = await exec(command, { cwd: workdir, env: { ...GIT_SAFE_ENV }, timeoutMs: GIT_TIMEOUT_MS, maxOutputBytes: cap, signal });
  const bytes = transport.base64 ? Buffer.from(result.stdout, 'base64') : Buffer.from(result.stdout);
  const details = { sandbox: sandboxId, workdir, exitCode: result.exitCode, stderr: result.stderr.slice(-2000) };
  if (result.timedOut) throw wnwError('WNW_ERR_SBX_TIMEOUT', `git diff in ${workdir} of sandbox ${sandboxId} timed out`, { details });
  // Past the cap, git was cut off and may have exited non-zero: finishPatch reports the size.
  if (result.exitCode !== 0 && bytes.length <= policy.maxBytes) {
    throw wnwError('WNW_ERR_SBX_EXEC', `git diff in ${workdir} of sandbox ${sandboxId} failed: ${lastLine(result.stderr)}`, { details });
  }
  return finishPatch(decodePatch(bytes), policy, sandboxId, bytes.length);
}

/** `Sandbox.markBase` for API-driven sandboxes: the tree of the workspace as it stands (patch-policy.ts `patchBaseScript`). */
export async function markBaseVia(
  exec: RemoteExec,
  workdir: string,
  policy: PatchPolicy,
  sandboxId: string,
  signal?: AbortSignal,
): Promise<string> {
  const result = await exec(patchBaseScript(policy), {
    cwd: workdir,
    env: { ...GIT_SAFE_ENV },
    timeoutMs: GIT_TIMEOUT_MS,
    maxOutputBytes: 4096,
    signal,
  });
  const tree = result.exitCode === 0 ? parseBaseTree(result.stdout) : undefined;
  if (!tree) {
    const details = { sandbox: sandboxId, workdir, exitCode: result.exitCode, stderr: result.stderr.slice(-2000) };
    throw wnwError('WNW_ERR_SBX_EXEC', `recording the base in ${workdir} of sandbox ${sandboxId} failed: ${lastLine(result.stderr)}`, {
      details,
    });
  }
  return tree;
}

/** `Sandbox.applyPatch` for API-driven sandboxes: uploads the patch into the workdir, then `git apply`. */
export async function applyPatchVia(
  exec: RemoteExec,
  upload: RemoteUpload,
  workdir: string,
  patch: string,
  sandboxId: string,
  signal?: AbortSignal,
): Promise<void> {
  if (patch.trim() === '') return;
  const name = transientName('patch');
  const text = patch.endsWith('\n') ? patch : `${patch}\n`;
  await upload(posix.join(workdir, name), encodePatch(text), signal);
  const result = await exec(applyScript(name), {
    cwd: workdir,
    env: { ...GIT_SAFE_ENV },
    timeoutMs: GIT_TIMEOUT_MS,
    maxOutputBytes: 1024 * 1024,
    signal,
  });
  if (result.exitCode === 0) return;
  if (result.timedOut)
    throw wnwError('WNW_ERR_SBX_TIMEOUT', `git apply in ${workdir} of sandbox ${sandboxId} timed out`, { details: { sandbox: sandboxId } });
  const failure = describePatchFailure(result.stderr, text);
  throw wnwError('WNW_ERR_SBX_PATCH', failure.message, { details: { sandbox: sandboxId, workdir, ...failure.details } });
}

function lastLine(text: string): string {
  return text.trim().split('\n').pop() || 'no output';
}
