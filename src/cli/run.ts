/**
 * `winnower run --tasks <folder>`: best-of-N over a whole Harbor dataset on this machine, one
 * job per task, written in Harbor's job and trial layout; an existing job folder is resumed.
 */
import type { Command } from 'commander';
import { nonNegativeNumber, positiveInt } from './parse-options.js';

export interface RunFlags {
  config?: string;
  tasks: string;
  jobsDir: string;
  jobName?: string;
  n: number;
  policyUrl?: string;
  policyModel?: string;
  policyKey?: string;
  replay?: string[];
  repos?: string;
  /** False with --no-regression. */
  regression?: boolean;
  rewardThreshold?: number;
}

export function registerRunCommand(program: Command): void {
  program
    .command('run')
    .description("best-of-N over a folder of Harbor tasks, writing Harbor's job and trial layout (resumable)")
    .requiredOption('--tasks <folder>', 'a folder of Harbor task folders (each with task.toml)')
    .option('-c, --config <file>', 'YAML or JSON config file (also WINNOWER_CONFIG)')
    .option('--jobs-dir <folder>', 'where the job folder goes', 'jobs')
    .option(
      '--job-name <name>',
      'the job folder; when it exists the run resumes it, skipping the tasks it finished (default: the start time)',
    )
    .option('--n <n>', 'rollouts per task', positiveInt, 4)
    .option('--policy-url <url>', 'OpenAI-compatible policy server (also WINNOWER_POLICY_URL)')
    .option('--policy-model <name>', 'policy model name (also WINNOWER_POLICY_MODEL)')
    .option('--policy-key <key>', 'policy API key (also WINNOWER_POLICY_KEY)')
    .option('--replay <files...>', 'replay recorded trajectories instead of a policy, for every task')
    .option(
      '--repos <folder>',
      "checkouts of the tasks' code, one per task named as its task folder: each replaces its task's environment (for tasks whose Dockerfile builds an image)",
    )
    .option('--no-regression', 'skip the regression check')
    .option('--reward-threshold <reward>', 'the reward at or above which a candidate is resolved (default 1)', nonNegativeNumber)
    .action(async (flags: RunFlags) => (await import('./run-action.js')).runTasks(flags));
}
