/**
 * A pool of four candidates over the Django-shaped repository (django-shaped-repo.ts) that each
 * add or change a test, for the tests from the pool (docs/checks.md#tests-from-the-pool):
 * `a` fixes slugify and adds `test_slugify` to the existing tests/utils_tests/test_text.py; `b`
 * fixes it the same way with its own test in a new file; `c` is a plausible wrong fix (spaces
 * dropped) whose own new test expects exactly that; `d` adds a `slugify_unicode` helper without
 * fixing slugify, and a test importing a name that does not exist on base (ImportError there).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { git, stagedDiff } from '../support/git-fixture.js';
import type { DjangoShapedRepo } from './django-shaped-repo.js';

export interface DjangoPool {
  a: string;
  b: string;
  c: string;
  d: string;
}

const TEXT = 'django/utils/text.py';
const TESTS = 'tests/utils_tests/test_text.py';

const newTest = (name: string, body: string, imports = 'slugify') =>
  `import unittest\n\nfrom django.utils.text import ${imports}\n\n\nclass ${name}(unittest.TestCase):\n${body}`;

export function makeDjangoPool(repo: DjangoShapedRepo): DjangoPool {
  const bare = join(repo.reposDir, 'django__django.git');
  const base = (path: string) => git(bare, 'show', `${repo.baseCommit}:${path}`);
  const scratch = mkdtempSync(join(tmpdir(), 'wnw-django-pool-'));
  let n = 0;
  const diff = (edits: Record<string, string>) => stagedDiff(bare, join(scratch, String(n++)), edits);
  const text = base(TEXT);
  const fixed = text.replace("replace(' ', '_')", "replace(' ', '-')");
  try {
    return {
      a: diff({
        [TEXT]: fixed,
        [TESTS]: `${base(TESTS)}\n    def test_slugify(self):\n        self.assertEqual(slugify(' Hello World '), 'hello-world')\n`,
      }),
      b: diff({
        [TEXT]: fixed,
        'tests/utils_tests/test_slug.py': newTest(
          'SlugTests',
          "    def test_hyphens(self):\n        self.assertEqual(slugify('a b c'), 'a-b-c')\n",
        ),
      }),
      c: diff({
        [TEXT]: text.replace("replace(' ', '_')", "replace(' ', '')"),
        'tests/utils_tests/test_slug_join.py': newTest(
          'JoinTests',
          "    def test_joined(self):\n        self.assertEqual(slugify('Hello World'), 'helloworld')\n",
        ),
      }),
      d: diff({
        [TEXT]: `${text}\n\ndef slugify_unicode(value):\n    return value.strip().lower()\n`,
        'tests/utils_tests/test_slug_unicode.py': newTest(
          'UnicodeTests',
          "    def test_unicode(self):\n        self.assertEqual(slugify_unicode(' Hé '), 'hé')\n",
          'slugify_unicode',
        ),
      }),
    };
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
