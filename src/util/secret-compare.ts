/**
 * Constant-time checks of a presented secret (an API key, a rollout token) against the configured
 * ones. Both sides are hashed to fixed-length SHA-256 digests before `timingSafeEqual`, so neither
 * the secret's length nor where the two differ shows in the timing (and a value of another byte
 * length cannot make it throw), and every configured secret is compared, so which one matched
 * does not show either.
 */
import { createHash, timingSafeEqual } from 'node:crypto';

/** True when `given` is a non-empty string equal to one of `secrets`. */
export type SecretCheck = (given: unknown) => boolean;

export function secretMatcher(secrets: readonly string[]): SecretCheck {
  const digests = secrets.map(digest);
  return (given) => {
    if (typeof given !== 'string' || given === '') return false;
    const candidate = digest(given);
    let found = false;
    for (const secret of digests) found = timingSafeEqual(secret, candidate) || found;
    return found;
  };
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}
