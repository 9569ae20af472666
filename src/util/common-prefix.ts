/** Length of the longest common prefix of two strings (in UTF-16 code units) or two arrays. */
export function commonPrefixLength(a: ArrayLike<unknown>, b: ArrayLike<unknown>): number {
  const limit = Math.min(a.length, b.length);
  let index = 0;
  while (index < limit && a[index] === b[index]) index += 1;
  return index;
}
