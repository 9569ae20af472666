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

describe('src/', () => {
  it('has no import cycles (type-only imports included)', () => {
    expect(cycles(importGraph())).toEqual([]);
  });
});
