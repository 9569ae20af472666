/** Awaits `promise`, expects it to reject with a WinnowerError of `code`, and returns that error. */
import { expect } from 'vitest';
import { WinnowerError } from '../../src/errors.js';

export async function expectCode(promise: Promise<unknown>, code: string): Promise<WinnowerError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(WinnowerError.isInstance(error), `expected ${code}, got ${String(error)}`).toBe(true);
  expect((error as WinnowerError).code).toBe(code);
  return error as WinnowerError;
}
