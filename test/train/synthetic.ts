/**
 * A synthetic labelled pool, written as SWE-bench predictions and task records: a candidate is
 * resolved exactly when one of its added lines calls `frobnicate`; everything else is random
 * words from a fixed list. A model that learns anything at all learns that token.
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

export interface SyntheticPool {
  dir: string;
  candidates: string;
  tasks: string;
}

export function writeSyntheticPool(options: { instances: number; perInstance: number; seed: number }): SyntheticPool {
  const random = prng(options.seed);
  const pick = () => WORDS[Math.floor(random() * WORDS.length)]!;
  const dir = mkdtempSync(join(tmpdir(), 'winnower-train-'));
  const rows: string[] = [];
  const tasks: string[] = [];
  for (let i = 0; i < options.instances; i++) {
    const instance = `acme__widgets-${1000 + i}`;
    tasks.push(
      JSON.stringify({
        instance_id: instance,
        repo: 'acme/widgets',
        problem_statement: `The ${pick()} ${pick()} breaks when ${pick()} is empty.`,
      }),
    );
    for (let c = 0; c < options.perInstance; c++) {
      // Mixed pools: about half the candidates of each instance are resolved.
      const resolved = random() < 0.5;
      const lines = Array.from({ length: 2 + Math.floor(random() * 4) }, () => `+    ${pick()} = ${pick()}(${pick()})`);
      if (resolved) lines.splice(Math.floor(random() * lines.length), 0, `+    ${pick()} = frobnicate(${pick()})`);
      const file = `src/${pick()}.py`;
      const patch = `diff --git a/${file} b/${file}\n--- a/${file}\n+++ b/${file}\n@@ -1,1 +1,${lines.length + 1} @@\n def f():\n${lines.join('\n')}\n`;
      rows.push(
        JSON.stringify({
          instance_id: instance,
          model_name_or_path: `run-${c}`,
          model_patch: patch,
          resolved,
          dataset_license: 'MIT',
          permissive: c !== 0,
          source_repo: 'acme/synthetic',
        }),
      );
    }
  }
  const candidates = join(dir, 'candidates.jsonl');
  const taskFile = join(dir, 'tasks.jsonl');
  writeFileSync(candidates, `${rows.join('\n')}\n`);
  writeFileSync(taskFile, `${tasks.join('\n')}\n`);
  return { dir, candidates, tasks: taskFile };
}
