/**
 * Reproduction tests (issue 20): the new test file taken from a test writer's patch, and how one
 * runs in a real sandbox on the demo repository at its base commit: a test that fails for the
 * issue's reason is `failed` (valid); one that passes, or errors for an unrelated reason (import
 * error, syntax error), is not; one whose path exists is never written over.
 */
import { rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prepareDemoRepo } from '../../src/cli/demo-repo.js';
import { createLocalProvider } from '../../src/sandbox/providers/local/provider.js';
import type { SandboxProvider } from '../../src/sandbox/types.js';
import { extractTestFile, runTestFile } from '../../src/verify/reproduction-test.js';
import { DEMO_DIR, hasBubblewrap } from '../solve/helpers.js';

const newFile = (path: string, lines: string[]) =>
  [
    `diff --git a/${path} b/${path}`,
    'new file mode 100644',
    'index 0000000..1111111',
    '--- /dev/null',
    `+++ b/${path}`,
    `@@ -0,0 +1,${lines.length} @@`,
    ...lines.map((line) => `+${line}`),
    '',
  ].join('\n');

describe('extractTestFile', () => {
  it('takes the one new test file and ignores changes to existing files', () => {
    const edit = [
      'diff --git a/durations.py b/durations.py',
      '--- a/durations.py',
      '+++ b/durations.py',
      '@@ -1 +1 @@',
      '-a',
      '+b',
      '',
    ].join('\n');
    const patch = edit + newFile('tests/test_repro.py', ['import unittest', 'x = 1']);
    expect(extractTestFile(patch)).toEqual({ file: 'tests/test_repro.py', content: 'import unittest\nx = 1\n' });
  });

  it('discards a patch without a new test file, and an empty one', () => {
    expect(extractTestFile(newFile('notes.txt', ['hello']))).toMatchObject({ discard: expect.stringMatching(/no new test file/) });
    expect(extractTestFile('')).toMatchObject({ discard: expect.stringMatching(/changed nothing/) });
  });
});

describe.skipIf(!hasBubblewrap())('runTestFile on the demo repository at its base commit', () => {
  let repo: string;
  let sandboxes: SandboxProvider;

  beforeAll(() => {
    repo = prepareDemoRepo(join(DEMO_DIR, 'repo'));
    sandboxes = createLocalProvider();
  });

  afterAll(async () => {
    await sandboxes?.close();
    if (repo) rmSync(dirname(repo), { recursive: true, force: true });
  });

  const run = async (file: string, content: string) => {
    const sandbox = await sandboxes.create({ repo: { path: repo }, network: false });
    try {
      return await runTestFile(sandbox, { file, content }, { timeoutMs: 60_000 });
    } finally {
      await sandbox.close();
    }
  };

  const test = (body: string[]) =>
    [
      'import unittest',
      'from durations import parse_duration',
      '',
      '',
      'class Repro(unittest.TestCase):',
      '    def test_it(self):',
      ...body.map((line) => `        ${line}`),
      '',
    ].join('\n');

  it('fails for the issue: valid', async () => {
    expect((await run('tests/test_repro_a.py', test(['self.assertEqual(parse_duration("120m"), 7200)']))).outcome).toBe('failed');
  });

  it('passes on base: not a reproduction', async () => {
    expect((await run('tests/test_repro_b.py', test(['self.assertEqual(parse_duration("5s"), 5)']))).outcome).toBe('passed');
  });

  it('an import error is an error, not a failure', async () => {
    const result = await run(
      'tests/test_repro_c.py',
      test(['self.assertEqual(parse_duration("120m"), 7200)']).replace('from durations import', 'from duration import'),
    );
    expect(result.outcome).toBe('error');
    expect(result.reason).toMatch(/unrelated/);
  });

  it('a syntax error is an error, not a failure', async () => {
    const result = await run('tests/test_repro_d.py', test(['self.assertEqual(parse_duration("120m"), 7200']));
    expect(result.outcome).toBe('error');
  });

  it('never writes over a file that exists', async () => {
    const result = await run('tests/test_durations.py', test(['self.assertTrue(False)']));
    expect(result.outcome).toBe('conflict');
  });
});
