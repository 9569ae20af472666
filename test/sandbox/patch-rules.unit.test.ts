/** Issue 18 item 2: the patch rules refuse symbolic links that point outside the repository (and still refuse paths outside it). */
import { describe, expect, it } from 'vitest';
import { patchViolation } from '../../src/sandbox/patch-rules.js';

/** A new symbolic link as `git diff` prints it. */
const newLink = (path: string, target: string) =>
  `diff --git a/${path} b/${path}\nnew file mode 120000\nindex 0000000..e69de29\n--- /dev/null\n+++ b/${path}\n@@ -0,0 +1 @@\n+${target}\n\\ No newline at end of file\n`;
/** An existing link retargeted. */
const changedLink = (path: string, from: string, to: string) =>
  `diff --git a/${path} b/${path}\nindex 1111111..2222222 120000\n--- a/${path}\n+++ b/${path}\n@@ -1 +1 @@\n-${from}\n\\ No newline at end of file\n+${to}\n\\ No newline at end of file\n`;
const FIX = 'diff --git a/a.py b/a.py\n--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n';

describe('patchViolation', () => {
  it.each([
    ['an absolute target', newLink('passwd', '/etc/passwd'), /symbolic link to "\/etc\/passwd", which is an absolute path/],
    ['a target escaping with ..', newLink('docs/up', '../../outside'), /outside the repository \(\.\.\)/],
    ['a target into .git', newLink('hooks', '.git/hooks'), /inside \.git/],
    ['an existing link retargeted outside', changedLink('lib', 'src', '/usr/lib'), /absolute path/],
    ['a link after a normal file', FIX + newLink('x', '/'), /symbolic link to "\/"/],
  ])('refuses a symbolic link with %s', (_, patch, message) => {
    expect(patchViolation(patch)?.what).toMatch(message);
  });

  it.each([
    ['a sibling file', newLink('docs/readme', '../README.md')],
    ['a file in the same folder', newLink('a/b/link', 'c.txt')],
    [
      'a normal file whose content looks like a path',
      'diff --git a/p.txt b/p.txt\nnew file mode 100644\n--- /dev/null\n+++ b/p.txt\n@@ -0,0 +1 @@\n+/etc/passwd\n',
    ],
  ])('allows a symbolic link or file to %s', (_, patch) => {
    expect(patchViolation(patch)).toBeUndefined();
  });

  it('still refuses paths outside the repository or in .git', () => {
    expect(patchViolation(FIX.replaceAll('a.py', '../a.py'))?.what).toMatch(/leaves the repository/);
    expect(patchViolation('--- a/a.py\n+++ /etc/passwd\n@@ -1 +1 @@\n-x\n+y\n')?.what).toMatch(/is absolute/);
    expect(patchViolation(FIX.replaceAll('a.py', '.git/config'))?.what).toMatch(/writes into \.git/);
    expect(patchViolation(FIX)).toBeUndefined();
  });
});
