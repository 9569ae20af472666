/** `winnower train`: labelled rollouts → a model folder (value model, tokenizer, selector, model card). */
import { type Command, Option } from 'commander';
import { fraction, positiveInt, positiveNumber } from './parse-options.js';
import { TRAIN_OPTION_DEFAULTS as TRAIN_DEFAULTS } from './option-values.js';

export interface TrainFlags {
  rollouts?: string[];
  fromStore?: string;
  sourceFrom?: 'record' | 'file';
  format?: string;
  labels?: string[];
  tasks?: string[];
  out: string;
  seed: number;
  validation: number;
  holdoutRepos?: string[];
  holdoutSources?: string[];
  sourceCheck: boolean;
  priors: boolean;
  permissiveOnly?: boolean;
  skipInvalid?: boolean;
  vocab: number;
  buckets: number;
  dims: number;
  hidden: number;
  epochs: number;
  lr: number;
  folds: number;
  budget: number;
  baselineModel?: string;
  bootstrap: number;
  json?: boolean;
  progress: boolean;
}

const list = (value: string, previous: string[] = []) => [
  ...previous,
  ...value
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean),
];

export function registerTrainCommand(program: Command, defaultBaseline: string): void {
  program
    .command('train')
    .description('train a value model and a learned selector from labelled rollouts (CPU, minutes)')
    .option(
      '--from-store <data_dir>',
      "also (or only) train on the verified candidates of past /solve and /rerank jobs in a server's data dir (resolved or not)",
    )
    .option('--rollouts <files...>', 'candidate files (SWE-bench predictions or trajectories, as for rerank; NAME=PATH names a run)')
    .addOption(
      new Option(
        '--source-from <how>',
        'name each candidate source after the record or the file (default: file when the rollouts are several files), as rerank does',
      ).choices(['record', 'file']),
    )
    .option('--format <name>', 'read every --rollouts file as this format (atif, openai-chat, …) instead of detecting it, as rerank does')
    .option('--labels <files...>', 'labels: SWE-bench results.json (NAME=PATH) or JSONL of {instance_id, source, resolved}')
    .option('--tasks <files...>', 'SWE-bench task records (the issue text)')
    .requiredOption('--out <folder>', 'model folder to write (model.onnx, tokenizer.json, config.json, selector.json, README.md)')
    .option('--seed <n>', 'seed of the split, the initialisation and the shuffles', positiveInt, TRAIN_DEFAULTS.seed)
    .option('--validation <fraction>', 'share of instances held out for validation', fraction, TRAIN_DEFAULTS.validationFraction)
    .option('--holdout-repos <repos>', 'validate on these repositories instead (comma-separated owner/name)', list)
    .option(
      '--holdout-sources <sources>',
      'validate on the pools of these sources instead, training on none of them (comma-separated run names or families, e.g. acr)',
      list,
    )
    .option(
      '--no-priors',
      'do not record own-history priors per agent configuration in selector.json (for a folder shipped to other agents)',
    )
    .option('--no-source-check', "skip the leave-one-source-out check (then the folder's default strategy is robust)")
    .option('--permissive-only', 'train only on rows whose "permissive" field is true (a model you may ship)')
    .option('--skip-invalid', 'skip malformed input records instead of stopping')
    .option('--vocab <n>', 'tokenizer vocabulary size', positiveInt, TRAIN_DEFAULTS.vocabSize)
    .option('--buckets <n>', 'hashed bigram buckets', positiveInt, TRAIN_DEFAULTS.bigramBuckets)
    .option('--dims <n>', 'embedding dimensions', positiveInt, TRAIN_DEFAULTS.dims)
    .option('--hidden <n>', 'hidden units', positiveInt, TRAIN_DEFAULTS.hidden)
    .option('--epochs <n>', 'most epochs (the best count is chosen by cross-fitting)', positiveInt, TRAIN_DEFAULTS.maxEpochs)
    .option('--lr <rate>', 'Adam learning rate', positiveNumber, TRAIN_DEFAULTS.learningRate)
    .option('--folds <n>', 'cross-fitting folds', positiveInt, TRAIN_DEFAULTS.folds)
    .option('--budget <tokens>', 'token budget per candidate', positiveInt, TRAIN_DEFAULTS.budgetTokens)
    .option('--baseline-model <folder>', 'untrained model scored beside the trained one', defaultBaseline)
    .option('--bootstrap <n>', 'bootstrap resamples for the intervals', positiveInt, TRAIN_DEFAULTS.bootstrap)
    .option('--json', 'print the result as one JSON object')
    .option('--no-progress', 'no progress bar')
    .action(async (flags: TrainFlags) => (await import('./train-action.js')).runTrain(flags));
}
