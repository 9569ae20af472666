/**
 * The paths a unified diff writes, checked before anything applies it or hands it back as the
 * chosen patch: every one must stay inside the repository (relative, no `..` segment) and out of
 * `.git` (hooks and config there would run on the next git command). Renames and copies count
 * on both sides. A refused patch is a 400 naming the request field and the path.
 */
import { wnwError } from '../errors.js';

/** `diff --git a/x b/y`, `--- a/x`, `+++ b/y`, `rename|copy from|to x`: the paths they name. */
const PATH_LINES = /^(?:diff --git (.+)|--- (.+)|\+\+\+ (.+)|(?:rename|copy) (?:from|to) (.+))$/;

/** Git's C-style quoting of unusual paths (`"a/sp ace\\t"`), undone far enough to judge the path. */
function unquote(path: string): string {
  if (!path.startsWith('"') || !path.endsWith('"')) return path;
  return path.slice(1, -1).replace(/\\([0-7]{3}|.)/g, (_, escaped: string) => (/^[0-7]{3}$/.test(escaped) ? String.fromCharCode(Number.parseInt(escaped, 8)) : escaped === 't' ? '\t' : escaped === 'n' ? '\n' : escaped));
}

/** The two paths of a `diff --git` header (each may be quoted). */
function headerPaths(rest: string): string[] {
  const quoted = [...rest.matchAll(/"(?:[^"\\]|\\.)*"/g)].map((match) => match[0]);
  if (quoted.length > 0) return [...quoted, ...rest.replace(/"(?:[^"\\]|\\.)*"/g, ' ').trim().split(/\s+/).filter(Boolean)];
  // Unquoted: `a/<path> b/<path>`, the path repeated; split in the middle when the halves agree.
  const middle = rest.indexOf(' b/');
  return middle > 0 ? [rest.slice(0, middle), rest.slice(middle + 1)] : rest.split(' ');
}

/** Why `path` (as a diff names it, with its a/ or b/ prefix) may not be written, or undefined. */
function refusal(path: string, prefixed: boolean): string | undefined {
  let name = unquote(path.split('\t')[0]!.trim());
  if (name === '/dev/null') return undefined;
  if (prefixed) name = name.replace(/^[ab]\//, '');
  if (name.startsWith('/') || /^[A-Za-z]:[\\/]/.test(name)) return 'is absolute';
  const segments = name.split(/[\\/]+/);
  if (segments.includes('..')) return 'leaves the repository (..)';
  if (segments.some((segment) => segment.toLowerCase() === '.git')) return 'writes into .git';
  if (name.includes('\0')) return 'holds a NUL byte';
  return undefined;
}

/** Throws WNW_ERR_INPUT_INVALID naming `field` when `patch` writes outside the repository or into .git. */
export function checkPatchPaths(patch: string, field: string): void {
  // Lines inside a hunk are content (a removed `-- x` reads `--- x`), skipped by the hunk's own counts.
  let oldLeft = 0;
  let newLeft = 0;
  for (const raw of patch.split('\n')) {
    const line = raw.replace(/\r$/, '');
    if (oldLeft > 0 || newLeft > 0) {
      if (line.startsWith('\\')) continue;
      if (!line.startsWith('+')) oldLeft -= 1;
      if (!line.startsWith('-')) newLeft -= 1;
      continue;
    }
    const hunk = /^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@/.exec(line);
    if (hunk) {
      oldLeft = hunk[1] === undefined ? 1 : Number(hunk[1]);
      newLeft = hunk[2] === undefined ? 1 : Number(hunk[2]);
      continue;
    }
    const match = PATH_LINES.exec(line);
    if (!match) continue;
    const paths = match[1] !== undefined ? headerPaths(match[1]) : [match[2] ?? match[3] ?? match[4]!];
    for (const path of paths) {
      const why = refusal(path, match[4] === undefined);
      if (why) {
        const shown = path.length > 200 ? `${path.slice(0, 200)}…` : path;
        throw wnwError('WNW_ERR_INPUT_INVALID', `${field}: the patch writes ${JSON.stringify(shown)}, which ${why}; patches may only change files inside the repository, outside .git`, { details: { field, path: shown } });
      }
    }
  }
}
