import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadSelector } from '../../src/scoring/model-folder.js';
import { defaultStrategy } from '../../src/select/index.js';
import { bestTrivial } from '../../src/train/evaluate.js';
import { train, type TrainResult } from '../../src/train/train.js';
import { writeSourceShortcutPools, type SourcePools } from './synthetic-sources.js';

const SMALL = {
  vocabSize: 500,
  bigramBuckets: 4096,
  dims: 8,
  hidden: 8,
  maxEpochs: 6,
  folds: 3,
  bootstrap: 50,
  budgetTokens: 1024,
  baselineModel: null,
} as const;

describe('a source-style shortcut planted in the training data (train on alpha and beta, evaluate on gamma)', () => {
  let data: SourcePools;
  let result: TrainResult;

  beforeAll(async () => {
    data = writeSourceShortcutPools({ trainInstances: 60, heldOutInstances: 40, seed: 5 });
    result = await train({
      rollouts: [data.candidates],
      tasks: [data.tasks],
      out: join(data.dir, 'model'),
      seed: 2,
      holdoutSources: ['gamma'],
      ...SMALL,
    });
  }, 120_000);

  it('validates on gamma only, with the trivial selectors beside the model', () => {
    const all = result.tables.find((table) => table.scope === 'all')!;
    expect(all.pools).toBe(40);
    expect(all.rows.map((row) => row.selector)).toEqual([
      'random',
      'longest',
      'shortest',
      'majority',
      'trained model',
      'learned selector',
      'robust',
    ]);
  });

  it('the learned selector falls for the shortcut, so the folder ships robust as its default, and the card says why', () => {
    const all = result.tables.find((table) => table.scope === 'all')!;
    const selected = (name: string) => all.rows.find((row) => row.selector === name)!.selected_at_1.value!;
    expect(selected('learned selector')).toBeLessThanOrEqual(selected(bestTrivial(all)!.selector));
    expect(result.selector.default_strategy).toBe('robust');
    expect(result.selector.default_reason).toMatch(/did not beat the best trivial selector .* on held out gamma/);
    expect(loadSelector(result.outDir)!.default_strategy).toBe('robust');
    expect(defaultStrategy(false, { selector: loadSelector(result.outDir) })).toBe('robust');
    const card = JSON.parse(readFileSync(join(result.outDir, 'config.json'), 'utf8'));
    expect(card.winnower.beats_best_trivial).toEqual([
      expect.objectContaining({
        split: 'held out gamma',
        source_held_out: true,
        learned_beats_trivial: false,
        robust_reaches_trivial: true,
      }),
    ]);
    expect(readFileSync(join(result.outDir, 'README.md'), 'utf8')).toContain('A request that names no strategy gets **robust**');
  });

  it('the default it ships stays at or above the best trivial selector on gamma, and ranks within pools above chance', () => {
    const all = result.tables.find((table) => table.scope === 'all')!;
    const robust = all.rows.find((row) => row.selector === 'robust')!;
    expect(robust.selected_at_1.value!).toBeGreaterThanOrEqual(bestTrivial(all)!.selected_at_1.value!);
    expect(robust.within_auc!.value!).toBeGreaterThan(0.5);
  });
});
