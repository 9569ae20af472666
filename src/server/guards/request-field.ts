/**
 * Submit-time checks reuse code that names fields relative to the request (`policy.url`,
 * `agent.config`); a client sees every field as the validation errors name it, from the body
 * down (`body.policy.url`). `inBody` runs such a check and renames the field of its 4xx error.
 */
import { WinnowerError, wnwError } from '../../errors.js';

export function bodyField(error: WinnowerError, prefix = 'body'): WinnowerError {
  const field = error.details.field;
  if (typeof field !== 'string' || error.status >= 500 || field === prefix || field.startsWith(`${prefix}.`)) return error;
  const renamed = `${prefix}.${field}`;
  const message = error.message.startsWith(`${field}:`) ? `${renamed}${error.message.slice(field.length)}` : `${renamed}: ${error.message}`;
  return wnwError(error.code, message, { details: { ...error.details, field: renamed }, cause: error, retryable: error.retryable });
}

/** Runs `check`; a WinnowerError it throws names its field under `prefix`. */
export async function inBody<T>(check: () => T | Promise<T>, prefix = 'body'): Promise<T> {
  try {
    return await check();
  } catch (error) {
    throw WinnowerError.isInstance(error) ? bodyField(error, prefix) : error;
  }
}
