import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { select } from '../../src/select/index.js';
import { configKey, configPrior, fitPriors } from '../../src/select/priors.js';
import { CROSS_FITTED, crossFit } from '../../src/train/cross-fit.js';
import { bestTrivial } from '../../src/train/evaluate.js';
import { prng } from '../../src/util/prng.js';
import { tempDir } from '../support/temp-dir.js';

const WORDS = ['value', 'result', 'config', 'parse', 'render', 'items', 'index', 'count', 'buffer', 'token'];

/** Four runs over the same instances; whether a candidate resolved depends on its run's configuration only. */
function writeConfigPools(instances: number, seed: number): { candidates: string; tasks: string } {
  const random = prng(seed);
  const pick = () => WORDS[Math.floor(random() * WORDS.length)]!;
  const runs = [
    { source: 'agent/run-1', config: { model: 'big', temperature: 0 }, rate: 0.9 },
    { source: 'agent/run-2', config: { model: 'small', temperature: 0.7 }, rate: 0.15 },
    { source: 'agent/run-3', config: { temperature: 0.7, model: 'small' }, rate: 0.15 },
    { source: 'agent/run-4', config: { model: 'mid', temperature: 0.2 }, rate: 0.4 },
  ];
  const dir = tempDir('winnower-crossfit-');
  const rows: string[] = [];
  const tasks: string[] = [];
  for (let i = 0; i < instances; i++) {
    const instance = `acme__widgets-${3000 + i}`;
    tasks.push(JSON.stringify({ instance_id: instance, repo: 'acme/widgets', problem_statement: `The ${pick()} breaks.` }));
    for (const run of runs) {
      const lines = Array.from(
        { length: 1 + Math.floor(random() * 8) },
        () => `+    ${pick()}_${Math.floor(random() * 100)} = ${pick()}()`,
      );
      const patch = `diff --git a/src/a.py b/src/a.py\n--- a/src/a.py\n+++ b/src/a.py\n@@ -1,1 +1,${lines.length + 1} @@\n def f():\n${lines.join('\n')}\n`;
      rows.push(
        JSON.stringify({
          instance_id: instance,
          model_name_or_path: run.source,
          model_patch: patch,
          resolved: random() < run.rate,
          config: run.config,
        }),
      );
    }
  }
  writeFileSync(join(dir, 'candidates.jsonl'), `${rows.join('\n')}\n`);
  writeFileSync(join(dir, 'tasks.jsonl'), `${tasks.join('\n')}\n`);
  return { candidates: join(dir, 'candidates.jsonl'), tasks: join(dir, 'tasks.jsonl') };
}

describe('own-history priors', () => {
  it('key a configuration by source and its config object, whatever the key order', () => {
    expect(configKey({ source: 'a', meta: { config: { model: 'x', t: 1 } } })).toBe(
      configKey({ source: 'a', meta: { config: { t: 1, model: 'x' } } }),
    );
    expect(configKey({ source: 'a', meta: { config: { model: 'x' } } })).not.toBe(
      configKey({ source: 'a', meta: { config: { model: 'y' } } }),
    );
    expect(configKey({ source: 'a', meta: {} })).toBe('a');
  });

  it('shrink a configuration seen a few times toward the overall rate, and give an unseen one exactly that', () => {
    const priors = fitPriors([
      ...Array.from({ length: 20 }, (_, i) => ({ trajectory: { source: 'good', meta: {} }, repo: 'r', resolved: i < 18 })),
      ...Array.from({ length: 20 }, (_, i) => ({ trajectory: { source: 'bad', meta: {} }, repo: 'r', resolved: i < 2 })),
    ]);
    expect(priors.overall).toBeCloseTo(0.5, 9);
    expect(configPrior(priors, { source: 'good', meta: {} })).toBeCloseTo((18 + 2.5) / 25, 9);
    expect(configPrior(priors, { source: 'new', meta: {} })).toBe(0.5);
    expect(priors.repos['good\u0000r']).toEqual({ n: 20, resolved: 18 });
  });

  it('rank the configuration with the better record first in robust selection', () => {
    const priors = fitPriors([
      { trajectory: { source: 'good', meta: {} }, repo: 'r', resolved: true },
      { trajectory: { source: 'bad', meta: {} }, repo: 'r', resolved: false },
    ]);
    const patch = (n: number) =>
      `diff --git a/a.py b/a.py\n--- a/a.py\n+++ b/a.py\n@@ -1,1 +1,${n + 1} @@\n x\n${Array.from({ length: n }, (_, i) => `+y${i}`).join('\n')}\n`;
    const candidates = [
      {
        trajectory: {
          format: 'winnower-trajectory-1' as const,
          id: 'g',
          instance_id: 'i',
          source: 'good',
          messages: [],
          patch: patch(9),
          exit: 'unknown' as const,
          meta: {},
        },
      },
      {
        trajectory: {
          format: 'winnower-trajectory-1' as const,
          id: 'b',
          instance_id: 'i',
          source: 'bad',
          messages: [],
          patch: patch(1),
          exit: 'unknown' as const,
          meta: {},
        },
      },
    ];
    expect(select('robust', candidates as never).chosen).toBe('b'); // no history: the smaller patch
    const selection = select('robust', candidates as never, { selector: { format: 'winnower-selector-1', signals: [], priors } });
    expect(selection.chosen).toBe('g');
    expect(selection.reason).toMatch(/configuration has the best record/);
  });
});

describe('winnower rerank --cross-fit on a pool whose label depends on the configuration, not the patch', () => {
  it('learns the configuration from the other folds: more than 80% of the headroom, above every trivial selector', async () => {
    const data = writeConfigPools(150, 11);
    const result = await crossFit({ rollouts: [data.candidates], tasks: [data.tasks], folds: 5, bootstrap: 50 });
    const row = result.table.rows.find((r) => r.selector === CROSS_FITTED)!;
    expect(row.headroom_closed.value!).toBeGreaterThan(0.8);
    expect(row.selected_at_1.value!).toBeGreaterThan(bestTrivial(result.table)!.selected_at_1.value!);
    expect(result.runs.map((run) => run.source)).toEqual(['agent/run-1', 'agent/run-2', 'agent/run-3', 'agent/run-4']);
  });
});
