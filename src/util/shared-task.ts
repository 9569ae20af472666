/**
 * Work that several callers wait for, started once and aborted only when every one of them has
 * given up: a base snapshot's clone is shared by all rollouts of a repository, so one cancelled
 * rollout must not kill the clone the others wait for, but the last one must.
 */
import { abortedError, wnwError } from '../errors.js';

export class SharedTask<T> {
  readonly #controller = new AbortController();
  readonly #promise: Promise<T>;
  /** Settles when the work has stopped, whatever its outcome (never rejects). */
  readonly done: Promise<void>;
  #waiters = 0;
  #settled = false;

  /** Starts `work` at once with a signal that fires when the last waiter leaves or abort() is called. */
  constructor(work: (signal: AbortSignal) => Promise<T>) {
    this.#promise = work(this.#controller.signal);
    const settle = (): void => {
      this.#settled = true;
    };
    this.done = this.#promise.then(settle, settle);
  }

  /** Whether the work was aborted: a later caller should start the work anew. */
  get aborted(): boolean {
    return this.#controller.signal.aborted;
  }

  /**
   * Waits for the result. When `signal` fires first, this caller stops waiting at once
   * (WNW_ERR_OP_ABORTED) and, if no one else waits, the work is aborted. A caller without a
   * signal waits until the work ends.
   */
  join(signal?: AbortSignal): Promise<T> {
    if (signal?.aborted) return Promise.reject(abortedError(signal));
    if (this.#settled) return this.#promise;
    this.#waiters += 1;
    return new Promise<T>((resolve, reject) => {
      let left = false;
      const leave = (): void => {
        if (left) return;
        left = true;
        signal?.removeEventListener('abort', onAbort);
        this.#waiters -= 1;
        if (this.#waiters === 0 && !this.#settled)
          this.#controller.abort(wnwError('WNW_ERR_OP_ABORTED', 'every caller waiting for this work gave up'));
      };
      const onAbort = (): void => {
        leave();
        reject(abortedError(signal!));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#promise.then(
        (value) => {
          leave();
          resolve(value);
        },
        (error: unknown) => {
          leave();
          reject(error);
        },
      );
    });
  }

  /** Aborts the work for every waiter (they get its rejection). */
  abort(reason: unknown): void {
    if (!this.#settled) this.#controller.abort(reason);
  }
}

/**
 * SharedTasks by key: one task per key, joined by every caller asking for it; a task that failed
 * or was aborted is started anew by the next caller (a finished one is kept). Base snapshots and
 * image pulls are prepared through one of these.
 */
export class SharedTaskMap<T> {
  readonly #tasks = new Map<string, SharedTask<T>>();
  /** Tasks not yet ended, including aborted ones no longer in #tasks. */
  readonly #running = new Set<SharedTask<T>>();

  /** Joins the task of `key`, starting `work` when there is none to join. */
  join(key: string, work: (signal: AbortSignal) => Promise<T>, signal?: AbortSignal): Promise<T> {
    let task = this.#tasks.get(key);
    // An aborted task (all its callers gave up) may still be winding down: start a new one.
    if (!task || task.aborted) {
      const made: SharedTask<T> = new SharedTask((abort) =>
        work(abort).catch((error: unknown) => {
          if (this.#tasks.get(key) === made) this.#tasks.delete(key);
          throw error;
        }),
      );
      this.#tasks.set(key, made);
      this.#running.add(made);
      void made.done.then(() => this.#running.delete(made));
      task = made;
    }
    return task.join(signal);
  }

  /** Keys with a task finished or running. */
  get size(): number {
    return this.#tasks.size;
  }

  /** Aborts every task still running with `reason`, waits until they have stopped, and forgets them all. */
  async abortAll(reason: unknown): Promise<void> {
    const tasks = [...this.#running];
    for (const task of tasks) task.abort(reason);
    await Promise.all(tasks.map((task) => task.done));
    this.#tasks.clear();
  }
}
