import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { patchShape } from '../../src/select/patch-shape.js';
import { describeRealData, sharedData } from '../support/shared-data.js';
import { BROKEN, FIX_A, FIX_A_NOISY, README_EDIT } from './fixtures.js';

const readRows = (path: string | URL): Record<string, unknown>[] =>
  readFileSync(path, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>);

describe('patchShape', () => {
  it('reads a git diff: files, paths without prefixes, added and removed lines', () => {
    const shape = patchShape(FIX_A + README_EDIT);
    expect(shape.kind).toBe('ok');
    if (shape.kind !== 'ok') return;
    expect(shape.files.map((file) => [file.oldPath, file.newPath])).toEqual([
      ['src/calc.py', 'src/calc.py'],
      ['README.md', 'README.md'],
    ]);
    expect([shape.added, shape.removed]).toEqual([2, 2]);
  });

  it('reads plain diff -u output with timestamps and CRLF', () => {
    const shape = patchShape(FIX_A_NOISY);
    expect(shape.kind).toBe('ok');
    if (shape.kind === 'ok') expect(shape.files[0]?.newPath).toBe('src/calc.py');
  });

  it('calls blank and whitespace-only patches empty', () => {
    expect(patchShape('')).toEqual({ kind: 'empty', why: 'patch empty' });
    expect(patchShape('  \n\n\t')).toMatchObject({ kind: 'empty' });
  });

  it('calls a diff that changes no line empty', () => {
    const contextOnly = ['--- a/x', '+++ b/x', '@@ -1,2 +1,2 @@', ' a', ' b', ''].join('\n');
    expect(patchShape(contextOnly)).toEqual({ kind: 'empty', why: 'patch changes no line' });
  });

  it('rejects prose, a hunk short of its header, a bad hunk header and a hunk without file header', () => {
    expect(patchShape('I fixed the bug by editing calc.py')).toMatchObject({ kind: 'unparseable', why: 'no file header or hunk found' });
    const short = patchShape(BROKEN);
    expect(short).toMatchObject({ kind: 'unparseable', line: 6 });
    if (short.kind === 'unparseable') expect(short.why).toMatch(/patch ends inside a hunk/);
    expect(patchShape('--- a/x\n+++ b/x\n@@ -1 +1 @@@\n-a\n+b\n').kind).toBe('ok');
    expect(patchShape('--- a/x\n+++ b/x\n@@ one @@\n-a\n+b\n')).toMatchObject({ kind: 'unparseable', line: 3 });
    expect(patchShape('@@ -1 +1 @@\n-a\n+b\n')).toMatchObject({ kind: 'unparseable', line: 1 });
    expect(patchShape('--- a/x\n+++ b/x\n')).toMatchObject({ kind: 'unparseable', why: 'file x has a header but no hunks' });
  });

  it('rejects a hunk whose body has more changed lines than its header counts', () => {
    const over = ['--- a/x', '+++ b/x', '@@ -1,1 +1,1 @@', '-a', '-b', '+c', ''].join('\n');
    expect(patchShape(over)).toMatchObject({ kind: 'unparseable', line: 5 });
  });

  it('tolerates a blank line for an empty context line, "\\ No newline" and text around files', () => {
    const patch = [
      'Fix the sign.',
      '',
      '--- a/x',
      '+++ b/x',
      '@@ -1,3 +1,3 @@',
      ' a',
      '',
      '-b',
      '\\ No newline at end of file',
      '+c',
      '\\ No newline at end of file',
      '-- ',
      '2.43.0',
      '',
    ].join('\n');
    expect(patchShape(patch)).toMatchObject({ kind: 'ok', added: 1, removed: 1 });
  });

  it('accepts git header-only sections: rename, new empty file, mode change, binary', () => {
    const rename = ['diff --git a/old.py b/new.py', 'similarity index 100%', 'rename from old.py', 'rename to new.py', ''].join('\n');
    const shape = patchShape(rename);
    expect(shape.kind).toBe('ok');
    if (shape.kind === 'ok') expect([shape.files[0]?.oldPath, shape.files[0]?.newPath]).toEqual(['old.py', 'new.py']);
    expect(patchShape('diff --git a/empty.txt b/empty.txt\nnew file mode 100644\nindex 0000000..e69de29\n').kind).toBe('ok');
    expect(patchShape('diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755\n').kind).toBe('ok');
    expect(patchShape('diff --git a/logo.png b/logo.png\nindex 1..2 100644\nBinary files a/logo.png and b/logo.png differ\n').kind).toBe(
      'ok',
    );
    expect(patchShape('diff --git a/x b/x\nindex 1..2 100644\n').kind).toBe('unparseable');
  });

  it('parses every patch of the importer fixtures (13 predictions, 12 test patches)', () => {
    const predictions = readRows(new URL('../fixtures/importers/swebench/predictions.jsonl', import.meta.url)).map(
      (row) => patchShape(String(row.model_patch)).kind,
    );
    const tests = readRows(new URL('../fixtures/importers/swebench/tasks.jsonl', import.meta.url)).map(
      (row) => patchShape(String(row.test_patch)).kind,
    );
    expect(predictions).toHaveLength(13);
    expect(new Set(predictions)).toEqual(new Set(['ok']));
    expect(tests).toHaveLength(12);
    expect(new Set(tests)).toEqual(new Set(['ok']));
  });
});

describeRealData('patchShape on the Devstral sample', 'devstral-verified', () => {
  it('parses every real patch (440 predictions, 377 test patches)', () => {
    const predictions = readRows(sharedData('devstral-verified', 'candidates.jsonl')).map(
      (row) => patchShape(String(row.model_patch)).kind,
    );
    const tests = readRows(sharedData('devstral-verified', 'tasks.jsonl')).map((row) => patchShape(String(row.test_patch)).kind);
    expect(predictions).toHaveLength(440);
    expect(new Set(predictions)).toEqual(new Set(['ok']));
    expect(tests).toHaveLength(377);
    expect(new Set(tests)).toEqual(new Set(['ok']));
  });
});
