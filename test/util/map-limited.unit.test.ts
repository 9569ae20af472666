/** `mapLimited`: results in order, at most `limit` at once, and no item started after a failure. */
import { describe, expect, it } from 'vitest';
import { mapLimited } from '../../src/util/map-limited.js';

const tick = () => new Promise((resolve) => setTimeout(resolve, 1));

describe('mapLimited', () => {
  it('keeps the order of the items and runs at most `limit` at once', async () => {
    let running = 0;
    let most = 0;
    const results = await mapLimited([5, 1, 4, 2, 3], 2, async (item) => {
      running += 1;
      most = Math.max(most, running);
      for (let i = 0; i < item; i += 1) await tick();
      running -= 1;
      return item * 10;
    });
    expect(results).toEqual([50, 10, 40, 20, 30]);
    expect(most).toBe(2);
  });

  it('rejects with the first failure and starts no item after it', async () => {
    const started: number[] = [];
    const run = mapLimited([0, 1, 2, 3, 4, 5], 1, async (item) => {
      started.push(item);
      await tick();
      if (item === 2) throw new Error('stop');
      return item;
    });
    await expect(run).rejects.toThrow('stop');
    expect(started).toEqual([0, 1, 2]);
  });

  it('answers an empty list at once', async () => {
    expect(await mapLimited([], 4, async () => 1)).toEqual([]);
  });
});
