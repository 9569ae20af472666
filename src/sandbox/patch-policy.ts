/**
 * What goes into a candidate's patch, for every provider (local, orchard, docker): one diff script
 * run inside the sandbox, and one check of its output on the host.
 *
 * The patch is the working tree against the base commit, untracked files included, except:
 * - build artifacts and caches (`DEFAULT_PATCH_EXCLUDES`, plus `exclude`), in .gitignore syntax.
 *   They go to git as `core.excludesFile`, so, as with .gitignore, they only leave out untracked
 *   files: a change to a tracked file is always in the patch, whatever its path.
 * - binary changes, unless `binary: true`: without `--binary` git prints a one-line stub for each,
 *   which `finishPatch` drops (a stub cannot be applied anyway).
 * Past `maxBytes` the patch is refused with WNW_ERR_SBX_PATCH_SIZE, naming the file that crossed
 * the cap; the sandbox stops git once it has printed one byte more than the cap.
 */
import { z } from 'zod';
import { wnwError, type WinnowerError } from '../errors.js';
import { shellQuote } from './base-sandbox.js';
import { splitSections } from './patch-sections.js';

/**
 * Environment every provider's commands start from (the spec's may override it): Python writes no
 * `__pycache__` into the workspace, where a tracked cache folder would put it in the patch.
 */
export const SANDBOX_BASE_ENV: Readonly<Record<string, string>> = { PYTHONDONTWRITEBYTECODE: '1' };

/** Build outputs, caches and environments that agents and test runs leave behind (.gitignore syntax). */
export const DEFAULT_PATCH_EXCLUDES: readonly string[] = [
  '__pycache__/',
  '*.py[cod]',
  '.pytest_cache/',
  '.mypy_cache/',
  '.ruff_cache/',
  '.hypothesis/',
  '.tox/',
  '.nox/',
  '.venv/',
  'venv/',
  '*.egg-info/',
  '.eggs/',
  'build/',
  'dist/',
  'node_modules/',
  '.coverage',
  '.coverage.*',
  'htmlcov/',
  '.ipynb_checkpoints/',
  '.DS_Store',
];

export const DEFAULT_PATCH_MAX_BYTES = 4 * 1024 * 1024;

/** The `patch` setting every provider accepts (`sandbox.patch` in the config file). */
export const PatchSettingsSchema = z.strictObject({
  /** More patterns to leave out, .gitignore syntax (`*.log`, `/out/`, `data/*.csv`). */
  exclude: z
    .array(
      z
        .string()
        .min(1)
        .regex(/^[^\n\r\0]*$/, 'one pattern per entry, no line breaks'),
    )
    .optional(),
  /** Whether DEFAULT_PATCH_EXCLUDES apply (default true). */
  defaultExcludes: z.boolean().optional(),
  /** Whether binary changes go into the patch, as git binary patches (default false). */
  binary: z.boolean().optional(),
  /** Largest patch in bytes (default 4 MiB); a larger one is WNW_ERR_SBX_PATCH_SIZE. */
  maxBytes: z.number().int().positive().optional(),
});
export type PatchSettings = z.infer<typeof PatchSettingsSchema>;

/** The same setting as written in the config file (`sandbox.patch`, snake_case). */
export const PatchConfigSchema = z.strictObject({
  exclude: PatchSettingsSchema.shape.exclude.describe(
    'More paths to leave out of patches, in .gitignore syntax (`*.log`, `/out/`); like .gitignore they only leave out untracked files.',
  ),
  default_excludes: z
    .boolean()
    .optional()
    .describe('Whether the built-in list of build outputs and caches (DEFAULT_PATCH_EXCLUDES) is left out too (default true).'),
  binary: z.boolean().optional().describe('Whether binary changes go into patches, as git binary patches (default false).'),
  max_bytes: z
    .number()
    .int()
    .positive()
    .optional()
    .describe('Largest patch in bytes (default 4 MiB); a larger one fails with WNW_ERR_SBX_PATCH_SIZE.'),
});
export type PatchConfig = z.infer<typeof PatchConfigSchema>;

export interface PatchPolicy {
  readonly excludes: readonly string[];
  readonly binary: boolean;
  readonly maxBytes: number;
}

/** Validates a provider's `patch` setting and fills in the defaults; WNW_ERR_CFG_INVALID naming the field. */
export function patchPolicy(settings: unknown, field = 'sandbox.settings.patch'): PatchPolicy {
  const parsed = PatchSettingsSchema.optional().safeParse(settings);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = [field, ...(issue?.path ?? []).map(String)].join('.');
    const keys = issue && 'keys' in issue ? ` (${String(issue.keys)})` : '';
    throw wnwError('WNW_ERR_CFG_INVALID', `${where}: ${issue?.message ?? 'invalid'}${keys}`, { details: { field: where } });
  }
  const value = parsed.data ?? {};
  return {
    excludes: [...(value.defaultExcludes === false ? [] : DEFAULT_PATCH_EXCLUDES), ...(value.exclude ?? [])],
    binary: value.binary ?? false,
    maxBytes: value.maxBytes ?? DEFAULT_PATCH_MAX_BYTES,
  };
}

/** `sandbox.patch` of the config file as a provider's `patch` setting. */
export function patchSettingsFromConfig(config: PatchConfig): PatchSettings {
  return {
    ...(config.exclude ? { exclude: config.exclude } : {}),
    ...(config.default_excludes !== undefined ? { defaultExcludes: config.default_excludes } : {}),
    ...(config.binary !== undefined ? { binary: config.binary } : {}),
    ...(config.max_bytes !== undefined ? { maxBytes: config.max_bytes } : {}),
  };
}

/**
 * The diff script, run in the repository's top folder. Untracked files enter a throwaway copy of
 * the index as intent-to-add entries (`git add -N`), so git writes no objects (the workspace may be
 * at its disk cap) and neither the real index nor the agent's staging is touched; the diff is of
 * the working tree against `base` (default HEAD; an unborn HEAD diffs against the empty tree).
 * Renames are spelled as delete + add, which every patch tool applies.
 */
export function patchDiffScript(base: string | undefined, policy: PatchPolicy): string {
  const excludes = policy.excludes.length > 0 ? `printf '%s\\n' ${policy.excludes.map(shellQuote).join(' ')}` : 'true';
  const binary = policy.binary ? ' --binary' : '';
  return [
    'set -e',
    `base=${shellQuote(base ?? 'HEAD')}`,
    'git_dir=$(git rev-parse --git-dir)',
    'tmp=$(mktemp -d "${TMPDIR:-/tmp}/winnower-diff.XXXXXX")',
    `trap 'rm -rf "$tmp"' EXIT`,
    'if [ -f "$git_dir/index" ]; then cp "$git_dir/index" "$tmp/index"; fi',
    `${excludes} > "$tmp/exclude"`,
    'if [ "$base" = HEAD ] && ! git rev-parse -q --verify HEAD >/dev/null; then base=$(git hash-object -t tree /dev/null); fi',
    'export GIT_INDEX_FILE="$tmp/index"',
    'git -c core.excludesFile="$tmp/exclude" add -A -N',
    // head stops git one byte past the cap (SIGPIPE, status 141): the host sees the overflow.
    `{ rc=0; git diff --no-color --no-ext-diff --no-textconv --no-renames${binary} --src-prefix=a/ --dst-prefix=b/ "$base" -- || rc=$?; echo "$rc" > "$tmp/rc"; } | head -c ${policy.maxBytes + 1}`,
    'rc=$(cat "$tmp/rc")',
    'if [ "$rc" != 0 ] && [ "$rc" != 141 ]; then exit "$rc"; fi',
  ].join('\n');
}

/**
 * Writes the working tree as a git tree object under the same rules as the diff script (same
 * excludes, a throwaway index) and prints its id: the base a later diff is taken against, so a
 * shared setup's outputs stay out of every patch. The tree's blobs go into the repository's object
 * store; the real index is untouched.
 */
export function patchBaseScript(policy: PatchPolicy): string {
  const excludes = policy.excludes.length > 0 ? `printf '%s\\n' ${policy.excludes.map(shellQuote).join(' ')}` : 'true';
  return [
    'set -e',
    'git_dir=$(git rev-parse --git-dir)',
    'tmp=$(mktemp -d "${TMPDIR:-/tmp}/winnower-base.XXXXXX")',
    `trap 'rm -rf "$tmp"' EXIT`,
    'if [ -f "$git_dir/index" ]; then cp "$git_dir/index" "$tmp/index"; fi',
    `${excludes} > "$tmp/exclude"`,
    'export GIT_INDEX_FILE="$tmp/index"',
    'git -c core.excludesFile="$tmp/exclude" add -A',
    'git write-tree',
  ].join('\n');
}

/** A tree id as `patchBaseScript` prints it, or undefined. */
export function parseBaseTree(output: string): string | undefined {
  const tree = output.trim();
  return /^[0-9a-f]{40}([0-9a-f]{24})?$/.test(tree) ? tree : undefined;
}

/** Output cap to give the exec running {@link patchDiffScript}: the cap plus the byte that shows an overflow. */
export function patchOutputCap(policy: PatchPolicy): number {
  return policy.maxBytes + 1;
}

/** Checks the diff script's output: WNW_ERR_SBX_PATCH_SIZE past the cap; binary stubs dropped unless asked. */
export function finishPatch(output: string, policy: PatchPolicy, sandbox: string, byteLength = Buffer.byteLength(output)): string {
  if (byteLength > policy.maxBytes) throw patchTooLarge(output, policy, sandbox);
  if (policy.binary) return output;
  return splitSections(output)
    .filter((section) => !BINARY_STUB.test(section))
    .join('');
}

/** git's line for a binary change printed without `--binary` (header lines only; content lines start with ' ', '+' or '-'). */
const BINARY_STUB = /^Binary files .* differ$/m;

function patchTooLarge(output: string, policy: PatchPolicy, sandbox: string): WinnowerError {
  const files = splitSections(output)
    .map((section) => ({ path: /^diff --git a\/(.*?) b\//.exec(section)?.[1] ?? '?', bytes: Buffer.byteLength(section) }))
    .filter((file) => file.path !== '?');
  // The last section is the one git was printing when the cap was reached; it is cut short.
  const crossing = files.at(-1)?.path;
  const largest = [...files].sort((a, b) => b.bytes - a.bytes).slice(0, 5);
  const cap = formatBytes(policy.maxBytes);
  const where = crossing ? ` (reached in ${crossing})` : '';
  const hint = 'leave such files out with sandbox.patch.exclude, or raise sandbox.patch.max_bytes';
  return wnwError('WNW_ERR_SBX_PATCH_SIZE', `the patch is larger than its ${cap} cap${where}; ${hint}`, {
    details: { sandbox, maxBytes: policy.maxBytes, ...(crossing ? { file: crossing } : {}), largest },
  });
}

function formatBytes(bytes: number): string {
  if (bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)} MiB`;
  if (bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} bytes`;
}
