/**
 * A light unified-diff reader: enough to tell an empty or broken patch from one `git apply` could
 * take, and to hand the file sections to `normalize-patch.ts`. It checks structure only (file
 * headers, hunk headers, hunk bodies against their line counts), never the repository.
 *
 * Tolerated, as git does: text before the first file (commit message, prose), text between
 * files, a blank line inside a hunk standing for an empty context line, `\ No newline at end of
 * file` markers, CRLF line ends, and git's header-only sections (rename, mode change, new empty
 * file, binary).
 */

/** One line of a hunk body. */
export interface HunkLine {
  op: ' ' | '-' | '+';
  text: string;
}

/** One file section of a patch. */
export interface FileDiff {
  /** Path before the change, prefixes and timestamps removed; null when the file is new. */
  oldPath: string | null;
  /** Path after the change; null when the file is deleted. */
  newPath: string | null;
  /** Hunk bodies in patch order. */
  hunks: HunkLine[][];
  /** git extended headers that describe a change by themselves (rename, copy, mode, binary). */
  headerChanges: string[];
  /** Literal lines of a `GIT binary patch` payload, or the `Binary files ... differ` line. */
  binary: string[];
}

export type PatchShape =
  | { kind: 'ok'; files: FileDiff[]; added: number; removed: number }
  | { kind: 'empty'; why: string }
  | { kind: 'unparseable'; why: string; line: number | null };

/** Parser state for one file section: whether ---/+++ was seen, whether it began with diff --git. */
type Section = FileDiff & { hasFileHeader: boolean; git: boolean };

const HUNK_HEADER = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/;
const HEADER_CHANGE =
  /^(old mode|new mode|deleted file mode|new file mode|rename from|rename to|copy from|copy to|similarity index|dissimilarity index) ?(.*)$/;

/** Reads `patch` and says whether it is empty, broken (with the first problem) or usable. */
export function patchShape(patch: string): PatchShape {
  if (patch.trim() === '') return { kind: 'empty', why: 'patch empty' };
  const lines = patch.replace(/\r\n/g, '\n').split('\n');
  if (lines.at(-1) === '') lines.pop();
  const files: Section[] = [];
  let current: Section | null = null;
  let added = 0;
  let removed = 0;

  const startFile = (git: boolean): Section => {
    const file: Section = { oldPath: null, newPath: null, hunks: [], headerChanges: [], binary: [], hasFileHeader: false, git };
    files.push(file);
    return file;
  };

  for (let index = 0; index < lines.length; index++) {
    const line = lines[index]!;
    if (line.startsWith('diff --git ')) {
      current = startFile(true);
      const paths = gitHeaderPaths(line.slice('diff --git '.length));
      current.oldPath = paths?.[0] ?? null;
      current.newPath = paths?.[1] ?? null;
      continue;
    }
    if (line.startsWith('--- ') && lines[index + 1]?.startsWith('+++ ')) {
      if (!current || current.hasFileHeader || current.hunks.length > 0 || !current.git) current = startFile(false);
      current.oldPath = headerPath(line.slice(4), 'a/');
      current.newPath = headerPath(lines[index + 1]!.slice(4), 'b/');
      current.hasFileHeader = true;
      index++;
      continue;
    }
    if (line.startsWith('@@')) {
      const header = HUNK_HEADER.exec(line);
      if (!header) return broken(`malformed hunk header "${clip(line)}"`, index);
      if (!current?.hasFileHeader) return broken('hunk without a ---/+++ file header', index);
      let oldLeft = header[2] === undefined ? 1 : Number(header[2]);
      let newLeft = header[4] === undefined ? 1 : Number(header[4]);
      const body: HunkLine[] = [];
      while (oldLeft > 0 || newLeft > 0) {
        index++;
        if (index >= lines.length) return broken(`patch ends inside a hunk (${oldLeft} old and ${newLeft} new lines missing)`, index - 1);
        const bodyLine = lines[index]!;
        const op = bodyLine === '' ? ' ' : bodyLine[0];
        if (op === '\\') continue;
        if (op === ' ' && oldLeft > 0 && newLeft > 0) {
          oldLeft--;
          newLeft--;
        } else if (op === '-' && oldLeft > 0) {
          oldLeft--;
          removed++;
        } else if (op === '+' && newLeft > 0) {
          newLeft--;
          added++;
        } else
          return broken(
            `hunk body does not match its header (${oldLeft} old and ${newLeft} new lines expected, got "${clip(bodyLine)}")`,
            index,
          );
        body.push({ op, text: bodyLine.slice(1) });
      }
      if (lines[index + 1]?.startsWith('\\')) index++;
      current.hunks.push(body);
      continue;
    }
    if (current?.git && !current.hasFileHeader && current.hunks.length === 0) {
      const change = HEADER_CHANGE.exec(line);
      if (change) {
        if (!/^(similarity|dissimilarity) index$/.test(change[1]!)) current.headerChanges.push(line);
        if (change[1] === 'rename from' || change[1] === 'copy from') current.oldPath = unquote(change[2]!);
        if (change[1] === 'rename to' || change[1] === 'copy to') current.newPath = unquote(change[2]!);
        if (change[1] === 'new file mode') current.oldPath = null;
        if (change[1] === 'deleted file mode') current.newPath = null;
        continue;
      }
      if (line.startsWith('Binary files ')) {
        current.binary.push(line);
        continue;
      }
      if (line === 'GIT binary patch') {
        while (index + 1 < lines.length && !lines[index + 1]!.startsWith('diff --git ')) current.binary.push(lines[++index]!);
      }
    }
    // Anything else outside a hunk (index lines, prose, trailing garbage) is ignored, as git does.
  }

  if (files.length === 0) return broken('no file header or hunk found', null);
  for (const file of files) {
    const empty = file.hunks.length === 0 && file.headerChanges.length === 0 && file.binary.length === 0;
    if (empty) return broken(`file ${file.newPath ?? file.oldPath ?? '?'} has a header but no hunks`, null);
  }
  const headerOnly = files.some((file) => file.headerChanges.length > 0 || file.binary.length > 0);
  if (added + removed === 0 && !headerOnly) return { kind: 'empty', why: 'patch changes no line' };
  const clean = files.map(({ oldPath, newPath, hunks, headerChanges, binary }) => ({ oldPath, newPath, hunks, headerChanges, binary }));
  return { kind: 'ok', files: clean, added, removed };
}

function broken(why: string, index: number | null): PatchShape {
  return { kind: 'unparseable', why: index === null ? why : `line ${index + 1}: ${why}`, line: index === null ? null : index + 1 };
}

function clip(text: string): string {
  return text.length > 40 ? `${text.slice(0, 40)}…` : text;
}

/** `--- a/x.py\t2024-01-01 ...` → `x.py`; `/dev/null` → null. */
function headerPath(raw: string, prefix: string): string | null {
  const path = unquote(raw.split('\t')[0]!.trimEnd());
  if (path === '/dev/null') return null;
  return path.startsWith(prefix) ? path.slice(prefix.length) : path;
}

/** `a/x.py b/x.py` → [`x.py`, `x.py`]; null when the split is ambiguous. */
function gitHeaderPaths(rest: string): [string, string] | null {
  if (rest.startsWith('"')) {
    const match = /^("(?:[^"\\]|\\.)*") ("(?:[^"\\]|\\.)*"|\S+)$/.exec(rest);
    if (!match) return null;
    return [stripPrefix(unquote(match[1]!), 'a/'), stripPrefix(unquote(match[2]!), 'b/')];
  }
  const half = (rest.length - 1) / 2;
  if (Number.isInteger(half) && rest[half] === ' ' && rest.slice(2, half) === rest.slice(half + 3)) {
    return [stripPrefix(rest.slice(0, half), 'a/'), stripPrefix(rest.slice(half + 1), 'b/')];
  }
  const split = rest.indexOf(' b/');
  return split > 0 ? [stripPrefix(rest.slice(0, split), 'a/'), rest.slice(split + 3)] : null;
}

function stripPrefix(path: string, prefix: string): string {
  return path.startsWith(prefix) ? path.slice(prefix.length) : path;
}

/** git quotes paths with unusual characters: `"a/sp ace\tx"`. */
function unquote(path: string): string {
  if (!(path.length >= 2 && path.startsWith('"') && path.endsWith('"'))) return path;
  return path.slice(1, -1).replace(/\\(["\\tn])/g, (_, c: string) => (c === 't' ? '\t' : c === 'n' ? '\n' : c));
}
