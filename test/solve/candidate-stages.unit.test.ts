/** A finished candidate's stages run at once (src/solve/candidate-stages.ts), and a failure waits for the others. */
import { describe, expect, it } from 'vitest';
import { runCandidateStages } from '../../src/solve/candidate-stages.js';
import type { Slot } from '../../src/solve/solve-context.js';

const slot = { index: 0 } as Slot;

/** A promise and the function that resolves it. */
function gate(): { opened: Promise<void>; open: () => void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

describe('a candidate stages', () => {
  it('start together: verification and the regression check each wait for the other to have started', async () => {
    const verifying = gate();
    const checking = gate();
    const order: string[] = [];
    await runCandidateStages(slot, [
      async () => {
        order.push('score');
      },
      async () => {
        verifying.open();
        // Run one after another, this would never resolve: the regression check starts only after it.
        await checking.opened;
        order.push('verify');
      },
      async () => {
        checking.open();
        await verifying.opened;
        order.push('regression');
      },
      undefined,
    ]);
    expect(order.sort()).toEqual(['regression', 'score', 'verify']);
  });

  it('throws the first failure only once every other stage has ended', async () => {
    let ended = false;
    const run = runCandidateStages(slot, [
      async () => {
        throw new Error('scorer down');
      },
      async () => {
        await new Promise((resolve) => setTimeout(resolve, 30));
        ended = true;
      },
    ]);
    await expect(run).rejects.toThrow('scorer down');
    expect(ended).toBe(true);
  });
});
