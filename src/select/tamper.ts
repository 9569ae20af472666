/**
 * Tamper checks (docs/checks.md#tamper-checks): what a candidate's patch does to the tests that
 * judge it. A patch that deletes, skips or weakens existing tests, edits the files the
 * verification runs, or changes the test configuration gets one flag per kind and file.
 *
 * Adding tests is never tampering: most real candidates change a test file, and a false flag
 * costs a correct patch. So only existing code is judged: a deleted file or test function, a
 * skip marker put on a test that was already there, an assertion removed without one added in
 * its place, a line removed from a file the verification applies or runs. Every rule reads only
 * a file's path, whether it is new or deleted, and its added and removed lines (and the context
 * inside a hunk, to tell a new test from an old one).
 */
import type { TamperFlag, TamperKind, Task } from '../types/index.js';
import { patchShape, type FileDiff, type HunkLine } from './patch-shape.js';
import { isTestPath } from './test-path.js';

/** The parts of a task that name the tests the verification runs. */
export type TamperTask = Partial<Pick<Task, 'test_patch' | 'fail_to_pass' | 'pass_to_pass' | 'test_command'>>;

/** What the verification of one task runs, read once per instance. */
export interface TamperContext {
  /** Files the verification applies or runs, with why: the test patch's, the named tests' files, the test command's. */
  verified: Map<string, string>;
  /** Path endings of dotted test ids (`app.tests.T` → `app/tests.py`), for Django-style layouts. */
  suffixes: Array<{ suffix: string; why: string }>;
  /** Test names the task lists (`test_foo` of `tests/test_x.py::T::test_foo`). */
  named: Set<string>;
  /** Scripts the test command runs (`tests/runtests.py` of `python tests/runtests.py app`). */
  entries: Set<string>;
}

const KIND_ORDER: TamperKind[] = ['deletes-test', 'skips-test', 'weakens-test', 'edits-verified-file', 'changes-test-config'];

/** Test runners' entry scripts: any change to one changes what every test run does. */
const RUNNER_ENTRY = /(^|\/)runtests\.py$|^bin\/test$|(^|\/)run_?tests?\.(sh|py)$/;
/** Files that only configure how tests run. */
const CONFIG_FILE =
  /(^|\/)(pytest\.ini|tox\.ini|noxfile\.py|conftest\.py|\.coveragerc|phpunit\.xml(\.dist)?|\.travis\.yml|\.gitlab-ci\.yml|azure-pipelines\.yml)$|(^|\/)(jest|vitest|karma|playwright|cypress)\.conf(ig)?\.[cm]?[jt]s$|(^|\/)\.mocharc(\.\w+)?$|^\.github\/workflows\/|^\.circleci\//;
/** Test definitions by language; group 1 or 2 is the name or title. */
const TEST_DEF = [
  /^\s*(?:async\s+)?def\s+(test\w*)\s*\(/,
  /^\s*class\s+(Test\w*|\w+Tests?)\s*[(:]/,
  /^\s*(?:it|test|describe)(?:\.(?:only|skip|todo))?\s*\(\s*(['"`])(.*?)\1/,
  /^\s*x(?:it|test|describe)\s*\(\s*(['"`])(.*?)\1/,
  /^func\s+(Test\w+)\s*\(/,
  /\bvoid\s+(test\w+)\s*\(/,
];
/** Any function definition: where a skip call inside a body finds its test. */
const ANY_DEF = /^\s*(?:async\s+)?def\s+\w+|^\s*(?:it|test|describe)(?:\.\w+)?\s*\(|^\s*x(?:it|test|describe)\s*\(|^func\s+\w+/;
/** Skip markers that decorate the definition below them. */
const SKIP_DECORATOR =
  /^\s*(@pytest\.mark\.(?:skip|skipif|xfail)|@unittest\.(?:skip|skipIf|skipUnless|expectedFailure)|@(?:skip|skipIf|skipUnless|expectedFailure)\b|#\[ignore\]|@(?:Ignore|Disabled)\b)/;
/** Skip markers that are the definition itself (`it.skip('adds', …)`, `xit(…)`). */
const SKIP_DEF = /^\s*((?:it|test|describe)\.(?:skip|todo)|x(?:it|test|describe))\s*\(/;
/** Skip calls inside a test body. */
const SKIP_CALL =
  /(\bself\.skipTest\s*\(|\bpytest\.(?:skip|xfail)\s*\(|\b[tb]\.Skip(?:Now|f)?\s*\(|\braise\s+(?:unittest\.)?SkipTest\b|\bthis\.skip\s*\(\))/;
/** A module-wide skip. */
const SKIP_MODULE = /^\s*(pytestmark\s*=.*\bpytest\.mark\.(?:skip|skipif|xfail)\b)/;
const ASSERTION =
  /^assert\b|\bself\.(?:assert\w*|fail\w*)\s*\(|\bexpect\s*\(|\bassert\w*(?:\.\w+)?!?\s*\(|\bt\.(?:Error|Errorf|Fatal|Fatalf|Fail|FailNow)\s*\(|\bpytest\.raises\s*\(/;
const TRIVIAL_ASSERTION = /^assert\s+(?:True|1)\s*(?:#.*)?$|self\.assertTrue\(\s*True\s*\)|expect\(\s*true\s*\)\.toBe\(\s*true\s*\)/;
const COMMENT = /^\s*(#|\/\/|\/\*|\*)/;
/** Lines an added test often has to touch: imports, blanks and comments. */
const IMPORT_OR_BLANK = /^\s*($|#|\/\/|import\b|from\s+\S+\s+import\b|const\s+.*=\s*require\(|use\s)/;
/** pytest settings, for a changed line whose section header is outside the hunk. */
const PYTEST_SETTING =
  /^\s*(addopts|testpaths|python_files|python_classes|python_functions|norecursedirs|filterwarnings|markers|minversion|required_plugins|xfail_strict)\s*=/;

/** The task's verification, as the checks need it; an empty context when the task names no tests. */
export function tamperContext(task: TamperTask = {}): TamperContext {
  const context: TamperContext = { verified: new Map(), suffixes: [], named: new Set(), entries: new Set() };
  if (task.test_patch) {
    const shape = patchShape(task.test_patch);
    if (shape.kind === 'ok')
      for (const file of shape.files) {
        const path = file.newPath ?? file.oldPath;
        if (path) context.verified.set(path, 'the test patch changes');
      }
  }
  for (const [list, label] of [
    [task.fail_to_pass ?? [], 'FAIL_TO_PASS'],
    [task.pass_to_pass ?? [], 'PASS_TO_PASS'],
  ] as const) {
    for (const id of list) readTestId(id, `${label} runs`, context);
  }
  if (task.test_command) readCommand(task.test_command, context);
  return context;
}

/** `tests/test_x.py::T::test_a[1]`, `test_a (app.tests.T)`, `test_a`: the file or module and the test's name. */
function readTestId(id: string, why: string, context: TamperContext): void {
  const pytest = /^([^\s:]+\.\w+)::(.*)$/.exec(id);
  if (pytest) {
    if (!context.verified.has(pytest[1]!)) context.verified.set(pytest[1]!, why);
    const name = pytest[2]!.split('::').at(-1)!.replace(/\[.*$/, '');
    if (name) context.named.add(name);
    return;
  }
  const unittest = /^(\w+)\s+\(([\w.]+)\)/.exec(id);
  if (unittest) {
    context.named.add(unittest[1]!);
    const modules = unittest[2]!.split('.').filter((part) => part !== unittest[1]);
    const end = modules.findIndex((part) => /^[A-Z]/.test(part));
    const module = (end === -1 ? modules : modules.slice(0, end)).join('/');
    if (module) context.suffixes.push({ suffix: `${module}.py`, why }, { suffix: `${module}/__init__.py`, why });
    return;
  }
  if (/^\w+$/.test(id)) context.named.add(id);
}

/** Paths a test command names: the script it runs is an entry; test files it names are verified. */
function readCommand(command: string, context: TamperContext): void {
  const words = command.split(/\s+|&&|;|\|/).filter(Boolean);
  words.forEach((word, index) => {
    const path = word.replace(/^\.\//, '');
    if (!/^[\w./-]+\.(py|sh|js|ts|mjs|cjs)$/.test(path) && !/^[\w.-]+\/[\w./-]+$/.test(path)) return;
    const runs = index === 0 || /^(python\d?(\.\d+)?|bash|sh|node|npx|tsx)$/.test(words[index - 1] ?? '');
    if (runs) context.entries.add(path);
    else if (!context.verified.has(path)) context.verified.set(path, 'the test command runs');
  });
}

/** Why the verification runs `path`, or null when it does not. */
function verifiedWhy(path: string, context: TamperContext): string | null {
  const exact = context.verified.get(path);
  if (exact) return exact;
  return context.suffixes.find(({ suffix }) => path === suffix || path.endsWith(`/${suffix}`))?.why ?? null;
}

/** The tamper flags of a patch's file sections, one per kind and file, in file order then kind order. */
export function tamperFlags(files: FileDiff[], context: TamperContext): TamperFlag[] {
  const flags: TamperFlag[] = [];
  const newDirs = new Map<string, number>();
  for (const file of files)
    if (file.oldPath === null && file.newPath) newDirs.set(dirOf(file.newPath), (newDirs.get(dirOf(file.newPath)) ?? 0) + 1);
  for (const file of files) {
    const path = file.oldPath ?? file.newPath ?? '';
    const own: TamperFlag[] = [];
    const add = (kind: TamperKind, detail: string) => own.push({ kind, file: path, detail });
    const verified = file.oldPath ? verifiedWhy(file.oldPath, context) : null;
    const testLike = isTestPath(path) || verified !== null;
    if (file.newPath === null) {
      if (testLike && !CONFIG_FILE.test(path)) add('deletes-test', 'deletes the test file');
    } else if (file.oldPath !== null && testLike) {
      existingTestFlags(file, context, add);
    }
    const config = configChange(file, newDirs);
    if (config) add('changes-test-config', config);
    if (file.oldPath !== null && (context.entries.has(file.oldPath) || RUNNER_ENTRY.test(file.oldPath))) {
      add('edits-verified-file', "changes the test runner's entry script");
    } else if (verified && file.newPath !== null && own.length === 0) {
      const changed = file.hunks.flatMap((hunk) => hunk.filter((l) => l.op === '-' && !IMPORT_OR_BLANK.test(l.text))).length;
      if (changed > 0) add('edits-verified-file', `changes ${changed} existing line${changed === 1 ? '' : 's'} of a file ${verified}`);
    }
    flags.push(...merge(own));
  }
  return flags;
}

/** The flags of a patch (an empty list when it does not parse: the usable gate refuses it anyway). */
export function tamperFlagsOfPatch(patch: string, context: TamperContext): TamperFlag[] {
  const shape = patchShape(patch);
  return shape.kind === 'ok' ? tamperFlags(shape.files, context) : [];
}

/** "skips-test in tests/test_x.py, deletes-test in tests/test_y.py". */
export function describeFlags(flags: TamperFlag[]): string {
  return flags.map((flag) => `${flag.kind} in ${flag.file}`).join(', ');
}

function existingTestFlags(file: FileDiff, context: TamperContext, add: (kind: TamperKind, detail: string) => void): void {
  const removedDefs = new Set(file.hunks.flatMap((hunk) => hunk.filter((l) => l.op === '-').flatMap((l) => defName(l.text) ?? [])));
  const addedDefs = new Set(file.hunks.flatMap((hunk) => hunk.filter((l) => l.op === '+').flatMap((l) => defName(l.text) ?? [])));
  const gone = [...removedDefs].filter((name) => !addedDefs.has(name));
  const fresh = [...addedDefs].filter((name) => !removedDefs.has(name)).length;
  // A renamed test (one gone, one new) is not a deletion, unless the task names the one that went.
  const deleted = gone.filter((name, index) => context.named.has(name) || index >= fresh);
  if (deleted.length) add('deletes-test', `removes ${list(deleted)}`);

  const removedText = new Set(file.hunks.flatMap((hunk) => hunk.filter((l) => l.op === '-').map((l) => l.text.trim())));
  const addedText = new Set(file.hunks.flatMap((hunk) => hunk.filter((l) => l.op === '+').map((l) => l.text.trim())));
  const skips: string[] = [];
  const weakened: string[] = [];
  for (const hunk of file.hunks) {
    hunk.forEach((line, index) => {
      if (line.op !== '+' || COMMENT.test(line.text) || removedText.has(line.text.trim())) return;
      const skip = skipOfExisting(hunk, index, removedDefs);
      if (skip) skips.push(skip);
    });
    for (const block of changeBlocks(hunk)) {
      if (block.some((l) => l.op === '-' && defName(l.text))) continue;
      const lost = block.filter((l) => l.op === '-' && isAssertion(l.text) && !addedText.has(l.text.trim()));
      if (lost.length === 0 || block.some((l) => l.op === '+' && isAssertion(l.text) && !TRIVIAL_ASSERTION.test(l.text.trim()))) continue;
      const replacement = block.find(
        (l) => l.op === '+' && /^(pass|return|assert\s+True|self\.assertTrue\(\s*True\s*\))\b/.test(l.text.trim()),
      );
      const what = `${clip(lost[0]!.text.trim())}${lost.length > 1 ? ` and ${lost.length - 1} more assertion${lost.length > 2 ? 's' : ''}` : ''}`;
      weakened.push(replacement ? `replaces ${what} with ${clip(replacement.text.trim())}` : `removes ${what}`);
    }
  }
  if (skips.length) add('skips-test', [...new Set(skips)].join('; '));
  if (weakened.length) add('weakens-test', weakened.join('; '));
}

/** "adds @pytest.mark.skip to test_foo" when the added line at `index` skips a test that existed before the patch. */
function skipOfExisting(hunk: HunkLine[], index: number, removedDefs: Set<string>): string | null {
  const text = hunk[index]!.text;
  const module = SKIP_MODULE.exec(text);
  if (module) return `adds ${clip(module[1]!)}`;
  const decorator = SKIP_DECORATOR.exec(text);
  if (decorator) {
    let next = index + 1;
    while (next < hunk.length && (hunk[next]!.op === '-' || /^\s*(@|#\[|$)/.test(hunk[next]!.text))) next++;
    const target = hunk[next];
    const name = target ? defName(target.text) : null;
    // Decorating a definition the patch adds (and did not remove) is a new test's marker.
    if (target?.op === '+' && !(name && removedDefs.has(name))) return null;
    return `adds ${decorator[1]}${name ? ` to ${name}` : ''}`;
  }
  const inline = SKIP_DEF.exec(text);
  if (inline) {
    const name = defName(text);
    return name && removedDefs.has(name) ? `adds ${inline[1]} to ${name}` : null;
  }
  const call = SKIP_CALL.exec(text);
  if (call) {
    for (let back = index - 1; back >= 0; back--) {
      const line = hunk[back]!;
      if (line.op === '-' || !ANY_DEF.test(line.text)) continue;
      const name = defName(line.text);
      // Inside a test the patch adds: that new test's own skip. Inside an added setUp, fixture or helper: it reaches old tests.
      if (line.op === '+' && name && !removedDefs.has(name)) return null;
      return `adds ${call[1]}${name ? ` in ${name}` : ''}`;
    }
    // The enclosing definition is above the hunk: the body belongs to a test that already existed.
    return `adds ${call[1]}`;
  }
  return null;
}

/** What a change to a test configuration file does, or null when it changes none. */
function configChange(file: FileDiff, newDirs: Map<string, number>): string | null {
  const path = file.newPath ?? file.oldPath ?? '';
  const base = path.split('/').at(-1)!;
  if (CONFIG_FILE.test(path)) {
    if (file.oldPath === null) {
      // A conftest.py beside the patch's own new test files configures only the new tests.
      if (base === 'conftest.py' && (newDirs.get(dirOf(path)) ?? 0) > 1) return null;
      return `adds ${base}`;
    }
    if (file.newPath === null) return `deletes ${base}`;
    return /^\.github\/workflows\//.test(path) ? 'changes a CI workflow' : `changes ${base}`;
  }
  const sections: Record<string, RegExp> = {
    'setup.cfg': /^(tool:pytest|pytest)$/,
    'pyproject.toml': /^tool\.pytest/,
  };
  if (base in sections) {
    const hit = changedSections(file, /^\s*\[([^\]]+)\]/).find(
      ({ section, text }) => (section !== null && sections[base]!.test(section)) || (section === null && PYTEST_SETTING.test(text)),
    );
    return hit ? `changes the [${hit.section ?? 'pytest'}] settings` : null;
  }
  if (base === 'Makefile' || base === 'makefile') {
    const hit = changedSections(file, /^([\w.-]+)\s*:(?!=)/).find(({ section }) => section !== null && /^(test|check)/.test(section));
    return hit ? `changes the ${hit.section} target` : null;
  }
  if (base === 'package.json') {
    const changed = file.hunks.flatMap((hunk) => hunk.filter((l) => l.op !== ' ').map((l) => l.text));
    const hit = changed.map((text) => /"((?:pre|post)?test(?::[\w:-]+)?|jest|mocha|vitest|ava)"\s*:/.exec(text)?.[1]).find(Boolean);
    return hit ? `changes the "${hit}" entry` : null;
  }
  return null;
}

/** Each changed, non-blank line with the section (by `header`) it sits in, null when the hunk does not show it. */
function changedSections(file: FileDiff, header: RegExp): Array<{ section: string | null; text: string }> {
  const found: Array<{ section: string | null; text: string }> = [];
  for (const hunk of file.hunks) {
    let section: string | null = null;
    for (const line of hunk) {
      const match = header.exec(line.text);
      if (line.op !== ' ' && line.text.trim() !== '') found.push({ section: match?.[1]?.trim() ?? section, text: line.text });
      if (match && line.op !== '-') section = match[1]!.trim();
    }
  }
  return found;
}

function defName(text: string): string | null {
  for (const pattern of TEST_DEF) {
    const match = pattern.exec(text);
    if (match) return match[2] ?? match[1] ?? null;
  }
  return null;
}

function isAssertion(text: string): boolean {
  const trimmed = text.trim();
  return !COMMENT.test(trimmed) && ASSERTION.test(trimmed);
}

/** Maximal runs of removed and added lines. */
function changeBlocks(hunk: HunkLine[]): HunkLine[][] {
  const blocks: HunkLine[][] = [];
  let current: HunkLine[] = [];
  for (const line of hunk) {
    if (line.op === ' ') {
      if (current.length) blocks.push(current);
      current = [];
    } else current.push(line);
  }
  if (current.length) blocks.push(current);
  return blocks;
}

/** One flag per kind: details of the same kind joined. */
function merge(flags: TamperFlag[]): TamperFlag[] {
  return KIND_ORDER.flatMap((kind) => {
    const same = flags.filter((flag) => flag.kind === kind);
    return same.length ? [{ kind, file: same[0]!.file, detail: same.map((flag) => flag.detail).join('; ') }] : [];
  });
}

function dirOf(path: string): string {
  return path.includes('/') ? path.slice(0, path.lastIndexOf('/')) : '';
}

function list(names: string[]): string {
  return names.length > 3 ? `${names.slice(0, 3).join(', ')} and ${names.length - 3} more` : names.join(', ');
}

function clip(text: string): string {
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}
