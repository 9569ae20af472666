import { readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '../..');

/** Every relative import (type-only ones too) of every .ts file under src/. */
function importGraph(): Map<string, string[]> {
  const files: string[] = [];
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (path.endsWith('.ts')) files.push(path);
    }
  };
  walk(join(root, 'src'));
  const known = new Set(files);
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    const targets = [...text.matchAll(/(?:import|export)[^'"]*?from\s+['"](\.[^'"]+)['"]/g)].map((match) =>
      resolve(dirname(file), match[1]!.replace(/\.js$/, '.ts')),
    );
    graph.set(
      file,
      targets.filter((target) => known.has(target)),
    );
  }
  return graph;
}

function cycles(graph: Map<string, string[]>): string[] {
  const found: string[] = [];
  const done = new Set<string>();
  const stack: string[] = [];
  const visit = (node: string): void => {
    done.add(node);
    stack.push(node);
    for (const next of graph.get(node) ?? []) {
      const at = stack.indexOf(next);
      if (at >= 0) found.push([...stack.slice(at), next].map((file) => relative(root, file)).join(' -> '));
      else if (!done.has(next)) visit(next);
    }
    stack.pop();
  };
  for (const node of graph.keys()) if (!done.has(node)) visit(node);
  return found;
}

const inside = (file: string, folder: string): boolean => relative(join(root, folder), file).split('/')[0] !== '..';
const edges = (graph: Map<string, string[]>): [string, string][] =>
  [...graph].flatMap(([from, targets]) => targets.map((to): [string, string] => [relative(root, from), relative(root, to)]));

describe('src/', () => {
  it('has no import cycles (type-only imports included)', () => {
    expect(cycles(importGraph())).toEqual([]);
  });

  // docs/architecture.md: every module may depend on the shared types, so they depend on nothing.
  it('src/types imports nothing of ours', () => {
    const graph = importGraph();
    const out = edges(graph).filter(([from, to]) => from.startsWith('src/types/') && !to.startsWith('src/types/'));
    expect(out).toEqual([]);
  });

  // A provider's files are its own: the rest of the code goes through src/sandbox (types.ts,
  // registry.ts and the shared helpers beside them), so a provider can change without them.
  it('nothing outside src/sandbox reaches into a provider', () => {
    const graph = importGraph();
    const reaching = edges(graph).filter(
      ([from, to]) => to.startsWith('src/sandbox/providers/') && !inside(join(root, from), 'src/sandbox'),
    );
    expect(reaching).toEqual([]);
  });

  it('no provider imports another provider', () => {
    const provider = (file: string) => /^src\/sandbox\/providers\/([^/]+)\//.exec(file)?.[1];
    const crossing = edges(importGraph()).filter(([from, to]) => {
      const [a, b] = [provider(from), provider(to)];
      return a !== undefined && b !== undefined && a !== b;
    });
    expect(crossing).toEqual([]);
  });
});
