/** The pairwise judge's flags, declared alike on `rerank` and `solve` (docs/selection.md#judge). */
import type { Command } from 'commander';
import { positiveInt } from './parse-options.js';

export interface JudgeFlags {
  judgeUrl?: string;
  judgeModel?: string;
  judgeK?: number;
  judgeTimeout?: number;
}

export function addJudgeOptions(command: Command): Command {
  return command
    .option(
      '--judge-url <base>',
      'pairwise judge: base URL of an OpenAI-compatible chat server with logprobs, API prefix included (http://host:30000/v1); with --judge-model. Breaks hybrid ties, or ranks with --strategy judge (the default with a judge); key: WINNOWER_JUDGE_KEY',
    )
    .option('--judge-model <name>', "the judge server's model (with --judge-url)")
    .option('--judge-k <n>', 'judge opponents per candidate: the k after it in the current order, wrapping (default 2)', positiveInt)
    .option('--judge-timeout <seconds>', 'deadline of one judge call, retries included (default 60)', positiveInt);
}
