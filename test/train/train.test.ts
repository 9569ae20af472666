import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPolicyFactory } from '../../src/rollout/policy/policy-factory.js';
import { TINY_MODEL_DIR } from '../../src/config.js';
import { loadValueModel, type ValueModel } from '../../src/scoring/value-model.js';
import { loadSelector } from '../../src/scoring/model-folder.js';
import { createLocalProvider } from '../../src/sandbox/providers/local/provider.js';
import { buildApp } from '../../src/server/app.js';
import { JobManager } from '../../src/solve/job-manager.js';
import { createSqliteStore } from '../../src/store/sqlite-store.js';
import { train, type TrainResult } from '../../src/train/train.js';
import { writeSyntheticPool, type SyntheticPool } from './synthetic.js';

const SMALL = {
  vocabSize: 500,
  bigramBuckets: 4096,
  dims: 8,
  hidden: 8,
  maxEpochs: 12,
  folds: 3,
  bootstrap: 50,
  budgetTokens: 1024,
} as const;

describe('winnower train on a synthetic pool whose label is one token', () => {
  let pool: SyntheticPool;
  let first: TrainResult;

  beforeAll(async () => {
    pool = writeSyntheticPool({ instances: 80, perInstance: 4, seed: 7 });
    first = await train({
      rollouts: [pool.candidates],
      tasks: [pool.tasks],
      out: join(pool.dir, 'model-a'),
      seed: 3,
      baselineModel: TINY_MODEL_DIR(),
      ...SMALL,
    });
  }, 120_000);

  it('learns the token: validation AUC above 0.95, and the learned selector closes most of the headroom', () => {
    const all = first.tables.find((table) => table.scope === 'all')!;
    const trained = all.rows.find((row) => row.selector === 'trained model')!;
    expect(trained.auc!.value).toBeGreaterThan(0.95);
    const learned = all.rows.find((row) => row.selector === 'learned selector')!;
    const random = all.rows.find((row) => row.selector === 'random')!;
    expect(learned.headroom_closed.value!).toBeGreaterThan(0.8);
    expect(random.headroom_closed.value).toBeCloseTo(0, 6);
    // The untrained model knows nothing of the token.
    const untrained = all.rows.find((row) => row.selector === 'untrained model')!;
    expect(untrained.auc!.value!).toBeLessThan(0.8);
  });

  it('exports a graph that computes what training computed', () => {
    expect(first.exportMaxDiff).not.toBeNull();
    expect(first.exportMaxDiff!).toBeLessThan(1e-3);
  });

  it('is deterministic for a seed: the same bytes twice', async () => {
    const again = await train({
      rollouts: [pool.candidates],
      tasks: [pool.tasks],
      out: join(pool.dir, 'model-b'),
      seed: 3,
      baselineModel: null,
      ...SMALL,
    });
    for (const file of ['model.onnx', 'tokenizer.json', 'selector.json']) {
      expect(readFileSync(join(again.outDir, file)).equals(readFileSync(join(first.outDir, file))), file).toBe(true);
    }
    const other = await train({
      rollouts: [pool.candidates],
      tasks: [pool.tasks],
      out: join(pool.dir, 'model-c'),
      seed: 4,
      baselineModel: null,
      ...SMALL,
    });
    expect(readFileSync(join(other.outDir, 'model.onnx')).equals(readFileSync(join(first.outDir, 'model.onnx')))).toBe(false);
  }, 120_000);

  it('writes a model card naming the data, its licence, the seed and the command', () => {
    const config = JSON.parse(readFileSync(join(first.outDir, 'config.json'), 'utf8'));
    expect(config.num_labels).toBe(1);
    expect(config.winnower.trained).toBe(true);
    expect(config.winnower.seed).toBe(3);
    expect(config.winnower.data).toEqual([
      expect.objectContaining({ origin: 'acme/synthetic', license: 'MIT', permissive: true, candidates: 240, instances: 80 }),
      expect.objectContaining({ origin: 'acme/synthetic', license: 'MIT', permissive: false, candidates: 80, instances: 80 }),
    ]);
    expect(config.winnower.validation[0].rows.map((row: { selector: string }) => row.selector)).toEqual([
      'random',
      'longest',
      'shortest',
      'majority',
      'untrained model',
      'trained model',
      'learned selector',
      'robust',
    ]);
    expect(readFileSync(join(first.outDir, 'README.md'), 'utf8')).toContain('| acme/synthetic | MIT | yes | 240 | 80 |');
  });

  it('--permissive-only drops the rows that are not permissive', async () => {
    const result = await train({
      rollouts: [pool.candidates],
      tasks: [pool.tasks],
      out: join(pool.dir, 'model-p'),
      seed: 3,
      permissiveOnly: true,
      baselineModel: null,
      ...SMALL,
    });
    expect(result.trainCandidates + result.validationCandidates).toBe(240);
  }, 120_000);

  describe('the trained folder is an ordinary model folder', () => {
    let valueModel: ValueModel;
    let app: Awaited<ReturnType<typeof buildApp>>;
    beforeAll(async () => {
      valueModel = await loadValueModel({ backend: 'onnx', model: first.outDir });
      const store = createSqliteStore(':memory:');
      app = await buildApp({
        jobs: new JobManager(store),
        store,
        valueModel,
        solveDeps: { sandboxes: createLocalProvider(), store, createPolicy: createPolicyFactory() },
        apiKeys: [],
      });
    });
    afterAll(async () => {
      await app?.close();
      await valueModel?.scorer.close();
    });

    it('round-trips the selector weights through the folder', () => {
      const stored = JSON.parse(readFileSync(join(first.outDir, 'selector.json'), 'utf8'));
      expect(loadSelector(first.outDir)).toEqual(stored);
      expect(valueModel.selector).toEqual(first.selector);
    });

    it('is served by POST /score and picks the frobnicate patch by POST /rerank with the learned strategy by default', async () => {
      const patch = (line: string) =>
        `diff --git a/src/a.py b/src/a.py\n--- a/src/a.py\n+++ b/src/a.py\n@@ -1,1 +1,2 @@\n def f():\n+    ${line}\n`;
      const task = {
        instance_id: 'acme__widgets-9999',
        problem_statement: 'The parse cache breaks when items is empty.',
        repo: { name: 'acme/widgets' },
      };
      const candidates = [
        { id: 'good', patch: patch('value = frobnicate(items)') },
        { id: 'bad', patch: patch('value = render(items)') },
      ];
      const scored = await app.inject({ method: 'POST', url: '/score', payload: { task, candidates } });
      expect(scored.statusCode).toBe(200);
      const [good, bad] = scored.json().scores;
      expect(good.value).toBeGreaterThan(bad.value);
      const reranked = await app.inject({ method: 'POST', url: '/rerank', payload: { task, candidates } });
      expect(reranked.statusCode).toBe(200);
      const body = reranked.json();
      expect(body.selection.strategy).toBe('learned');
      expect(body.selection.chosen).toBe('good');
      expect(body.selection.ranking[0].reasons.join(' ')).toMatch(/learned score .*value_rel/);
    });
  });
});
