/**
 * How the tests start the winnower CLI: `node bin/winnower.js` on the compiled dist/ (as a user
 * runs it, and without tsx compiling src/ afresh in every child), built once per test run by
 * test/support/build-dist.ts. When that build could not run (a tree that does not compile yet),
 * the global setup says so and the CLI runs through tsx instead.
 */
import { join } from 'node:path';
import { REPO_ROOT } from './shared-data.js';

export const CLI_VIA_TSX = process.env.WINNOWER_TEST_CLI === 'tsx';

/** argv (after `node`) that runs `winnower <args...>`. */
export function cliArgv(args: string[]): string[] {
  // tsx's loader by its resolved URL: a bare `tsx` resolves from the child's cwd, which tests set outside the repository.
  return CLI_VIA_TSX
    ? ['--import', import.meta.resolve('tsx'), join(REPO_ROOT, 'src/cli/main.ts'), ...args]
    : [join(REPO_ROOT, 'bin/winnower.js'), ...args];
}
