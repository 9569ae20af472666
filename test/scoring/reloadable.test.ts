/**
 * The server's reloadable value model (src/scoring/reloadable.ts) with scorers that record their
 * calls and closes: a pinned model outlives a reload until it is released, a failed load changes
 * nothing, reloads run one at a time, and `reload()` without a path re-reads the folder serving.
 */
import { describe, expect, it } from 'vitest';
import { createReloadableValueModel } from '../../src/scoring/reloadable.js';
import type { Scorer } from '../../src/scoring/types.js';
import { fakeValueModel } from '../fakes/fake-value-model.js';

interface Recorded extends Scorer {
  closed: boolean;
}

function recordingScorer(model: string): Recorded {
  const scorer: Recorded = {
    backend: 'onnx',
    model,
    maxInputTokens: 100,
    closed: false,
    async score(inputs) {
      if (scorer.closed) throw new Error(`${model} is closed`);
      return inputs.map(() => ({ value: 0.5, raw: 0 }));
    },
    async close() {
      scorer.closed = true;
    },
  };
  return scorer;
}

const flush = () => new Promise((resolve) => setTimeout(resolve, 0));

describe('createReloadableValueModel', () => {
  it('keeps a pinned model open across a reload, and closes it once released', async () => {
    const made: Recorded[] = [];
    const loads: Array<string | undefined> = [];
    const reloadable = await createReloadableValueModel(async (path) => {
      loads.push(path);
      const scorer = recordingScorer(path ?? 'configured');
      made.push(scorer);
      return fakeValueModel(scorer);
    });
    const pinned = reloadable.pin();
    await reloadable.reload({ path: '/models/b' });
    expect(reloadable.current.scorer.model).toBe('/models/b');
    // The job that pinned the old model still scores with it.
    expect(pinned.valueModel.scorer.model).toBe('configured');
    expect(await pinned.valueModel.scorer.score([{ key: 'k', text: 't' }])).toHaveLength(1);
    await flush();
    expect(made[0]!.closed).toBe(false);
    pinned.release();
    pinned.release();
    await flush();
    expect(made[0]!.closed).toBe(true);
    // Without a path: the folder serving now, not the configured one.
    await reloadable.reload();
    expect(loads).toEqual([undefined, '/models/b', '/models/b']);
    await reloadable.close();
    expect(made.every((scorer) => scorer.closed)).toBe(true);
  });

  it('leaves the current model in place when a load fails, with WNW_ERR_SCORE_RELOAD naming the folder and the cause', async () => {
    const reloadable = await createReloadableValueModel(async (path) => {
      if (path === '/models/broken') throw new Error('model.onnx is not a graph');
      return fakeValueModel(recordingScorer(path ?? 'configured'));
    });
    await expect(reloadable.reload({ path: '/models/broken' })).rejects.toMatchObject({
      code: 'WNW_ERR_SCORE_RELOAD',
      message: expect.stringContaining('/models/broken was not loaded: model.onnx is not a graph; the current model keeps serving'),
      details: { path: '/models/broken' },
    });
    expect(reloadable.current.scorer.model).toBe('configured');
    // A reload without a path after the failure re-reads the model that kept serving.
    await reloadable.reload();
    expect(reloadable.current.scorer.model).toBe('configured');
    await reloadable.close();
  });

  it('runs reloads one at a time, in the order they were asked', async () => {
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    const reloadable = await createReloadableValueModel(async (path) => {
      if (path === '/models/slow') await gate;
      return fakeValueModel(recordingScorer(path ?? 'configured'));
    });
    const slow = reloadable.reload({ path: '/models/slow' });
    const fast = reloadable.reload({ path: '/models/fast' });
    await flush();
    expect(reloadable.current.scorer.model).toBe('configured');
    release();
    await Promise.all([slow, fast]);
    expect(reloadable.current.scorer.model).toBe('/models/fast');
    await reloadable.close();
  });
});
