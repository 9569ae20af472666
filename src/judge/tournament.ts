/**
 * Which pairs the judge compares: a circulant tournament. In the current order (the strategy's
 * ranking without the judge), each candidate meets the k after it, wrapping around the end. With
 * N > 2k that is exactly N·k unordered pairs and every candidate meets 2k opponents, so win counts
 * compare fairly; with N ≤ 2k + 1 it is every pair. Neighbours in the current order are the pairs
 * whose order is in doubt, and a fixed scheme keeps the choice deterministic.
 */

/** The unordered pairs of `ids` (in their order) under the circulant scheme with `k` opponents after each. */
export function circulantPairs<T>(ids: readonly T[], k: number): Array<[T, T]> {
  const n = ids.length;
  if (n < 2) return [];
  const seen = new Set<string>();
  const pairs: Array<[T, T]> = [];
  for (let i = 0; i < n; i += 1) {
    for (let step = 1; step <= Math.min(k, n - 1); step += 1) {
      const j = (i + step) % n;
      const key = i < j ? `${i},${j}` : `${j},${i}`;
      if (seen.has(key)) continue;
      seen.add(key);
      pairs.push(i < j ? [ids[i]!, ids[j]!] : [ids[j]!, ids[i]!]);
    }
  }
  return pairs;
}
