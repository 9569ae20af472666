/**
 * Issue 33's defects D2 and D7 end to end through `winnower rerank --repos --verify` on the local
 * provider, over a Django-shaped repository of our own that has what real ones have: a submodule
 * (a gitlink with no .gitmodules, as a bare clone of many projects checks it out: an empty folder)
 * and a PASS_TO_PASS test its suite skips.
 * - D2: a correct candidate whose `git diff` carries the dirty-submodule section
 *   (`+Subproject commit <sha>-dirty`) applies on the overlay workspace, is resolved and chosen,
 *   and says which section was left out.
 * - D7: the skipped PASS_TO_PASS test counts as maintained, as the current harness counts it.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { commitRepo, git, stagedDiff } from '../support/git-fixture.js';
// Django's runner, printing unittest's verbose lines: the built-in recipe for django/django runs it.
import { RUNTESTS } from './django-shaped-repo.js';

const jsonl = (rows: unknown[]) => rows.map((row) => JSON.stringify(row)).join('\n') + '\n';
const readJsonl = (file: string) =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line));

const TEXT = `def slugify(value):
    return value.strip().lower().replace(' ', '_')
`;

const TESTS = `import unittest

from django.utils.text import slugify


class TestUtilsText(unittest.TestCase):
    def test_strip(self):
        self.assertEqual(slugify(' a '), 'a')

    @unittest.skip('needs a database')
    def test_db_slug(self):
        self.assertEqual(slugify('x'), 'x')
`;

const F2P = 'test_slugify (utils_tests.test_text.TestUtilsText)';
const P2P = ['test_strip (utils_tests.test_text.TestUtilsText)', 'test_db_slug (utils_tests.test_text.TestUtilsText)'];
// A commit id the gitlink points at; no repository needs to hold it (the folder stays empty).
const SUBMODULE_SHA = '1234567890abcdef1234567890abcdef12345678';

describe('winnower rerank --repos --verify on a repository with a submodule and a skipped test', () => {
  let root: string;
  let files: { candidates: string; tasks: string; labels: string; repos: string };
  let patches: { correct: string; wrong: string };

  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'wnw-rerank-defects-'));
    const work = join(root, 'work');
    mkdirSync(work);
    commitRepo(
      work,
      {
        'django/__init__.py': 'VERSION = (4, 2)\n',
        'django/utils/__init__.py': '',
        'django/utils/text.py': TEXT,
        'tests/runtests.py': RUNTESTS,
        'tests/utils_tests/__init__.py': '',
        'tests/utils_tests/test_text.py': TESTS,
      },
      'base',
      ['tests/runtests.py'],
    );
    git(work, 'update-index', '--add', '--cacheinfo', `160000,${SUBMODULE_SHA},vendor/lib`);
    git(work, 'commit', '-q', '-m', 'vendor/lib as a submodule');
    const baseCommit = git(work, 'rev-parse', 'HEAD').trim();
    const repos = join(root, 'repos');
    mkdirSync(repos);
    git(root, 'clone', '-q', '--bare', work, join(repos, 'django__django.git'));

    const diff = (name: string, edits: Record<string, string>) => stagedDiff(join(repos, 'django__django.git'), join(root, name), edits);
    const fixed = diff('fixed', { 'django/utils/text.py': TEXT.replace("replace(' ', '_')", "replace(' ', '-')") });
    // What an agent's `git diff` prints when the submodule's checkout is dirty.
    const dirty = [
      'diff --git a/vendor/lib b/vendor/lib',
      '--- a/vendor/lib',
      '+++ b/vendor/lib',
      '@@ -1 +1 @@',
      `-Subproject commit ${SUBMODULE_SHA}`,
      `+Subproject commit ${SUBMODULE_SHA}-dirty`,
      '',
    ].join('\n');
    patches = {
      correct: `${fixed}${dirty}`,
      wrong: diff('wrong', { 'django/utils/text.py': TEXT.replace("replace(' ', '_')", "replace(' ', '')") }),
    };
    const testPatch = diff('tests', {
      'tests/utils_tests/test_text.py': `${TESTS}\n    def test_slugify(self):\n        self.assertEqual(slugify(' Hello World '), 'hello-world')\n`,
    });

    files = {
      candidates: join(root, 'candidates.jsonl'),
      tasks: join(root, 'tasks.jsonl'),
      labels: join(root, 'labels.jsonl'),
      repos,
    };
    writeFileSync(
      files.tasks,
      jsonl([
        {
          instance_id: 'django__django-9',
          repo: 'django/django',
          base_commit: baseCommit,
          version: '4.2',
          problem_statement: 'slugify() should join words with hyphens, not underscores.',
          test_patch: testPatch,
          FAIL_TO_PASS: [F2P],
          PASS_TO_PASS: P2P,
        },
      ]),
    );
    // The wrong candidate comes first, so choosing the correct one is the verdict's doing.
    writeFileSync(
      files.candidates,
      jsonl([
        { instance_id: 'django__django-9', model_name_or_path: 'agent-a', model_patch: patches.wrong },
        { instance_id: 'django__django-9', model_name_or_path: 'agent-b', model_patch: patches.correct },
      ]),
    );
    writeFileSync(
      files.labels,
      jsonl([
        { instance_id: 'django__django-9', source: 'agent-a', resolved: false },
        { instance_id: 'django__django-9', source: 'agent-b', resolved: true },
      ]),
    );
  });
  afterAll(() => {
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it('applies a patch with a dirty-submodule section (D2) and counts the skipped PASS_TO_PASS test as maintained (D7)', async () => {
    const out = join(root, 'out', 'predictions.jsonl');
    const { code, stdout, stderr } = await runCli(
      [
        'rerank',
        '--candidates',
        files.candidates,
        '--tasks',
        files.tasks,
        '--labels',
        files.labels,
        '--out',
        out,
        '--no-progress',
        '--verify',
        '--repos',
        files.repos,
      ],
      { timeoutMs: 300_000 },
    );
    expect(code, stderr).toBe(0);
    expect(readJsonl(out)[0].model_patch).toBe(patches.correct);
    const scores = readJsonl(join(root, 'out', 'predictions.scores.jsonl'));
    const verdict = (source: string) => scores.find((line) => line.source === source)?.verify;
    expect(verdict('agent-b')).toMatchObject({
      status: 'resolved',
      applied: true,
      parser: 'django',
      fail_to_pass: { passed: 1, failed: 0, missing: 0 },
      // The skipped one is maintained: both PASS_TO_PASS tests count as passed.
      pass_to_pass: { passed: 2, failed: 0, missing: 0 },
      submodules_left_out: [{ path: 'vendor/lib', kind: 'dirty' }],
    });
    expect(verdict('agent-b').apply_note).toMatch(/vendor\/lib/);
    expect(verdict('agent-a')).toMatchObject({ status: 'unresolved', fail_to_pass: { failed: 1 }, pass_to_pass: { passed: 2 } });
    expect(stdout).toContain('verification agrees with the labels on 2/2 graded candidates (100.0%)');
  });
});
