/**
 * Array helpers that hold for any length. Spreading an array into call arguments
 * (`out.push(...lines)`, `Math.max(...values)`) puts every element on the stack and throws
 * RangeError past roughly 100k elements; a patch of a few MB has that many lines.
 */

/** Appends every item of `items` to `target`, in order; returns `target`. */
export function pushAll<T>(target: T[], items: Iterable<T>): T[] {
  for (const item of items) target.push(item);
  return target;
}

/** The largest of `values` and `floor` (`-Infinity` by default), as `Math.max(floor, ...values)` without the spread. */
export function maxOf(values: Iterable<number>, floor = Number.NEGATIVE_INFINITY): number {
  let max = floor;
  for (const value of values) if (value > max || Number.isNaN(value)) max = value;
  return max;
}
