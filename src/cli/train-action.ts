/** What `winnower train` does once its flags are parsed; loaded only when it runs (train.ts registers it). */
import { Presets, SingleBar } from 'cli-progress';
import { wnwError } from '../errors.js';
import { train } from '../train/train.js';
import type { TrainFlags } from './train.js';

export async function runTrain(flags: TrainFlags): Promise<void> {
  const bar =
    flags.progress && process.stderr.isTTY
      ? new SingleBar({ format: '{stage} [{bar}] {value}/{total}', hideCursor: true }, Presets.shades_classic)
      : undefined;
  let stage = '';
  if (!flags.rollouts?.length && !flags.fromStore)
    throw wnwError('WNW_ERR_INPUT_INVALID', 'give --rollouts, --from-store, or both', { details: { field: 'rollouts' } });
  if (flags.format !== undefined && !flags.rollouts?.length)
    throw wnwError('WNW_ERR_INPUT_INVALID', '--format names the format of --rollouts files; give --rollouts (job store rows need none)', {
      details: { field: 'format' },
    });
  const result = await train({
    rollouts: flags.rollouts ?? [],
    ...(flags.fromStore ? { fromStore: flags.fromStore } : {}),
    sourceFrom: flags.sourceFrom,
    ...(flags.format !== undefined ? { format: flags.format } : {}),
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
    console.log(
      JSON.stringify({
        out: result.outDir,
        seconds: result.seconds,
        epochs: result.epochs,
        calibration: result.calibration,
        train_candidates: result.trainCandidates,
        validation_candidates: result.validationCandidates,
        export_max_diff: result.exportMaxDiff,
        validation: result.tables,
        default_strategy: result.selector.default_strategy,
        default_reason: result.selector.default_reason,
        verdicts: result.verdicts,
      }),
    );
    return;
  }
  console.log(result.table || '(no validation split)');
  console.log(`default strategy: ${result.selector.default_strategy} (${result.selector.default_reason})`);
  console.log(
    `wrote ${result.outDir} in ${result.seconds.toFixed(1)} s (${result.trainCandidates} training candidates, ${result.epochs} epoch(s))`,
  );
}
