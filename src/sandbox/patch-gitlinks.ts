/**
 * Submodule (gitlink) sections of a patch, taken out before `git apply` on every provider.
 *
 * `git diff` in a checkout with a submodule prints a section per gitlink whose commit moved or
 * whose folder has local changes (`+Subproject commit <sha>-dirty`), and agents' patches carry
 * them. `git apply` without `--index`, which is how every provider applies, cannot apply a
 * submodule change to the working tree: it drops the section's hunks and only removes and re-makes
 * the submodule's folder (docs/verify.md#submodule-changes). On an overlay workspace re-making a
 * folder of the lower layer could fail with EIO, failing the whole patch. So the sections are
 * taken out and the rest applied, which is what `git apply` leaves in the working tree anyway; the
 * caller is told which, so the evidence can say so.
 */
import { splitSections } from './patch-sections.js';
import type { GitlinkChange } from './types.js';

export interface GitlinkSplit {
  /** The patch without its submodule sections (the input itself when it has none). */
  patch: string;
  /** The submodule sections left out, in patch order. */
  dropped: GitlinkChange[];
}

const SUBPROJECT_LINE = /^([-+])Subproject commit ([0-9a-f]{7,64})(-dirty)?$/;
const GITLINK_MODE = /^(?:new file mode|deleted file mode|old mode|new mode|index [0-9a-f]+\.\.[0-9a-f]+) 160000$/m;

/** Splits the submodule sections off `patch`. */
export function splitGitlinks(patch: string): GitlinkSplit {
  if (!patch.includes('Subproject commit ') && !patch.includes(' 160000')) return { patch, dropped: [] };
  const kept: string[] = [];
  const dropped: GitlinkChange[] = [];
  for (const section of splitSections(patch)) {
    const change = gitlinkChange(section);
    if (change) dropped.push(change);
    else kept.push(section);
  }
  return dropped.length === 0 ? { patch, dropped } : { patch: kept.join(''), dropped };
}

/** The change a `diff --git` section makes to a gitlink, or undefined when it is not one. */
function gitlinkChange(section: string): GitlinkChange | undefined {
  const header = /^diff --git a\/(.*?) b\/(.*)$/m.exec(section);
  if (!header || !section.startsWith('diff --git ')) return undefined;
  const lines = section.split('\n');
  const start = lines.findIndex((line) => line.startsWith('@@ '));
  const body = start < 0 ? [] : lines.slice(start).filter((line) => line !== '' && !line.startsWith('@@ ') && !line.startsWith('\\'));
  const subproject = body.map((line) => SUBPROJECT_LINE.exec(line));
  const headerText = start < 0 ? section : lines.slice(0, start).join('\n');
  // A section is a gitlink's when git names mode 160000 in its header, or when every line of its
  // hunks is a `Subproject commit` line (agents' patches often lose the index line).
  const allSubproject = body.length > 0 && subproject.every((match) => match !== null);
  if (!GITLINK_MODE.test(headerText) && !allSubproject) return undefined;
  if (body.length > 0 && !allSubproject) return undefined;
  const old = subproject.find((match) => match?.[1] === '-');
  const now = subproject.find((match) => match?.[1] === '+');
  const path = header[2] ?? header[1] ?? '';
  if (/^deleted file mode 160000$/m.test(headerText) || (old && !now)) return { path, kind: 'removed' };
  if (/^new file mode 160000$/m.test(headerText) || (now && !old)) return { path, kind: 'added' };
  if (old && now && old[2] === now[2] && now[3] && !old[3]) return { path, kind: 'dirty' };
  return { path, kind: 'moved' };
}

/** One line for the evidence: "submodule changes left out (git apply cannot apply them): vendor/lib (dirty)". */
export function describeDroppedGitlinks(dropped: readonly GitlinkChange[]): string | undefined {
  if (dropped.length === 0) return undefined;
  const list = dropped.map((change) => `${change.path} (${change.kind})`).join(', ');
  return `submodule changes left out when applying (git apply does not apply them to the working tree): ${list}`;
}
