/**
 * `winnower demo` (`npm run demo`): the main job on the embedded defaults. Starts the server with
 * local sandboxes and the bundled ONNX value model, posts /solve for the sample task (four
 * recorded trajectories replayed for real, or a real policy when WINNOWER_POLICY_URL is set),
 * follows the job's events, prints the candidates and the chosen patch, and shuts down.
 */
import type { Command } from 'commander';
import { SOLVE_EXIT_NONE_USABLE } from './option-values.js';
import { positiveInt } from './parse-options.js';

export interface DemoFlags {
  n?: number;
  /** False with --no-given-tests: no test list; the regression check and reproduction tests decide. */
  givenTests?: boolean;
  harness?: string;
  stopRule?: boolean;
  keep?: boolean;
}

export function registerDemoCommand(program: Command): void {
  program
    .command('demo')
    .description('solve the bundled sample task end to end on the embedded defaults')
    .option('--n <n>', 'rollouts (the four recordings are reused round-robin)', positiveInt)
    .option(
      '--stop-rule',
      'stop once a candidate passes its tests (rollouts in waves of 2); no value threshold, as the bundled model is untrained',
    )
    .option('--keep', 'keep the temporary repository and job database')
    .option(
      '--no-given-tests',
      'give no test list: the regression check and 3 reproduction tests written by recorded test writers (examples/demo/test-writers) decide, and the pass matrix is printed',
    )
    .option('--harness <name>', 'run each rollout with a harness CLI (e.g. pi, when installed) instead of the built-in agent')
    .addHelpText(
      'after',
      `\nExit status: 0 a patch was chosen; 1 the job failed; ${SOLVE_EXIT_NONE_USABLE} the job ran but chose nothing: no candidate had a usable patch.`,
    )
    .action(async (flags: DemoFlags) => (await import('./demo-action.js')).runDemo(flags));
}
