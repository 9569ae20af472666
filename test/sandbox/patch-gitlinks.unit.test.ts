import { describe, expect, it } from 'vitest';
import { describeDroppedGitlinks, splitGitlinks } from '../../src/sandbox/patch-gitlinks.js';

const SHA = 'a'.repeat(40);
const OTHER = 'b'.repeat(40);
const fix = [
  'diff --git a/src/x.py b/src/x.py',
  'index 1111111..2222222 100644',
  '--- a/src/x.py',
  '+++ b/src/x.py',
  '@@ -1 +1 @@',
  '-a',
  '+b',
  '',
].join('\n');
const section = (path: string, header: string[], body: string[]) =>
  [`diff --git a/${path} b/${path}`, ...header, `--- a/${path}`, `+++ b/${path}`, '@@ -1 +1 @@', ...body, ''].join('\n');
const dirty = section('vendor/lib', [], [`-Subproject commit ${SHA}`, `+Subproject commit ${SHA}-dirty`]);
const moved = section(
  'vendor/lib',
  [`index ${SHA.slice(0, 7)}..${OTHER.slice(0, 7)} 160000`],
  [`-Subproject commit ${SHA}`, `+Subproject commit ${OTHER}`],
);
const added = [
  'diff --git a/ext/new b/ext/new',
  'new file mode 160000',
  `index 0000000..${OTHER.slice(0, 7)}`,
  '--- /dev/null',
  '+++ b/ext/new',
  '@@ -0,0 +1 @@',
  `+Subproject commit ${OTHER}`,
  '',
].join('\n');
const removed = [
  'diff --git a/ext/old b/ext/old',
  'deleted file mode 160000',
  `index ${SHA.slice(0, 7)}..0000000`,
  '--- a/ext/old',
  '+++ /dev/null',
  '@@ -1 +0,0 @@',
  `-Subproject commit ${SHA}`,
  '',
].join('\n');

describe('splitGitlinks', () => {
  it('returns a patch without submodule sections as it is', () => {
    expect(splitGitlinks(fix)).toEqual({ patch: fix, dropped: [] });
    expect(splitGitlinks('')).toEqual({ patch: '', dropped: [] });
  });

  it("leaves out a section whose only change is git's -dirty suffix, keeping the rest byte for byte", () => {
    expect(splitGitlinks(fix + dirty)).toEqual({ patch: fix, dropped: [{ path: 'vendor/lib', kind: 'dirty' }] });
    expect(splitGitlinks(dirty + fix)).toEqual({ patch: fix, dropped: [{ path: 'vendor/lib', kind: 'dirty' }] });
  });

  it('leaves out moved, added and removed gitlinks and names each, in patch order', () => {
    expect(splitGitlinks(moved + fix + added + removed)).toEqual({
      patch: fix,
      dropped: [
        { path: 'vendor/lib', kind: 'moved' },
        { path: 'ext/new', kind: 'added' },
        { path: 'ext/old', kind: 'removed' },
      ],
    });
  });

  it('a patch of submodule sections only leaves nothing to apply', () => {
    expect(splitGitlinks(dirty)).toEqual({ patch: '', dropped: [{ path: 'vendor/lib', kind: 'dirty' }] });
  });

  it('keeps a file whose text mentions a Subproject commit among other lines', () => {
    const text = section('docs/notes.txt', ['index 1111111..2222222 100644'], [`-Subproject commit ${SHA}`, '+something else']);
    expect(splitGitlinks(text)).toEqual({ patch: text, dropped: [] });
    const context = section('docs/notes.txt', [], [` Subproject commit ${SHA}`, '-x', '+y']);
    expect(splitGitlinks(context)).toEqual({ patch: context, dropped: [] });
  });

  it('keeps text before the first section (a commit message) with the rest', () => {
    const preamble = 'Fix add\n\n';
    expect(splitGitlinks(preamble + fix + dirty).patch).toBe(preamble + fix);
  });
});

describe('describeDroppedGitlinks', () => {
  it('says nothing when nothing was left out, and names each submodule otherwise', () => {
    expect(describeDroppedGitlinks([])).toBeUndefined();
    expect(describeDroppedGitlinks([{ path: 'vendor/lib', kind: 'dirty' }])).toMatch(
      /submodule changes left out.*: vendor\/lib \(dirty\)$/,
    );
  });
});
