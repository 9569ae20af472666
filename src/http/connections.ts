/**
 * Connections per base URL when none are configured. Past them a request waits in the pool's
 * queue, which is what the scorer's batcher counts as a busy server (src/scoring/registry.ts).
 * Its own module so that the registry reads it without loading undici.
 */
export const DEFAULT_CONNECTIONS_PER_URL = 64;
