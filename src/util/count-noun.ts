/** `1 instance`, `2 instances`: a count with its noun, plural unless the count is one. */
export function countNoun(count: number, noun: string, plural = `${noun}s`): string {
  return `${count} ${count === 1 ? noun : plural}`;
}
