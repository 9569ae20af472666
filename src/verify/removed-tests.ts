/**
 * Which tests a patch itself took away: a test file deleted or renamed, or a test function or
 * class whose definition the patch removes from a file without adding it back there. A test that
 * passed on base and is missing with such a candidate was removed by its own patch, not broken by
 * it (the regression check lists it apart; judging whether the removal is fair is the tamper
 * check's business).
 */
import type { RemovedTest } from '../types/checks.js';

/** What a patch removes: files gone (deleted, or renamed away) and, per file, the names of definitions it drops. */
export interface PatchRemovals {
  files: Set<string>;
  names: Map<string, Set<string>>;
}

const DEFINITION = /^\s*(?:async\s+)?(?:def|class)\s+(\w+)/;

export function patchRemovals(patch: string): PatchRemovals {
  const files = new Set<string>();
  const names = new Map<string, Set<string>>();
  for (const section of patch.split(/^(?=diff --git )/m)) {
    const header = /^diff --git a\/(\S+) b\/(\S+)$/m.exec(section);
    const oldPath = header?.[1] ?? /^--- (?:a\/)?(\S+)/m.exec(section)?.[1];
    if (!oldPath || oldPath === '/dev/null') continue;
    if (/^deleted file mode /m.test(section) || /^\+\+\+ \/dev\/null$/m.test(section) || /^rename from /m.test(section)) files.add(oldPath);
    const removed = new Set<string>();
    const added = new Set<string>();
    for (const line of section.split('\n')) {
      if (line.startsWith('---') || line.startsWith('+++')) continue;
      const name = DEFINITION.exec(line.slice(1))?.[1];
      if (!name) continue;
      if (line.startsWith('-')) removed.add(name);
      else if (line.startsWith('+')) added.add(name);
    }
    const dropped = [...removed].filter((name) => !added.has(name));
    if (dropped.length) names.set(oldPath, new Set(dropped));
  }
  return { files, names };
}

/** The dotted module of a Python file (`tests/a/b.py` → `tests.a.b`). */
const moduleOf = (file: string) => file.replace(/\.py$/, '').replace(/\//g, '.');

/**
 * The patched file `test` (a pytest node id `path::Class::name`, a unittest or Django id
 * `name (module.Class)` / `name (module.Class.name)`, or a bare SymPy name) is defined in, with
 * the names in it that identify the test; undefined when the id names none of `files`.
 */
function locate(test: string, files: string[]): { file: string | undefined; names: string[] } {
  const separator = test.indexOf('::');
  if (separator > 0) {
    const path = test.slice(0, separator);
    const names = test
      .slice(separator + 2)
      .split('::')
      .map((part) => part.replace(/\[.*$/, ''));
    return { file: files.find((file) => file === path), names };
  }
  const unittest = /^(\w+) \(([\w.]+)\)/.exec(test);
  if (unittest) {
    const dotted = unittest[2]!;
    const names = [unittest[1]!, ...dotted.split('.')];
    // Django's runner imports test modules from `tests/`: `utils_tests.tests` is `tests/utils_tests/tests.py`.
    const file = files.find((candidate) =>
      [moduleOf(candidate), moduleOf(candidate).replace(/^tests\./, '')].some(
        (module) => dotted === module || dotted.startsWith(`${module}.`),
      ),
    );
    return { file, names };
  }
  return { file: undefined, names: /^\w+$/.test(test) ? [test] : [] };
}

/** The tests of `missing` (passed on base, absent with the candidate) that the candidate's patch removed. */
export function removedByPatch(missing: Iterable<string>, removals: PatchRemovals): RemovedTest[] {
  const files = [...new Set([...removals.files, ...removals.names.keys()])];
  const found: RemovedTest[] = [];
  for (const test of missing) {
    const { file, names } = locate(test, files);
    if (file !== undefined) {
      if (removals.files.has(file) || names.some((name) => removals.names.get(file)?.has(name))) found.push({ test, file });
      continue;
    }
    // A bare name (SymPy) names no file: any file the patch drops it from.
    if (names.length === 1 && !test.includes(' ')) {
      const from = [...removals.names].find(([, dropped]) => dropped.has(names[0]!));
      if (from) found.push({ test, file: from[0] });
    }
  }
  return found.sort((a, b) => (a.test < b.test ? -1 : a.test > b.test ? 1 : 0));
}
