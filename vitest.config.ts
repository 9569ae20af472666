import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Sandbox and server tests spawn processes; two cores, so keep parallelism modest.
    maxWorkers: 2,
    pool: 'forks',
    // In CI a JSON summary too, from which .ci/run prints the plain "N passed, N failed" line.
    reporters: process.env.CI ? ['default', ['json', { outputFile: '.vitest-results.json' }]] : ['default'],
  },
});
