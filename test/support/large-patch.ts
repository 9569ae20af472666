/**
 * The patch of issue 18 item 1 (docs/design/05-defects-found.md#D1): one new file of 300,000 lines, about 2.3 MB,
 * under the 4 MiB patch and trajectory caps. Every line is a change, so code that spreads a
 * file's lines into call arguments overflows the stack on it.
 */
export const LARGE_PATCH_LINES = 300_000;

/** `seq 1 300000 > big.txt` as git diff prints it. */
export function largeAddedFilePatch(path = 'big.txt', lines = LARGE_PATCH_LINES): string {
  const body: string[] = [];
  for (let line = 1; line <= lines; line++) body.push(`+${line}`);
  return `diff --git a/${path} b/${path}\nnew file mode 100644\nindex 0000000..1111111\n--- /dev/null\n+++ b/${path}\n@@ -0,0 +1,${lines} @@\n${body.join('\n')}\n`;
}
