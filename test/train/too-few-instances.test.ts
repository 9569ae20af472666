/** Issue 27 item 5: too few instances for the folds says what was found and what is needed. */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { train } from '../../src/train/train.js';
import { writeSyntheticPool } from './synthetic.js';

describe('winnower train with fewer instances than folds', () => {
  it('names the candidates, instances and pools found, and the instances needed', async () => {
    const pool = writeSyntheticPool({ instances: 2, perInstance: 2, seed: 1 });
    const error = await train({
      rollouts: [pool.candidates],
      tasks: [pool.tasks],
      out: join(pool.dir, 'model'),
      seed: 1,
      folds: 4,
      maxEpochs: 2,
      bootstrap: 10,
      budgetTokens: 256,
    }).then(
      () => undefined,
      (caught: Error) => caught,
    );
    expect(error?.message).toContain('too few training instances for 4 folds');
    expect(error?.message).toContain('4 labelled candidates on 2 instances');
    expect(error?.message).toContain('at least 4 instances are needed');
  }, 60_000);
});
