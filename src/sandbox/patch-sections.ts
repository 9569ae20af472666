/** A unified diff cut into its per-file sections, for the modules that keep or drop whole files of a patch. */

/** The `diff --git ...` sections of `diff`, each up to the next; text before the first is a section of its own. */
export function splitSections(diff: string): string[] {
  const starts = [...diff.matchAll(/^diff --git /gm)].map((match) => match.index);
  if (starts.length === 0) return diff === '' ? [] : [diff];
  const sections = starts[0]! > 0 ? [diff.slice(0, starts[0])] : [];
  starts.forEach((start, index) => sections.push(diff.slice(start, starts[index + 1] ?? diff.length)));
  return sections;
}
