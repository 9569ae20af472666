/**
 * Comments cite only documents inside the repository: no design note outside it (`shared/design`,
 * the notes' own file names, a bare "pitfall N" or "§N" with no docs/ page in the same comment),
 * and every `docs/….md` path, with its `#anchor`s, resolves. Design pages give each entry an
 * explicit `<a id>` anchor (docs/design/README.md). Markdown links in the folder READMEs and the
 * design pages must resolve too.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, extname, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '../..');
const SCANNED = ['src', 'test', 'bench', 'scripts', '.ci'];
/** Recorded inputs (trajectories, logs) are data, not ours; this file plants bad references on purpose. */
const SKIPPED = ['test/fixtures', 'test/architecture/doc-references.unit.test.ts'];
/** Pages of ours whose markdown links are checked besides the scanned folders' .md files. */
const PAGES = ['docs/design', 'docs/architecture.md', 'CONTRIBUTING.md'];

const CODE = new Set(['.ts', '.js', '.mjs', '.cjs']);
const HASH_COMMENTS = new Set(['.sh', '.py', '.yaml', '.yml', '']);

/** The notes outside the repository that docs/design replaced, by path or by file name. */
const OUTSIDE_NOTE =
  /shared\/design|(?<![\w/.-])(?:design\/)?(?:orchard-real-behaviour|orchard-env-api|docker-real|local-sandbox|defects-found|value-model-apis|value-models-2026|harbor-atif|code-review)\.md/;
const BARE_SECTION = /§\s?\d[\w.]*|\bpitfalls? \d+/i;
/** A repository-rooted docs path (`../` prefixes allowed), its anchor, and more anchors of the same page (`, #3`, ` and #4`). */
const DOCS_PATH = /(?<![\w-])docs\/[\w./-]*?\.md((?:#[\w.-]+)(?:\s*(?:,|and|or|&)\s*#[\w.-]+)*)?/g;
const MARKDOWN_LINK = /\]\(([^()\s]+)\)/g;

interface Unit {
  /** 1-based line where the comment (or paragraph) starts. */
  line: number;
  text: string;
}

/** Comments of JavaScript or TypeScript source; consecutive `//` lines are one comment. */
function scriptComments(source: string): Unit[] {
  const units: Unit[] = [];
  let at = 0;
  let previous = ''; // the last significant character outside comments, for telling a regex from a division
  let previousWord = '';
  const lineOf = (index: number) => source.slice(0, index).split('\n').length;
  const push = (start: number, text: string, line: boolean) => {
    const last = units.at(-1) as (Unit & { end?: number; lineComment?: boolean }) | undefined;
    // A `//` line joins the one above it when both stand alone on their lines.
    const alone = line && /^[ \t]*$/.test(source.slice(source.lastIndexOf('\n', start - 1) + 1, start));
    if (alone && last?.lineComment && /^[ \t]*\r?\n[ \t]*$/.test(source.slice(last.end, start))) {
      last.text += `\n${text}`;
      last.end = start + text.length;
      return;
    }
    units.push(Object.assign({ line: lineOf(start), text }, { end: start + text.length, lineComment: alone }));
  };
  const skipString = (quote: string) => {
    at++;
    while (at < source.length && source[at] !== quote && source[at] !== '\n') at += source[at] === '\\' ? 2 : 1;
    at++;
  };
  const skipRegex = () => {
    at++;
    let inClass = false;
    while (at < source.length && source[at] !== '\n') {
      const char = source[at];
      if (char === '\\') at++;
      else if (char === '[') inClass = true;
      else if (char === ']') inClass = false;
      else if (char === '/' && !inClass) break;
      at++;
    }
    at++;
    while (/[a-z]/i.test(source[at] ?? '')) at++;
  };
  /** Scans code until an unmatched `}` (inside a template's `${}`) or the end. */
  const scanCode = (inTemplate: boolean): void => {
    let depth = 0;
    while (at < source.length) {
      const char = source[at]!;
      const next = source[at + 1];
      if (char === '/' && next === '/') {
        const end = source.indexOf('\n', at);
        const stop = end < 0 ? source.length : end;
        push(at, source.slice(at, stop), true);
        at = stop;
      } else if (char === '/' && next === '*') {
        const end = source.indexOf('*/', at + 2);
        const stop = end < 0 ? source.length : end + 2;
        push(at, source.slice(at, stop), false);
        at = stop;
      } else if (char === '/') {
        const regexAllowed =
          previous === '' ||
          '(,=:[!&|?{};+-*%<>~^'.includes(previous) ||
          /^(?:return|typeof|case|do|else|in|of|new|delete|void|throw|yield|await)$/.test(previousWord);
        if (regexAllowed) skipRegex();
        else at++;
        previous = regexAllowed ? ')' : '/';
        previousWord = '';
      } else if (char === "'" || char === '"') {
        skipString(char);
        previous = ')';
        previousWord = '';
      } else if (char === '`') {
        at++;
        scanTemplate();
        previous = ')';
        previousWord = '';
      } else if (/\s/.test(char)) {
        at++;
      } else {
        if (char === '{') depth++;
        if (char === '}') {
          if (inTemplate && depth === 0) {
            at++;
            return;
          }
          depth--;
        }
        if (/[\w$]/.test(char)) {
          const word = /^[\w$]+/.exec(source.slice(at, at + 64))![0];
          previousWord = word;
          previous = 'a';
          at += word.length;
          continue;
        }
        previous = char;
        previousWord = '';
        at++;
      }
    }
  };
  const scanTemplate = (): void => {
    while (at < source.length) {
      const char = source[at];
      if (char === '\\') at += 2;
      else if (char === '`') {
        at++;
        return;
      } else if (char === '$' && source[at + 1] === '{') {
        at += 2;
        scanCode(true);
      } else at++;
    }
  };
  scanCode(false);
  return units.map(({ line, text }) => ({ line, text }));
}

/** `#` comments (shell, Python, YAML); consecutive comment lines are one comment. */
function hashComments(source: string): Unit[] {
  const units: Unit[] = [];
  let open: Unit | undefined;
  source.split('\n').forEach((line, index) => {
    const match = /(?:^|\s)(#.*)$/.exec(line);
    if (!match) {
      open = undefined;
      return;
    }
    if (open && /^\s*#/.test(line)) open.text += `\n${match[1]}`;
    else units.push((open = { line: index + 1, text: match[1]! }));
    if (!/^\s*#/.test(line)) open = undefined;
  });
  return units;
}

/** Paragraphs of a Markdown page (blank-line separated). */
function paragraphs(source: string): Unit[] {
  const units: Unit[] = [];
  let open: Unit | undefined;
  source.split('\n').forEach((line, index) => {
    if (line.trim() === '') open = undefined;
    else if (open) open.text += `\n${line}`;
    else units.push((open = { line: index + 1, text: line }));
  });
  return units;
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
function headingSlug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

const anchorCache = new Map<string, Set<string>>();
/** Every anchor a page has: explicit `<a id>` ones and its headings' slugs. */
function anchorsOf(page: string): Set<string> {
  let anchors = anchorCache.get(page);
  if (!anchors) {
    const text = readFileSync(page, 'utf8');
    anchors = new Set([
      ...[...text.matchAll(/<a id="([^"]+)"><\/a>/g)].map((match) => match[1]!),
      ...[...text.matchAll(/^#{1,6} (.+)$/gm)].map((match) => headingSlug(match[1]!)),
    ]);
    anchorCache.set(page, anchors);
  }
  return anchors;
}

/** What is wrong with one comment's (or paragraph's) references; `file` is repository-relative. */
function problemsIn(unit: Unit, file: string, exists: (path: string) => boolean = (path) => existsSync(join(root, path))): string[] {
  const problems: string[] = [];
  const where = `${file}:${unit.line}`;
  const outside = OUTSIDE_NOTE.exec(unit.text);
  if (outside) problems.push(`${where}: cites a note outside the repository (${outside[0]}); cite its page under docs/design`);
  if (BARE_SECTION.test(unit.text) && !/docs\//.test(unit.text)) {
    problems.push(`${where}: "${BARE_SECTION.exec(unit.text)![0]}" without a docs/ page in the same comment`);
  }
  // "§N" beside one design page is its entry N, and must exist there.
  const pages = new Set([...unit.text.matchAll(DOCS_PATH)].map((match) => match[0].slice(0, match[0].indexOf('.md') + 3)));
  const [page] = pages;
  if (pages.size === 1 && page !== undefined) {
    if (page.startsWith('docs/design/') && exists(page)) {
      for (const section of unit.text.matchAll(/§\s?(D?\d+[\w.]*)/g)) {
        const id = section[1]!.replace(/\.+$/, '');
        if (!anchorsOf(join(root, page)).has(id)) problems.push(`${where}: §${id}: ${page} has no anchor #${id}`);
      }
    }
  }
  for (const match of unit.text.matchAll(DOCS_PATH)) {
    const path = match[0].slice(0, match[0].indexOf('.md') + 3);
    if (!exists(path)) {
      problems.push(`${where}: ${path} does not exist`);
      continue;
    }
    for (const anchor of (match[1] ?? '').matchAll(/#([\w.-]+)/g)) {
      const id = anchor[1]!.replace(/\.+$/, '');
      if (!anchorsOf(join(root, path)).has(id)) problems.push(`${where}: ${path} has no anchor #${id}`);
    }
  }
  return problems;
}

/** Markdown links to .md files and anchors, relative to the page. */
function linkProblems(unit: Unit, file: string): string[] {
  const problems: string[] = [];
  for (const match of unit.text.matchAll(MARKDOWN_LINK)) {
    const target = match[1]!;
    if (/^[a-z]+:/i.test(target)) continue;
    const [path, anchor] = target.split('#') as [string, string | undefined];
    if (path !== '' && !path.endsWith('.md')) continue;
    const page = path === '' ? join(root, file) : resolve(root, dirname(file), path);
    if (!page.startsWith(`${root}/`) || !existsSync(page)) {
      problems.push(`${file}:${unit.line}: link ${target} does not resolve`);
    } else if (anchor && !anchorsOf(page).has(anchor)) {
      problems.push(`${file}:${unit.line}: link ${target}: no anchor #${anchor}`);
    }
  }
  return problems;
}

function filesUnder(path: string): string[] {
  const full = join(root, path);
  if (!existsSync(full) || SKIPPED.includes(path)) return [];
  if (!statSync(full).isDirectory()) return [path];
  return readdirSync(full)
    .filter((name) => name !== 'node_modules')
    .flatMap((name) => filesUnder(join(path, name)));
}

/** The comments of one file (paragraphs for Markdown), or undefined when it is not text we read. */
function unitsOf(file: string): Unit[] | undefined {
  const extension = extname(file);
  const source = readFileSync(join(root, file), 'utf8');
  if (CODE.has(extension)) return scriptComments(source);
  if (extension === '.md') return paragraphs(source);
  if (HASH_COMMENTS.has(extension) && (extension !== '' || source.startsWith('#!'))) return hashComments(source);
  return undefined;
}

describe('references to documents', () => {
  it('finds a planted outside note, a bare section, a missing page and a missing anchor', () => {
    const exists = (path: string) => path === 'docs/design/02-orchard-real-behaviour.md';
    const check = (text: string) =>
      problemsIn({ line: 1, text }, 'planted.ts', exists).map((problem) => problem.replace(/^planted\.ts:1: /, ''));
    const outside = expect.stringMatching(/^cites a note outside the repository/);
    const bare = expect.stringMatching(/without a docs\/ page in the same comment$/);
    expect(check('// see ../shared/design/orchard-real-behaviour.md §5')).toEqual([outside, bare]);
    expect(check('// a 500, not a 400 (§5)')).toEqual(['"§5" without a docs/ page in the same comment']);
    expect(check('// the owner uid differs (pitfall 6)')).toEqual(['"pitfall 6" without a docs/ page in the same comment']);
    expect(check('// (design/local-sandbox.md, pitfall 2)')).toEqual([outside, bare]);
    expect(check('// half-sent bodies (defects-found.md D7)')).toEqual([outside]);
    expect(check('// (docs/design/09-nowhere.md#1)')).toEqual(['docs/design/09-nowhere.md does not exist']);
    expect(check('// (docs/design/02-orchard-real-behaviour.md#99)')).toEqual([
      'docs/design/02-orchard-real-behaviour.md has no anchor #99',
    ]);
    expect(check('// (docs/design/02-orchard-real-behaviour.md#1, #98)')).toEqual([
      'docs/design/02-orchard-real-behaviour.md has no anchor #98',
    ]);
    expect(check('// (docs/design/02-orchard-real-behaviour.md#5, #7).')).toEqual([]);
    expect(check('// §N below is entry #N of docs/design/02-orchard-real-behaviour.md; see also design/README.md')).toEqual([]);
    expect(check('/** pod dies (§1), stderr rewritten (§2), §99 (docs/design/02-orchard-real-behaviour.md) */')).toEqual([
      '§99: docs/design/02-orchard-real-behaviour.md has no anchor #99',
    ]);
  });

  it('reads comments, not strings or regular expressions, from source', () => {
    const source = [
      "const a = '// not a comment'; // one",
      '// two',
      '// three',
      'const b = /\\/\\//g.test(x) ? `${c /* three */}` : 2 / 3; /* four',
      '   four */',
      'const d = `// not one either ${`// nor this`}`;',
    ].join('\n');
    expect(scriptComments(source).map((unit) => [unit.line, unit.text])).toEqual([
      [1, '// one'],
      [2, '// two\n// three'],
      [4, '/* three */'],
      [4, '/* four\n   four */'],
    ]);
  });

  it('nothing in src, test, bench, scripts or .ci cites a document outside the repository, and every docs/ citation resolves', () => {
    const problems: string[] = [];
    for (const file of SCANNED.flatMap(filesUnder)) {
      const units = unitsOf(file);
      if (!units) continue;
      const whole = readFileSync(join(root, file), 'utf8');
      // Strings count too for the outside notes: a report line that names one is as unresolvable.
      const outside = OUTSIDE_NOTE.exec(whole);
      if (outside && !units.some((unit) => OUTSIDE_NOTE.test(unit.text))) {
        problems.push(`${file}: names a note outside the repository (${outside[0]})`);
      }
      for (const unit of units) problems.push(...problemsIn(unit, file));
      if (file.endsWith('.md')) for (const unit of units) problems.push(...linkProblems(unit, file));
    }
    expect(problems).toEqual([]);
  });

  it('the design pages, the architecture map and CONTRIBUTING.md link only to what exists', () => {
    const problems = PAGES.flatMap(filesUnder)
      .filter((file) => file.endsWith('.md'))
      .flatMap((file) =>
        paragraphs(readFileSync(join(root, file), 'utf8')).flatMap((unit) => [...linkProblems(unit, file), ...problemsIn(unit, file)]),
      );
    expect(problems).toEqual([]);
  });

  it('every numbered entry of a design page has its own anchor, and the index lists every page', () => {
    const folder = join(root, 'docs/design');
    const pages = readdirSync(folder).filter((name) => name !== 'README.md');
    const index = readFileSync(join(folder, 'README.md'), 'utf8');
    const problems: string[] = [];
    for (const name of pages) {
      if (!index.includes(`](${name})`)) problems.push(`docs/design/README.md does not list ${name}`);
      const lines = readFileSync(join(folder, name), 'utf8').split('\n');
      const ids = lines.flatMap((line) => [...(/<a id="([^"]+)"><\/a>/.exec(line)?.slice(1) ?? [])]);
      if (new Set(ids).size !== ids.length) problems.push(`${name}: an anchor is used twice`);
      lines.forEach((line, at) => {
        const entry = /^#{2,4} (D?\d+[a-z]?)\. /.exec(line);
        if (entry && lines[at - 1] !== `<a id="${entry[1]}"></a>`)
          problems.push(`${name}:${at + 1}: entry ${entry[1]} lacks <a id="${entry[1]}"></a> above it`);
      });
    }
    expect(problems).toEqual([]);
  });
});
