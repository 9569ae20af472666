/** SharedTask: one piece of work for several waiters, aborted only when the last one leaves. */
import { describe, expect, it } from 'vitest';
import { SharedTask, SharedTaskMap } from '../../src/util/shared-task.js';

/** Work that ends only when its signal fires (then rejects with the signal's reason). */
function untilAborted(): { started: () => number; work: (signal: AbortSignal) => Promise<string> } {
  let starts = 0;
  return {
    started: () => starts,
    work: (signal) => {
      starts += 1;
      return new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true }));
    },
  };
}

const codeOf = (promise: Promise<unknown>) =>
  promise.then(
    () => 'resolved',
    (error: { code?: string }) => error.code,
  );

describe('SharedTask', () => {
  it('gives every waiter the same result of one run', async () => {
    let runs = 0;
    const task = new SharedTask(async () => `run ${(runs += 1)}`);
    expect(await Promise.all([task.join(), task.join(new AbortController().signal)])).toEqual(['run 1', 'run 1']);
    expect(runs).toBe(1);
  });

  it('lets one waiter leave without aborting the work the others wait for', async () => {
    const { work } = untilAborted();
    const task = new SharedTask(work);
    const first = new AbortController();
    const second = new AbortController();
    const leaving = codeOf(task.join(first.signal));
    const staying = codeOf(task.join(second.signal));

    first.abort();
    expect(await leaving).toBe('WNW_ERR_OP_ABORTED');
    expect(task.aborted).toBe(false);

    second.abort();
    expect(await staying).toBe('WNW_ERR_OP_ABORTED');
    expect(task.aborted).toBe(true);
    await task.done;
  });

  it('is never aborted while a waiter without a signal waits', async () => {
    const { work } = untilAborted();
    const task = new SharedTask(work);
    const controller = new AbortController();
    const patient = codeOf(task.join());
    const leaving = codeOf(task.join(controller.signal));
    controller.abort();
    expect(await leaving).toBe('WNW_ERR_OP_ABORTED');
    expect(task.aborted).toBe(false);

    task.abort(Object.assign(new Error('closed'), { code: 'WNW_ERR_SBX_CLOSED' }));
    expect(await patient).toBe('WNW_ERR_SBX_CLOSED');
  });

  it('refuses a waiter whose signal already fired, without counting it', async () => {
    const { work } = untilAborted();
    const task = new SharedTask(work);
    const staying = codeOf(task.join(new AbortController().signal));
    expect(await codeOf(task.join(AbortSignal.abort()))).toBe('WNW_ERR_OP_ABORTED');
    expect(task.aborted).toBe(false);
    task.abort(new Error('end'));
    expect(await staying).toBe(undefined);
  });
});

describe('SharedTaskMap', () => {
  it('runs one task per key for all its callers, keeps a result, and starts a failed one anew', async () => {
    const tasks = new SharedTaskMap<string>();
    let runs = 0;
    const work = async (): Promise<string> => `run ${(runs += 1)}`;
    expect(await Promise.all([tasks.join('a', work), tasks.join('a', work)])).toEqual(['run 1', 'run 1']);
    expect(await tasks.join('a', work)).toBe('run 1');
    let fail = true;
    const flaky = async (): Promise<string> => {
      if (fail) throw new Error('down');
      return 'up';
    };
    await expect(tasks.join('b', flaky)).rejects.toThrow('down');
    fail = false;
    expect(await tasks.join('b', flaky)).toBe('up');
    expect(tasks.size).toBe(2);
  });

  it('aborts the running tasks on abortAll, waits for them and forgets every key', async () => {
    const tasks = new SharedTaskMap<string>();
    const { started, work } = untilAborted();
    const waiting = tasks.join('slow', work);
    await tasks.abortAll(new Error('closing'));
    await expect(waiting).rejects.toThrow('closing');
    expect(tasks.size).toBe(0);
    void tasks.join('slow', work).catch(() => undefined);
    expect(started()).toBe(2);
    await tasks.abortAll(new Error('closing again'));
  });
});
