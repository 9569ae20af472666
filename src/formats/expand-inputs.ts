import { readdir, stat } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { wnwError } from '../errors.js';

/** Files a directory contributes: the extensions trajectory, task and label files use. */
const INPUT_EXTENSIONS = ['.json', '.jsonl', '.traj', '.json.gz', '.jsonl.gz'];
const GLOB_CHARS = /[*?[{]/;

/** Whether `pattern` is a glob (`*`, `?`, `[...]`, `{a,b}`), not a plain path. */
export function isGlob(pattern: string): boolean {
  return GLOB_CHARS.test(pattern);
}

/** `**` any folders, `*` any name part, `?` one character, `{a,b}` alternatives, `[...]` a class. */
export function globToRegExp(pattern: string): RegExp {
  let out = '';
  let braces = 0;
  for (let index = 0; index < pattern.length; index += 1) {
    const char = pattern[index]!;
    if (char === '*' && pattern[index + 1] === '*') {
      const slash = pattern[index + 2] === '/';
      out += slash ? '(?:.*/)?' : '.*';
      index += slash ? 2 : 1;
    } else if (char === '*') out += '[^/]*';
    else if (char === '?') out += '[^/]';
    else if (char === '{') {
      braces += 1;
      out += '(?:';
    } else if (char === '}' && braces > 0) {
      braces -= 1;
      out += ')';
    } else if (char === ',' && braces > 0) out += '|';
    else if (char === '[') {
      const end = pattern.indexOf(']', index + 1);
      if (end === -1) out += '\\[';
      else {
        out += `[${pattern
          .slice(index + 1, end)
          .replace(/^!/, '^')
          .replace(/\\/g, '\\\\')}]`;
        index = end;
      }
    } else out += char.replace(/[.+^$()|\\]/g, '\\$&');
  }
  return new RegExp(`^${out}$`);
}

async function walk(dir: string): Promise<string[]> {
  const out: string[] = [];
  const entries = await readdir(dir, { withFileTypes: true });
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const entry of entries) {
    if (entry.name.startsWith('.') || entry.name === 'node_modules') continue;
    const path = join(dir, entry.name);
    const kind = entry.isSymbolicLink() ? await stat(path).catch(() => undefined) : entry;
    if (kind?.isDirectory()) out.push(...(await walk(path)));
    else if (kind?.isFile()) out.push(path);
  }
  return out;
}

function notFound(pattern: string, why: string, cause?: unknown): Error {
  return wnwError('WNW_ERR_INPUT_NOT_FOUND', `${pattern}: ${why}`, { cause, details: { file: pattern } });
}

async function expandOne(pattern: string): Promise<string[]> {
  if (!isGlob(pattern)) {
    const info = await stat(pattern).catch((error: unknown) => {
      throw notFound(pattern, (error as Error).message, error);
    });
    if (info.isFile()) return [pattern];
    const files = (await walk(pattern)).filter((file) => INPUT_EXTENSIONS.some((extension) => file.endsWith(extension)));
    if (files.length === 0) throw notFound(pattern, `no ${INPUT_EXTENSIONS.join(', ')} files in this folder`);
    return files;
  }
  const segments = pattern.split('/');
  const firstGlob = segments.findIndex(isGlob);
  const base = segments.slice(0, firstGlob).join('/') || (pattern.startsWith('/') ? '/' : '.');
  const matcher = globToRegExp(segments.slice(firstGlob).join('/'));
  const files = await walk(base).catch((error: unknown) => {
    throw notFound(pattern, (error as Error).message, error);
  });
  const matched = files.filter((file) => matcher.test(relative(base, file).split(sep).join('/')));
  if (matched.length === 0) throw notFound(pattern, 'no file matches');
  return matched;
}

/**
 * Plain paths, folders (their .json/.jsonl/.traj files, recursively) and globs (`*`, `**`, `?`,
 * `{a,b}`, `[...]`) → a sorted-per-pattern, de-duplicated list of files. Node 20 has no fs glob.
 * A path or pattern that yields nothing is WNW_ERR_INPUT_NOT_FOUND.
 */
export async function expandInputs(patterns: readonly string[]): Promise<string[]> {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const pattern of patterns) {
    for (const file of await expandOne(pattern)) {
      if (seen.has(file)) continue;
      seen.add(file);
      out.push(file);
    }
  }
  return out;
}
