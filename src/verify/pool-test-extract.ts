/**
 * Tests from the pool (docs/checks.md#tests-from-the-pool): the Python test files a candidate's
 * patch adds or changes, as the sections of its patch that touch them. Applied alone on the base
 * commit, those sections give the writer's version of each file (the file after its patch)
 * without the rest of its fix. Deleted files are not tests to run; files under a test folder that
 * hold no tests (settings, `conftest.py`, `runtests.py`) are not test files here.
 */
import { isTestPath } from '../select/test-path.js';
import { patchedFiles } from './test-command.js';

/** Names the runners collect as test modules (the regression check's Python test files, test-suite.ts). */
const PYTHON_TEST_FILE = /(^|\/)(test_[^/]*\.py|[^/]*_test\.py|tests\.py)$/;

export interface PoolTestSource {
  path: string;
  change: 'added' | 'changed';
}

export interface PoolTestSections {
  files: PoolTestSource[];
  /** The patch's sections for those files alone, in patch order. */
  patch: string;
}

/** Whether `path` is a test module the Python runners collect. */
export function isPoolTestFile(path: string): boolean {
  return isTestPath(path) && PYTHON_TEST_FILE.test(path) && !path.startsWith('/') && !path.split('/').includes('..');
}

/** The test files `patch` adds or changes, and its sections for them. */
export function poolTestSections(patch: string): PoolTestSections {
  const files: PoolTestSource[] = [];
  const sections: string[] = [];
  for (const section of patch.split(/^(?=diff --git )/m)) {
    if (!section.startsWith('diff --git ')) continue;
    const [path] = patchedFiles(section);
    if (!path || !isPoolTestFile(path)) continue;
    // A deleted file, a binary or a mode-only change carries no test to run.
    if (/^deleted file mode /m.test(section) || /^(GIT binary patch|Binary files )/m.test(section) || !/^@@ /m.test(section)) continue;
    files.push({ path, change: /^new file mode /m.test(section) ? 'added' : 'changed' });
    sections.push(section.endsWith('\n') ? section : `${section}\n`);
  }
  return { files, patch: sections.join('') };
}
