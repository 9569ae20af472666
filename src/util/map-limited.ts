/**
 * `mapLimited(items, limit, fn)`: `fn` over every item with at most `limit` running at once, results
 * in the items' order. The first rejection is the answer and no further item starts, so work a
 * caller has given up on (an aborted signal that `fn` checks) stops between items.
 */
export async function mapLimited<T, R>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  let failed = false;
  const lane = async (): Promise<void> => {
    while (!failed && next < items.length) {
      const index = next++;
      try {
        results[index] = await fn(items[index]!, index);
      } catch (error) {
        failed = true;
        throw error;
      }
    }
  };
  const lanes = Array.from({ length: Math.max(1, Math.min(Math.floor(limit), items.length)) }, lane);
  await Promise.all(lanes);
  return results;
}
