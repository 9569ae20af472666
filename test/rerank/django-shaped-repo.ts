/**
 * A Django-shaped repository for the execution tests of `winnower rerank --verify`: a `django/`
 * package and `tests/runtests.py` that takes Django's flags (`--verbosity 2 --settings=test_sqlite
 * --parallel 1 <labels>`) and prints unittest's verbose lines as Django's runner does, so the
 * built-in recipe for django/django runs it unchanged. The bug: `slugify` joins words with `_`.
 * Built as a bare repository named as SWE-bench names its images (`django__django.git`), with the
 * candidates' patches made by editing a clone and taking `git diff`.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { commitRepo, git, stagedDiff } from '../support/git-fixture.js';

export const RUNTESTS = `#!/usr/bin/env python3
import argparse, os, sys, unittest
here = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [here, os.path.dirname(here)]
parser = argparse.ArgumentParser()
parser.add_argument('labels', nargs='*')
parser.add_argument('--verbosity', type=int, default=1)
parser.add_argument('--settings')
parser.add_argument('--parallel')
args = parser.parse_args()
print('Testing against Django installed in %r' % os.path.join(os.path.dirname(here), 'django'), file=sys.stderr)
loader = unittest.TestLoader()
suite = loader.loadTestsFromNames(args.labels) if args.labels else loader.discover(here, pattern='test_*.py', top_level_dir=here)
result = unittest.TextTestRunner(verbosity=args.verbosity).run(suite)
sys.exit(not result.wasSuccessful())
`;

const TEXT = `def capfirst(x):
    return x and str(x)[0].upper() + str(x)[1:]


def slugify(value):
    return value.strip().lower().replace(' ', '_')
`;

const TESTS = `import unittest

from django.utils.text import capfirst, slugify


class TestUtilsText(unittest.TestCase):
    def test_capfirst(self):
        self.assertEqual(capfirst('hello world'), 'Hello world')
`;

const FILES: Record<string, string> = {
  'django/__init__.py': 'VERSION = (4, 2)\n',
  'django/utils/__init__.py': '',
  'django/utils/text.py': TEXT,
  'tests/runtests.py': RUNTESTS,
  'tests/test_sqlite.py': "DATABASES = {'default': {'ENGINE': 'django.db.backends.sqlite3'}}\n",
  'tests/utils_tests/__init__.py': '',
  'tests/utils_tests/test_text.py': TESTS,
};

export interface DjangoShapedRepo {
  /** The folder given as `--repos`. */
  reposDir: string;
  baseCommit: string;
  testPatch: string;
  /** `correct` fixes slugify; `wrong` drops the spaces; `breaks` fixes slugify and breaks capfirst. */
  patches: { correct: string; wrong: string; breaks: string };
  cleanup(): void;
}

/** The diff of `edits` (path → new content) over the base, made in a scratch clone. */
function diffOf(bare: string, scratch: string, edits: Record<string, string>): string {
  rmSync(scratch, { recursive: true, force: true });
  return stagedDiff(bare, scratch, edits);
}

export function makeDjangoShapedRepo(): DjangoShapedRepo {
  const root = mkdtempSync(join(tmpdir(), 'wnw-django-shaped-'));
  const work = join(root, 'work');
  mkdirSync(work);
  const baseCommit = commitRepo(work, FILES, 'base', ['tests/runtests.py']);
  const reposDir = join(root, 'repos');
  mkdirSync(reposDir);
  const bare = join(reposDir, 'django__django.git');
  git(root, 'clone', '-q', '--bare', work, bare);
  const scratch = join(root, 'scratch');
  const fixed = TEXT.replace("replace(' ', '_')", "replace(' ', '-')");
  return {
    reposDir,
    baseCommit,
    testPatch: diffOf(bare, scratch, {
      'tests/utils_tests/test_text.py': `${TESTS}\n    def test_slugify(self):\n        self.assertEqual(slugify(' Hello World '), 'hello-world')\n`,
    }),
    patches: {
      correct: diffOf(bare, scratch, { 'django/utils/text.py': fixed }),
      wrong: diffOf(bare, scratch, { 'django/utils/text.py': TEXT.replace("replace(' ', '_')", "replace(' ', '')") }),
      breaks: diffOf(bare, scratch, { 'django/utils/text.py': fixed.replace('str(x)[0].upper()', 'str(x)[0].lower()') }),
    },
    cleanup: () => rmSync(root, { recursive: true, force: true }),
  };
}
