/** Waiting on a promise that a signal may stop waiting for, while the work itself runs on. */
import { abortedError, type WinnowerError } from '../errors.js';

/** `promise`, or `onAbort(signal)` (default WNW_ERR_OP_ABORTED) as soon as `signal` fires (the promise itself runs on). */
export function untilAborted<T>(
  promise: Promise<T>,
  signal: AbortSignal | undefined,
  onAbort: (signal: AbortSignal) => WinnowerError = abortedError,
): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(onAbort(signal));
  return new Promise<T>((resolve, reject) => {
    const stop = () => reject(onAbort(signal));
    signal.addEventListener('abort', stop, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', stop);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', stop);
        reject(error);
      },
    );
  });
}
