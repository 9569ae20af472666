/**
 * One job's store writes, run one after another in the order they were asked for. With an
 * asynchronous store two writes to one row (a step's snapshot, then the candidate's end) could
 * otherwise land in either order; here each starts only when the one before it has settled.
 */
export class SerialWrites {
  #tail: Promise<unknown> = Promise.resolve();
  /** The first failure of a write nobody awaited, thrown by the next awaited one. */
  #unseen: unknown;
  #failed = false;

  /** Queues `write`; the promise settles with it (and rejects with an earlier unawaited write's failure). */
  run<T>(write: () => Promise<T>): Promise<T> {
    const result = this.#tail.then(() => {
      if (this.#failed) {
        this.#failed = false;
        throw this.#unseen;
      }
      return write();
    });
    this.#tail = result.catch(() => undefined);
    return result;
  }

  /** Queues `write` without waiting for it; a failure is kept for the next `run` or `flush`. */
  fire(write: () => Promise<unknown>): void {
    this.#tail = this.#tail.then(write).catch((error: unknown) => {
      if (!this.#failed) {
        this.#failed = true;
        this.#unseen = error;
      }
    });
  }

  /** Resolves once every queued write has settled; rejects with an unawaited write's failure. */
  flush(): Promise<void> {
    return this.run(async () => undefined);
  }
}
