/**
 * Job retention: finished jobs older than `max_age_days`, or beyond the newest `max_jobs`, are
 * deleted with their candidates and events, so the store does not grow without bound. Queued and
 * running jobs are never touched. Runs once at start-up, then every `interval_minutes`.
 */
import type { RetentionConfig } from '../server/limits-config.js';
import type { JobStore } from './types.js';

const DAY_MS = 86_400_000;

/** Deletes what the retention rules say has expired; the ids deleted. */
export async function purgeExpired(
  store: JobStore,
  retention: Pick<RetentionConfig, 'max_age_days' | 'max_jobs'>,
  now = Date.now(),
): Promise<string[]> {
  if (retention.max_age_days <= 0 && retention.max_jobs <= 0) return [];
  return store.purgeFinished({
    ...(retention.max_age_days > 0 ? { finishedBefore: new Date(now - retention.max_age_days * DAY_MS).toISOString() } : {}),
    ...(retention.max_jobs > 0 ? { keepNewest: retention.max_jobs } : {}),
  });
}

/**
 * Purges now and then on a timer that does not keep the process alive; returns the stop function.
 * A purge that fails (the store unreachable) is reported and tried again at the next tick.
 */
export function scheduleRetention(
  store: JobStore,
  retention: RetentionConfig,
  onPurged: (ids: string[]) => void,
  onError: (error: unknown) => void = (error) => console.error('winnower: retention purge failed:', error),
): () => void {
  const run = () => {
    purgeExpired(store, retention).then((ids) => {
      if (ids.length > 0) onPurged(ids);
    }, onError);
  };
  run();
  const timer = setInterval(run, retention.interval_minutes * 60_000);
  timer.unref();
  return () => clearInterval(timer);
}
