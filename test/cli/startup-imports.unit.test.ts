import { readFileSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '../..');

/**
 * What loading `src/file` loads before any code runs: its static value imports, followed through
 * our files (type-only imports are erased; `import()` in an action runs only with its subcommand).
 */
function startupGraph(entry: string): { files: string[]; packages: string[] } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const visit = (file: string): void => {
    if (files.has(file)) return;
    files.add(file);
    const text = readFileSync(file, 'utf8');
    for (const match of text.matchAll(/^(?:import|export)(?!\s+type\s)[^'";]*?from\s+['"]([^'"]+)['"]|^import\s+['"]([^'"]+)['"]/gm)) {
      const target = (match[1] ?? match[2])!;
      if (target.startsWith('.')) visit(resolve(dirname(file), target.replace(/\.js$/, '.ts')));
      else if (!target.startsWith('node:')) packages.add(target);
    }
  };
  visit(resolve(root, entry));
  return { files: [...files].map((file) => relative(root, file)).sort(), packages: [...packages].sort() };
}

describe('winnower start-up', () => {
  // Every run, `--help` and each test that spawns the CLI included, pays for what main.ts loads:
  // fastify, zod, onnxruntime and the pipelines belong to the subcommand that runs.
  it('loads commander and the subcommands’ option declarations, nothing of the pipelines', () => {
    const graph = startupGraph('src/cli/main.ts');
    expect(graph.packages).toEqual(['commander']);
    const outsideCli = graph.files.filter((file) => !file.startsWith('src/cli/'));
    expect(outsideCli).toEqual([
      'src/errors.ts',
      'src/loadgen/names.ts',
      'src/sandbox/base-sandbox.ts',
      'src/sandbox/lifecycle.ts',
      'src/sandbox/patch-gitlinks.ts',
      'src/sandbox/patch-sections.ts',
      'src/sandbox/provider-names.ts',
      'src/train/defaults.ts',
      'src/types/strategy-names.ts',
      'src/util/package-root.ts',
      'src/verify/parser-names.ts',
    ]);
    expect(graph.files.filter((file) => file.endsWith('-action.ts') || file.endsWith('/runtime.ts'))).toEqual([]);
  });
});
