import { availableParallelism } from 'node:os';
import { configDefaults, defineConfig } from 'vitest/config';

/**
 * Two lanes over one pool of workers, chosen by file name:
 * - `fast` (`*.unit.test.ts`): in-process tests (no sandbox, CLI child process or browser) that take
 *   well under a second or two. They share worker processes (`isolate: false`), since a fresh fork
 *   and import per file costs more than their tests, so they must not depend on module state another
 *   file leaves behind. `npm run test:fast` runs this lane alone.
 * - `isolated` (every other `*.test.ts`, so a new test by default): sandbox, CLI, server and browser
 *   tests, each file in its own worker.
 */
const FAST = ['test/**/*.unit.test.ts'];

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Sandbox and server tests spawn processes and keep a core busy each: one worker a core, two at
    // least (the 2-core machines), four at most (their deadlines were set at two workers on two cores).
    // WINNOWER_TEST_WORKERS overrides it (vitest's --maxWorkers does not reach the projects).
    maxWorkers: Number(process.env.WINNOWER_TEST_WORKERS) || Math.min(4, Math.max(2, availableParallelism())),
    pool: 'forks',
    // Folders made with test/support/temp-dir.ts go after each file.
    setupFiles: ['test/support/temp-dir-cleanup.ts'],
    // In CI a JSON summary too, from which .ci/run prints the plain "N passed, N failed" line.
    reporters: process.env.CI ? ['default', ['json', { outputFile: '.vitest-results.json' }]] : ['default'],
    projects: [
      { extends: true, test: { name: 'fast', include: FAST, isolate: false } },
      {
        extends: true,
        // CLI tests run the compiled program: dist/ is rebuilt first when a source is newer.
        test: {
          name: 'isolated',
          include: ['test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, ...FAST],
          globalSetup: ['test/support/build-dist.ts'],
        },
      },
    ],
  },
});
