import { describe, expect, it } from 'vitest';
import { createSandboxBudget } from '../../src/solve/sandbox-budget.js';

/** A piece of work that reports how many of its kind are open at once. */
function counter() {
  let open = 0;
  let most = 0;
  const work = async () => {
    open += 1;
    most = Math.max(most, open);
    await new Promise((resolve) => setImmediate(resolve));
    open -= 1;
  };
  return { work, most: () => most };
}

describe('the sandbox budget of a solve job', () => {
  it('bounds sandboxes across lanes by the global total', async () => {
    const budget = createSandboxBudget(3);
    const rollouts = budget.lane(4);
    const tests = budget.lane(4);
    const c = counter();
    await Promise.all([
      ...Array.from({ length: 4 }, () => rollouts(() => budget.hold(c.work))),
      ...Array.from({ length: 4 }, () => tests(() => budget.hold(c.work))),
    ]);
    expect(c.most()).toBe(3);
  });

  it('bounds a lane by its own limit when the total is larger', async () => {
    const budget = createSandboxBudget(undefined);
    const lane = budget.lane(2);
    const c = counter();
    await Promise.all(Array.from({ length: 6 }, () => lane(() => budget.hold(c.work))));
    expect(c.most()).toBe(2);
  });
});
