/**
 * Canonical form of a patch for consensus voting: two patches that make the same edits normalize
 * to the same text even when their diffs were written differently.
 *
 * Removed as noise: `diff --git` and `index` lines, file mode lines, timestamps and the `a/` `b/`
 * prefixes of file headers, hunk header line numbers and context counts, context lines, the way
 * edits are split into hunks, `\ No newline at end of file` markers, trailing whitespace (and CR)
 * on every line, the order of files, and the interleaving of `-` and `+` lines inside one block.
 *
 * Kept: per file, whether it is new, deleted, renamed or copied, and its paths; then the
 * sequence of change blocks (a maximal run of `-`/`+` lines), each as its removed lines then its
 * added lines, in file order. Binary payloads are kept verbatim.
 *
 * Known limit: a block's position is not kept (line numbers are noise here), so two patches that
 * insert the same lines at different places of the same file, and differ in nothing else,
 * normalize the same.
 */
import { patchShape, type FileDiff } from './patch-shape.js';

export interface NormalizedPatch {
  /** The canonical text; equal keys mean equal edits. */
  key: string;
  /** Paths touched, sorted. */
  files: string[];
  /** Added plus removed lines. */
  changedLines: number;
}

/** Normalizes `patch`; null when it is empty or unparseable (see `patchShape`). */
export function normalizePatch(patch: string): NormalizedPatch | null {
  const shape = patchShape(patch);
  if (shape.kind !== 'ok') return null;
  return normalizeFiles(shape.files, shape.added + shape.removed);
}

/** Normalizes already-parsed file sections. */
export function normalizeFiles(files: FileDiff[], changedLines: number): NormalizedPatch {
  const sections = files.map((file) => ({ path: file.newPath ?? file.oldPath ?? '', text: renderFile(file) }));
  sections.sort((a, b) => compareText(a.path, b.path) || compareText(a.text, b.text));
  return {
    key: sections.map((section) => section.text).join('\n'),
    files: [...new Set(sections.map((section) => section.path))],
    changedLines,
  };
}

function renderFile(file: FileDiff): string {
  const out = [fileLabel(file)];
  for (const line of file.binary) out.push(`binary ${line.trimEnd()}`);
  for (const hunk of file.hunks) {
    let removed: string[] = [];
    let added: string[] = [];
    const flush = (): void => {
      if (removed.length + added.length === 0) return;
      // One push per line: a block can hold hundreds of thousands of lines (a large new file).
      out.push('@');
      for (const text of removed) out.push(`-${text}`);
      for (const text of added) out.push(`+${text}`);
      removed = [];
      added = [];
    };
    for (const line of hunk) {
      if (line.op === ' ') flush();
      else (line.op === '-' ? removed : added).push(line.text.trimEnd());
    }
    flush();
  }
  return out.join('\n');
}

function fileLabel(file: FileDiff): string {
  if (file.oldPath === null) return `new ${file.newPath ?? ''}`;
  if (file.newPath === null) return `deleted ${file.oldPath}`;
  if (file.oldPath === file.newPath) return `modified ${file.newPath}`;
  const copied = file.headerChanges.some((line) => line.startsWith('copy '));
  return `${copied ? 'copied' : 'renamed'} ${file.oldPath} -> ${file.newPath}`;
}

/** Code-unit order, independent of locale. */
function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
