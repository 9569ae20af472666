import { describe, expect, it } from 'vitest';
import { patchRemovals, removedByPatch } from '../../src/verify/removed-tests.js';

const deleteFile = [
  'diff --git a/tests/test_legacy.py b/tests/test_legacy.py',
  'deleted file mode 100644',
  'index 1111111..0000000',
  '--- a/tests/test_legacy.py',
  '+++ /dev/null',
  '@@ -1,2 +0,0 @@',
  '-def test_add_legacy():',
  '-    assert True',
  '',
].join('\n');
const renameFile = [
  'diff --git a/tests/html_tests/tests.py b/tests/markup_tests/tests.py',
  'similarity index 100%',
  'rename from tests/html_tests/tests.py',
  'rename to tests/markup_tests/tests.py',
  '',
].join('\n');
const renameTest = [
  'diff --git a/sympy/core/tests/test_add.py b/sympy/core/tests/test_add.py',
  '--- a/sympy/core/tests/test_add.py',
  '+++ b/sympy/core/tests/test_add.py',
  '@@ -4,5 +4,5 @@ def test_add_ints():',
  '-def test_add_zero():',
  '+def test_add_identity():',
  '     assert add(0, 7) == 7',
  '',
].join('\n');
// An edit that re-adds the definition (a signature change) removes nothing.
const editTest = [
  'diff --git a/tests/test_ops.py b/tests/test_ops.py',
  '--- a/tests/test_ops.py',
  '+++ b/tests/test_ops.py',
  '@@ -1,3 +1,3 @@',
  '-def test_add():',
  '+def test_add(tmp_path):',
  '     assert add(2, 3) == 5',
  '',
].join('\n');

describe('tests removed by a patch', () => {
  it('reads deleted and renamed files and definitions dropped from a file', () => {
    const removals = patchRemovals([deleteFile, renameFile, renameTest, editTest].join(''));
    expect([...removals.files].sort()).toEqual(['tests/html_tests/tests.py', 'tests/test_legacy.py']);
    expect([...(removals.names.get('sympy/core/tests/test_add.py') ?? [])]).toEqual(['test_add_zero']);
    expect(removals.names.has('tests/test_ops.py')).toBe(false);
  });

  it('maps pytest, Django/unittest and bare SymPy ids to the file the patch removed them from', () => {
    const removals = patchRemovals([deleteFile, renameFile, renameTest, editTest].join(''));
    const missing = [
      'tests/test_legacy.py::test_add_legacy',
      'test_escape (html_tests.tests.EscapeTests.test_escape)',
      'test_escape (html_tests.tests.EscapeTests)',
      'test_add_zero',
      // Missing for another reason: its import broke.
      'tests/test_ops.py::test_add',
      'test_capfirst (utils_tests.tests.TextTests.test_capfirst)',
      'sh tests/check_add.sh',
    ];
    expect(removedByPatch(missing, removals)).toEqual([
      { test: 'test_add_zero', file: 'sympy/core/tests/test_add.py' },
      { test: 'test_escape (html_tests.tests.EscapeTests)', file: 'tests/html_tests/tests.py' },
      { test: 'test_escape (html_tests.tests.EscapeTests.test_escape)', file: 'tests/html_tests/tests.py' },
      { test: 'tests/test_legacy.py::test_add_legacy', file: 'tests/test_legacy.py' },
    ]);
  });

  it('finds a pytest test whose class or parametrized function was dropped', () => {
    const patch = [
      'diff --git a/tests/test_x.py b/tests/test_x.py',
      '--- a/tests/test_x.py',
      '+++ b/tests/test_x.py',
      '@@ -1,4 +1,0 @@',
      '-class TestOld:',
      '-    def test_a(self):',
      '-        pass',
      '-def test_p(n):',
      '',
    ].join('\n');
    expect(
      removedByPatch(
        ['tests/test_x.py::TestOld::test_a', 'tests/test_x.py::test_p[1]', 'tests/test_x.py::test_kept'],
        patchRemovals(patch),
      ),
    ).toEqual([
      { test: 'tests/test_x.py::TestOld::test_a', file: 'tests/test_x.py' },
      { test: 'tests/test_x.py::test_p[1]', file: 'tests/test_x.py' },
    ]);
  });
});
