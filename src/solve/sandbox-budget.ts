/**
 * The one sandbox-scheduling policy of a solve job: every stage that opens a sandbox (rollouts,
 * verification, test runs) holds a slot of one global budget while its sandbox exists, and each
 * stage may add its own lane limit (rollouts per wave, verification concurrency). A slot is held
 * only for the sandbox's lifetime, never across a stage boundary, so stages cannot deadlock on it.
 */
import pLimit from 'p-limit';

export interface SandboxBudget {
  /** Runs `work` (which opens and closes one sandbox) once a global slot is free. */
  hold<T>(work: () => Promise<T>): Promise<T>;
  /** A stage's own limit on top of the global one: at most `limit` of its calls run at once. */
  lane(limit: number): <T>(work: () => Promise<T>) => Promise<T>;
  /** Sandbox seconds used so far, summed over every slot held (the checks' cost figure). */
  readonly sandboxMs: number;
}

/** `total`: sandboxes open at once across the whole job; undefined for no global bound. */
export function createSandboxBudget(total: number | undefined): SandboxBudget {
  const global = total === undefined ? undefined : pLimit(Math.max(1, Math.floor(total)));
  let sandboxMs = 0;
  const hold = async <T>(work: () => Promise<T>): Promise<T> => {
    const timed = async (): Promise<T> => {
      const started = Date.now();
      try {
        return await work();
      } finally {
        sandboxMs += Date.now() - started;
      }
    };
    return global ? global(timed) : timed();
  };
  return {
    hold,
    lane(limit) {
      const own = pLimit(Math.max(1, Math.floor(limit)));
      return (work) => own(work);
    },
    get sandboxMs() {
      return sandboxMs;
    },
  };
}
