/** `winnower train`: labelled rollouts → a model folder (value model, tokenizer, selector, model card). */
import { Command, Option } from 'commander';
import { Presets, SingleBar } from 'cli-progress';
import { wnwError } from '../errors.js';
import { train, TRAIN_DEFAULTS } from '../train/train.js';
import { fraction, positiveInt, positiveNumber } from './parse-options.js';

interface TrainFlags {
  rollouts?: string[];
  fromStore?: string;
  sourceFrom?: 'record' | 'file';
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

const list = (value: string, previous: string[] = []) => [...previous, ...value.split(',').map((item) => item.trim()).filter(Boolean)];

export function registerTrainCommand(program: Command, defaultBaseline: string): void {
  program
    .command('train')
    .description('train a value model and a learned selector from labelled rollouts (CPU, minutes)')
    .option('--from-store <data_dir>', "also (or only) train on the verified candidates of past /solve and /rerank jobs in a server's data dir (resolved or not)")
    .option('--rollouts <files...>', 'candidate files (SWE-bench predictions or trajectories, as for rerank; NAME=PATH names a run)')
    .addOption(new Option('--source-from <how>', 'name each candidate source after the record or the file (default: file when the rollouts are several files), as rerank does').choices(['record', 'file']))
    .option('--labels <files...>', 'labels: SWE-bench results.json (NAME=PATH) or JSONL of {instance_id, source, resolved}')
    .option('--tasks <files...>', 'SWE-bench task records (the issue text)')
    .requiredOption('--out <folder>', 'model folder to write (model.onnx, tokenizer.json, config.json, selector.json, README.md)')
    .option('--seed <n>', 'seed of the split, the initialisation and the shuffles', positiveInt, TRAIN_DEFAULTS.seed)
    .option('--validation <fraction>', 'share of instances held out for validation', fraction, TRAIN_DEFAULTS.validationFraction)
    .option('--holdout-repos <repos>', 'validate on these repositories instead (comma-separated owner/name)', list)
    .option('--holdout-sources <sources>', 'validate on the pools of these sources instead, training on none of them (comma-separated run names or families, e.g. acr)', list)
    .option('--no-priors', 'do not record own-history priors per agent configuration in selector.json (for a folder shipped to other agents)')
    .option('--no-source-check', 'skip the leave-one-source-out check (then the folder\'s default strategy is robust)')
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
    .action(async (flags: TrainFlags) => {
      const bar = flags.progress && process.stderr.isTTY ? new SingleBar({ format: '{stage} [{bar}] {value}/{total}', hideCursor: true }, Presets.shades_classic) : undefined;
      let stage = '';
      if (!flags.rollouts?.length && !flags.fromStore) throw wnwError('WNW_ERR_INPUT_INVALID', 'give --rollouts, --from-store, or both', { details: { field: 'rollouts' } });
      const result = await train({
        rollouts: flags.rollouts ?? [],
        ...(flags.fromStore ? { fromStore: flags.fromStore } : {}),
        sourceFrom: flags.sourceFrom,
        labels: flags.labels,
        tasks: flags.tasks,
        out: flags.out,
        seed: flags.seed,
        validationFraction: flags.validation,
        holdoutRepos: flags.holdoutRepos,
        holdoutSources: flags.holdoutSources,
        sourceCheck: flags.sourceCheck ? 'loso' : 'none',
        priors: flags.priors,
        permissiveOnly: flags.permissiveOnly,
        onInvalid: flags.skipInvalid ? 'skip' : 'fail',
        vocabSize: flags.vocab,
        bigramBuckets: flags.buckets,
        dims: flags.dims,
        hidden: flags.hidden,
        maxEpochs: flags.epochs,
        learningRate: flags.lr,
        folds: flags.folds,
        budgetTokens: flags.budget,
        baselineModel: flags.baselineModel ?? null,
        bootstrap: flags.bootstrap,
        command: `winnower ${process.argv.slice(2).join(' ')}`,
        onLog: (line) => {
          if (!flags.json) console.error(`train: ${line}`);
        },
        onProgress: (name, done, total) => {
          if (!bar) return;
          if (name !== stage) {
            if (stage) bar.stop();
            stage = name;
            bar.start(total, done, { stage: name });
          } else bar.update(done);
        },
      });
      bar?.stop();
      if (flags.json) {
        console.log(JSON.stringify({ out: result.outDir, seconds: result.seconds, epochs: result.epochs, calibration: result.calibration, train_candidates: result.trainCandidates, validation_candidates: result.validationCandidates, export_max_diff: result.exportMaxDiff, validation: result.tables, default_strategy: result.selector.default_strategy, default_reason: result.selector.default_reason, verdicts: result.verdicts }));
        return;
      }
      console.log(result.table || '(no validation split)');
      console.log(`default strategy: ${result.selector.default_strategy} (${result.selector.default_reason})`);
      console.log(`wrote ${result.outDir} in ${result.seconds.toFixed(1)} s (${result.trainCandidates} training candidates, ${result.epochs} epoch(s))`);
    });
}
