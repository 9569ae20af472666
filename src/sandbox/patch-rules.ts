/**
 * What a patch may do, whoever applies it (the server before it accepts a request, verification
 * before `git apply`, selection before a patch can be chosen): every path it writes stays inside
 * the repository (relative, no `..` segment) and out of `.git` (hooks and config there would run
 * on the next git command), and every symbolic link it creates or changes points inside the
 * repository too (`git apply` writes a link to `/etc/passwd` or `../../x` without a word, and a
 * later read or write through it leaves the checkout). Renames and copies count on both sides.
 */
import { posix } from 'node:path';

export interface PatchViolation {
  /** The path as the patch names it (cut to 200 characters). */
  path: string;
  /** What the patch does, as a clause: `writes "x", which is absolute`. */
  what: string;
}

/** `diff --git a/x b/y`, `--- a/x`, `+++ b/y`, `rename|copy from|to x`: the paths they name. */
const PATH_LINES = /^(?:diff --git (.+)|--- (.+)|\+\+\+ (.+)|(?:rename|copy) (?:from|to) (.+))$/;
/** git's file type for a symbolic link, in `new file mode`, `new mode` and `index a..b <mode>` lines. */
const SYMLINK_MODE = /^(?:new file mode|new mode) 120000$|^index [0-9a-f]+\.\.[0-9a-f]+ 120000$/;

/** Git's C-style quoting of unusual paths (`"a/sp ace\\t"`), undone far enough to judge the path. */
function unquote(path: string): string {
  if (!path.startsWith('"') || !path.endsWith('"')) return path;
  return path
    .slice(1, -1)
    .replace(/\\([0-7]{3}|.)/g, (_, escaped: string) =>
      /^[0-7]{3}$/.test(escaped)
        ? String.fromCharCode(Number.parseInt(escaped, 8))
        : escaped === 't'
          ? '\t'
          : escaped === 'n'
            ? '\n'
            : escaped,
    );
}

/** The two paths of a `diff --git` header (each may be quoted). */
function headerPaths(rest: string): string[] {
  const quoted = [...rest.matchAll(/"(?:[^"\\]|\\.)*"/g)].map((match) => match[0]);
  if (quoted.length > 0)
    return [
      ...quoted,
      ...rest
        .replace(/"(?:[^"\\]|\\.)*"/g, ' ')
        .trim()
        .split(/\s+/)
        .filter(Boolean),
    ];
  // Unquoted: `a/<path> b/<path>`, the path repeated; split in the middle when the halves agree.
  const middle = rest.indexOf(' b/');
  return middle > 0 ? [rest.slice(0, middle), rest.slice(middle + 1)] : rest.split(' ');
}

/** The repository-relative name of a path as a diff names it (`b/x` → `x`); null for /dev/null. */
function nameOf(path: string, prefixed: boolean): string | null {
  let name = unquote(path.split('\t')[0]!.trim());
  if (name === '/dev/null') return null;
  if (prefixed) name = name.replace(/^[ab]\//, '');
  return name;
}

/** Why `name` (repository-relative) may not be written, or undefined. */
function pathRefusal(name: string): string | undefined {
  if (name.startsWith('/') || /^[A-Za-z]:[\\/]/.test(name)) return 'is absolute';
  const segments = name.split(/[\\/]+/);
  if (segments.includes('..')) return 'leaves the repository (..)';
  if (segments.some((segment) => segment.toLowerCase() === '.git')) return 'writes into .git';
  if (name.includes('\0')) return 'holds a NUL byte';
  return undefined;
}

/** Why a symbolic link at `link` pointing to `target` may not be made, or undefined. */
function linkRefusal(link: string, target: string): string | undefined {
  if (target === '') return undefined;
  if (target.startsWith('/') || /^[A-Za-z]:[\\/]/.test(target)) return 'an absolute path, outside the repository';
  const resolved = posix.normalize(posix.join(posix.dirname(link), target.replace(/\\/g, '/')));
  if (resolved === '..' || resolved.startsWith('../')) return 'outside the repository (..)';
  if (resolved.split('/').some((segment) => segment.toLowerCase() === '.git')) return 'inside .git';
  return undefined;
}

const shown = (path: string): string => (path.length > 200 ? `${path.slice(0, 200)}…` : path);

/** One file section's symlink facts, gathered while reading it. */
interface Section {
  symlink: boolean;
  /** The link's path: the `+++` side, else the `diff --git` header's second path. */
  path: string | null;
  /** The `+` lines of its hunks: a link's new target. */
  added: string[];
  hunks: number;
}

/** The first thing `patch` does that the rules forbid, or undefined when it keeps to them. */
export function patchViolation(patch: string): PatchViolation | undefined {
  // Lines inside a hunk are content (a removed `-- x` reads `--- x`), skipped by the hunk's own counts.
  let oldLeft = 0;
  let newLeft = 0;
  let section: Section | null = null;
  const finish = (): PatchViolation | undefined => {
    if (!section?.symlink || section.path === null) return undefined;
    const target = section.added.join('\n');
    const why = linkRefusal(section.path, target);
    return why
      ? {
          path: shown(section.path),
          what: `makes ${JSON.stringify(shown(section.path))} a symbolic link to ${JSON.stringify(shown(target))}, which is ${why}`,
        }
      : undefined;
  };
  for (const raw of patch.split('\n')) {
    const line = raw.replace(/\r$/, '');
    if (oldLeft > 0 || newLeft > 0) {
      if (line.startsWith('\\')) continue;
      if (line.startsWith('+') && section) section.added.push(line.slice(1));
      if (!line.startsWith('+')) oldLeft -= 1;
      if (!line.startsWith('-')) newLeft -= 1;
      continue;
    }
    const hunk = /^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@/.exec(line);
    if (hunk) {
      oldLeft = hunk[1] === undefined ? 1 : Number(hunk[1]);
      newLeft = hunk[2] === undefined ? 1 : Number(hunk[2]);
      if (section) section.hunks += 1;
      continue;
    }
    if (line.startsWith('diff --git ')) {
      const violation = finish();
      if (violation) return violation;
      section = { symlink: false, path: null, added: [], hunks: 0 };
    }
    // A plain `---`/`+++` pair after a section's hunks starts a new (non-git) file section.
    if (line.startsWith('--- ') && section && section.hunks > 0) {
      const violation = finish();
      if (violation) return violation;
      section = { symlink: false, path: null, added: [], hunks: 0 };
    }
    if (section && SYMLINK_MODE.test(line)) section.symlink = true;
    const match = PATH_LINES.exec(line);
    if (!match) continue;
    const paths = match[1] !== undefined ? headerPaths(match[1]) : [match[2] ?? match[3] ?? match[4]!];
    const prefixed = match[4] === undefined;
    for (const path of paths) {
      const name = nameOf(path, prefixed);
      const why = name === null ? undefined : pathRefusal(name);
      if (why) return { path: shown(path), what: `writes ${JSON.stringify(shown(path))}, which ${why}` };
    }
    if (section && (match[1] !== undefined || match[3] !== undefined)) {
      const name = nameOf(paths.at(-1)!, true);
      if (name !== null) section.path = name;
    }
  }
  return finish();
}

/** The rules in one sentence, for error messages. */
export const PATCH_RULES =
  'patches may only change files inside the repository, outside .git, and may only make symbolic links that point inside it';
