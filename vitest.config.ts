import { configDefaults, defineConfig } from 'vitest/config';
import { IN_PROCESS_FILES } from './test/in-process-files.js';

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Sandbox and server tests spawn processes; two cores, so keep parallelism modest.
    maxWorkers: 2,
    pool: 'forks',
    // In CI a JSON summary too, from which .ci/run prints the plain "N passed, N failed" line.
    reporters: process.env.CI ? ['default', ['json', { outputFile: '.vitest-results.json' }]] : ['default'],
    // Two projects over the one pool of workers: the short in-process files share worker processes
    // (no fresh fork and imports per file, which cost more than their tests); every other file,
    // sandbox, CLI and browser tests included, keeps its own.
    projects: [
      { extends: true, test: { name: 'in-process', include: IN_PROCESS_FILES, isolate: false } },
      {
        extends: true,
        test: { name: 'isolated', include: ['test/**/*.test.ts'], exclude: [...configDefaults.exclude, ...IN_PROCESS_FILES] },
      },
    ],
  },
});
