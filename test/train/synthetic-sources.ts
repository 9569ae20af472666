/**
 * Synthetic pools with a planted source-style shortcut. On the training instances two source
 * families write in fixed styles: `alpha` (short patches, always resolved) and `beta` (long
 * patches with a debug print, never resolved), so "short wins" separates them perfectly. On the
 * held-out instances a third family, `gamma`, runs four times per instance: the two resolved
 * candidates make the same fix (most changed lines shared) at a middle size, the two unresolved
 * ones are the shortest and the longest, each unlike any other. Shortest and longest pick wrong
 * there, and every patch differs, so majority vote is a coin flip; agreement finds the fix.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { prng } from '../../src/util/prng.js';

const WORDS = [
  'value',
  'result',
  'config',
  'parse',
  'render',
  'items',
  'index',
  'count',
  'buffer',
  'token',
  'stream',
  'handle',
  'error',
  'update',
  'cache',
  'limit',
];

export interface SourcePools {
  dir: string;
  candidates: string;
  tasks: string;
}

function diff(file: string, lines: string[]): string {
  return `diff --git a/${file} b/${file}\n--- a/${file}\n+++ b/${file}\n@@ -1,1 +1,${lines.length + 1} @@\n def f():\n${lines.join('\n')}\n`;
}

export function writeSourceShortcutPools(options: { trainInstances: number; heldOutInstances: number; seed: number }): SourcePools {
  const random = prng(options.seed);
  const pick = () => WORDS[Math.floor(random() * WORDS.length)]!;
  const line = () => `+    ${pick()}_${Math.floor(random() * 1000)} = ${pick()}(${pick()})`;
  const lines = (n: number) => Array.from({ length: n }, line);
  const dir = mkdtempSync(join(tmpdir(), 'winnower-sources-'));
  const rows: string[] = [];
  const tasks: string[] = [];
  const row = (instance: string, source: string, patch: string, resolved: boolean) =>
    rows.push(
      JSON.stringify({
        instance_id: instance,
        model_name_or_path: source,
        model_patch: patch,
        resolved,
        dataset_license: 'MIT',
        permissive: true,
        source_repo: 'acme/synthetic',
      }),
    );
  for (let i = 0; i < options.trainInstances + options.heldOutInstances; i++) {
    const instance = `acme__widgets-${2000 + i}`;
    tasks.push(
      JSON.stringify({
        instance_id: instance,
        repo: 'acme/widgets',
        problem_statement: `The ${pick()} ${pick()} breaks when ${pick()} is empty.`,
      }),
    );
    const file = `src/${pick()}.py`;
    if (i < options.trainInstances) {
      for (const run of [1, 2]) row(instance, `alpha/run-${run}`, diff(file, lines(1 + Math.floor(random() * 2))), true);
      for (const run of [1, 2])
        row(instance, `beta/run-${run}`, diff(file, [...lines(10 + Math.floor(random() * 6)), '+    print("debug")']), false);
    } else {
      const fix = lines(6);
      row(instance, 'gamma/run-1', diff(file, [...fix, line()]), true);
      row(instance, 'gamma/run-2', diff(file, [...fix, line(), line()]), true);
      row(instance, 'gamma/run-3', diff(file, lines(2)), false);
      row(instance, 'gamma/run-4', diff(file, lines(16)), false);
    }
  }
  const candidates = join(dir, 'candidates.jsonl');
  const taskFile = join(dir, 'tasks.jsonl');
  writeFileSync(candidates, `${rows.join('\n')}\n`);
  writeFileSync(taskFile, `${tasks.join('\n')}\n`);
  return { dir, candidates, tasks: taskFile };
}
