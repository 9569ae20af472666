/**
 * Small repositories shaped like real ones, for the regression check's tests: a Django-style
 * checkout (`tests/runtests.py` over a `django/` package, tests in `tests/<app>/tests.py`), a
 * SymPy-style one (`bin/test`), a src-layout pytest project, a Python project whose package.json
 * has a karma test script, and a shell-tested one. Each is a git repository in a temp dir; a
 * candidate patch is made by editing a clone and taking `git diff` (renames detected).
 */
import { mkdirSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { commitRepo, git, writeFiles } from '../support/git-fixture.js';

type Files = Record<string, string>;

/** A change to a clone: files to write, paths to delete, renames `[from, to]`. */
export interface Change {
  write?: Files;
  delete?: string[];
  rename?: Array<[string, string]>;
}

export interface SuiteRepo {
  path: string;
  /** The patch `change` makes on the base commit. */
  patch(change: Change): string;
}

/** Creates the repositories under one temp folder; `cleanup` removes them all. */
export function suiteRepos(): { make(name: string, files: Files, executable?: string[]): SuiteRepo; cleanup(): void } {
  const root = mkdtempSync(join(tmpdir(), 'winnower-suite-repos-'));
  let clones = 0;
  return {
    make(name, files, executable = []) {
      const path = join(root, name);
      mkdirSync(path);
      commitRepo(path, files, `${name} at base`, executable);
      return {
        path,
        patch(change) {
          const work = join(root, `clone-${++clones}`);
          git(root, 'clone', '-q', path, work);
          writeFiles(work, change.write ?? {});
          for (const file of change.delete ?? []) rmSync(join(work, file));
          for (const [from, to] of change.rename ?? []) {
            mkdirSync(join(work, to, '..'), { recursive: true });
            renameSync(join(work, from), join(work, to));
          }
          git(work, 'add', '-A');
          return git(work, 'diff', '--cached', '-M');
        },
      };
    },
    cleanup: () => rmSync(root, { recursive: true, force: true }),
  };
}

const RUNTESTS = `#!/usr/bin/env python3
"""Django-style runner: runtests.py [--settings S] [--parallel N] [--verbosity N] [label ...]."""
import argparse
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.dirname(HERE)]
parser = argparse.ArgumentParser()
parser.add_argument("labels", nargs="*")
parser.add_argument("--settings")
parser.add_argument("--parallel")
parser.add_argument("--verbosity", "-v", type=int, default=1)
args = parser.parse_args()
if args.settings:
    __import__(args.settings)
loader = unittest.defaultTestLoader
suite = unittest.TestSuite()
labels = args.labels or [app + ".tests" for app in sorted(os.listdir(HERE)) if os.path.isfile(os.path.join(HERE, app, "tests.py"))]
for label in labels:
    suite.addTests(loader.loadTestsFromName(label))
print("Testing against Django installed in %r" % os.path.join(os.path.dirname(HERE), "django"), file=sys.stderr)
result = unittest.TextTestRunner(verbosity=args.verbosity).run(suite)
sys.exit(0 if result.wasSuccessful() else 1)
`;

export const TEXT_PY =
  'def capfirst(x):\n    return x[:1].upper() + x[1:]\n\n\ndef slugify(value):\n    return value.strip().lower().replace(" ", "-")\n';
export const TEXT_TESTS = [
  'import unittest',
  '',
  'from django.utils.text import capfirst, slugify',
  '',
  '',
  'class TextTests(unittest.TestCase):',
  '    def test_capfirst(self):',
  '        self.assertEqual(capfirst("hello"), "Hello")',
  '',
  '    def test_slugify(self):',
  '        self.assertEqual(slugify(" Hello World "), "hello-world")',
  '',
].join('\n');

/** Django-style: `tests/runtests.py` over `django/`, tests in `tests/utils_tests/tests.py` and `tests/html_tests/tests.py`. */
export const DJANGO_FILES: Files = {
  'django/__init__.py': '',
  'django/utils/__init__.py': '',
  'django/utils/text.py': TEXT_PY,
  'django/utils/html.py': 'def escape(text):\n    return text.replace("&", "&amp;").replace("<", "&lt;")\n',
  'tests/runtests.py': RUNTESTS,
  'tests/test_sqlite.py': 'DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3"}}\n',
  'tests/utils_tests/__init__.py': '',
  'tests/utils_tests/tests.py': TEXT_TESTS,
  'tests/html_tests/__init__.py': '',
  'tests/html_tests/tests.py': [
    'import unittest',
    '',
    'from django.utils.html import escape',
    '',
    '',
    'class EscapeTests(unittest.TestCase):',
    '    def test_escape(self):',
    '        self.assertEqual(escape("<a&b>"), "&lt;a&amp;b>")',
    '',
  ].join('\n'),
};
export const DJANGO_EXECUTABLE = ['tests/runtests.py'];

const BIN_TEST = `#!/usr/bin/env python3
"""SymPy-style runner: bin/test [-C] [--verbose] [path ...] prints each file, then each test and its status."""
import importlib.util
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
paths = [arg for arg in sys.argv[1:] if not arg.startswith("-")]
files = []
for folder, dirs, names in os.walk(os.path.join(ROOT, "sympy")):
    dirs.sort()
    for name in sorted(names):
        rel = os.path.relpath(os.path.join(folder, name), ROOT)
        if name.startswith("test_") and name.endswith(".py") and (not paths or any(rel.startswith(p) for p in paths)):
            files.append(rel)
passed = failed = 0
for rel in files:
    spec = importlib.util.spec_from_file_location(rel[:-3].replace("/", "."), os.path.join(ROOT, rel))
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception:
        print("%s[?]   Failed to import" % rel)
        failed += 1
        continue
    tests = [name for name in sorted(vars(module)) if name.startswith("test_") and callable(getattr(module, name))]
    print("%s[%d] " % (rel, len(tests)))
    for name in tests:
        try:
            getattr(module, name)()
            print(name + " ok")
            passed += 1
        except AssertionError:
            print(name + " F")
            failed += 1
        except Exception:
            print(name + " E")
            failed += 1
print("== tests finished: %d passed, %d failed, in 0.01 seconds ==" % (passed, failed))
sys.exit(1 if failed else 0)
`;

export const SYMPY_ADD_TESTS =
  'from sympy.core.add import add\n\n\ndef test_add_ints():\n    assert add(2, 3) == 5\n\n\ndef test_add_zero():\n    assert add(0, 7) == 7\n';

/** SymPy-style: `bin/test` over `sympy/`, tests in `sympy/<module>/tests/test_*.py`. */
export const SYMPY_FILES: Files = {
  'bin/test': BIN_TEST,
  'sympy/__init__.py': '',
  'sympy/core/__init__.py': '',
  'sympy/core/add.py': 'def add(a, b):\n    return a + b\n',
  'sympy/core/tests/__init__.py': '',
  'sympy/core/tests/test_add.py': SYMPY_ADD_TESTS,
  'sympy/sets/__init__.py': '',
  'sympy/sets/union.py': 'def union(a, b):\n    return sorted(set(a) | set(b))\n',
  'sympy/sets/tests/__init__.py': '',
  'sympy/sets/tests/test_union.py':
    'from sympy.sets.union import union\n\n\ndef test_union():\n    assert union([1, 2], [2, 3]) == [1, 2, 3]\n',
};
export const SYMPY_EXECUTABLE = ['bin/test'];

export const OPS_PY = 'def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n';

/**
 * src-layout pytest project: `src/pkg` on pytest's `pythonpath`, tests in `tests/`; `div()` is
 * wrong on base, so `tests/test_div.py` (its only test) fails there.
 */
export const SRC_LAYOUT_FILES: Files = {
  'pyproject.toml': '[project]\nname = "pkg"\nversion = "0.1"\n\n[tool.pytest.ini_options]\npythonpath = ["src"]\ntestpaths = ["tests"]\n',
  'src/pkg/__init__.py': '',
  'src/pkg/ops.py': OPS_PY,
  'src/pkg/div.py': 'def div(a, b):\n    return a * b\n',
  'tests/test_ops.py':
    'from pkg.ops import add, mul\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\ndef test_mul():\n    assert mul(3, 4) == 12\n',
  'tests/test_legacy.py': 'from pkg.ops import add\n\n\ndef test_add_legacy():\n    assert add(1, 1) == 2\n',
  'tests/test_div.py': 'from pkg.div import div\n\n\ndef test_div():\n    assert div(8, 2) == 4\n',
};

/** A Python project with a package.json whose test script runs karma over one JS spec (as Sphinx's does). */
export const KARMA_FILES: Files = {
  'package.json': '{\n  "name": "docs-tool",\n  "private": true,\n  "scripts": {\n    "test": "karma start --single-run"\n  }\n}\n',
  'karma.conf.js':
    'module.exports = (config) => config.set({ frameworks: ["jasmine"], files: ["docs_tool/static/*.js", "tests/js/*.spec.js"] });\n',
  'docs_tool/__init__.py': '',
  'docs_tool/static/searchtools.js': 'const Search = { query: (text) => text.trim() };\n',
  'docs_tool/util.py': 'def split_words(text):\n    return text.split()\n',
  'tests/js/searchtools.spec.js': 'describe("Search", () => { it("trims", () => expect(Search.query(" a ")).toBe("a")); });\n',
  'tests/test_util.py':
    'from docs_tool.util import split_words\n\n\ndef test_split_words():\n    assert split_words("a b") == ["a", "b"]\n',
  'tests/test_build.py': 'import docs_tool\n\n\ndef test_import():\n    assert docs_tool is not None\n',
};

/** A shell-tested project: `sh tests/check_add.sh`, a suite no log parser reads. */
export const SHELL_FILES: Files = {
  'calc.sh': 'add() {\n  echo $(($1 + $2))\n}\n',
  'tests/check_add.sh':
    '. ./calc.sh\nif [ "$(add 2 3)" = 5 ]; then\n  echo "add: ok"\nelse\n  echo "add: FAIL (got $(add 2 3))"\n  exit 1\nfi\n',
};
