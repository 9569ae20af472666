/**
 * The split stage of `winnower train`: the training and validation sides, by source when
 * `holdoutSources` is given, else by instance or by repository (split.ts), and the name the
 * tables and the model card give that split.
 */
import { wnwError } from '../errors.js';
import type { LabelledCandidate } from './dataset.js';
import { TRAIN_DEFAULTS } from './defaults.js';
import { splitByInstance, splitBySource } from './split.js';
import type { TrainOptions } from './train-options.js';

export interface TrainSplit {
  train: LabelledCandidate[];
  validation: LabelledCandidate[];
  /** Validation holds whole sources that training never saw. */
  bySource: boolean;
  /** As the verdicts name it: `held out <sources>`, `held-out repositories <repos>` or `held-out instances`. */
  name: string;
}

export function splitTrainingRows(candidates: LabelledCandidate[], options: TrainOptions, seed: number): TrainSplit {
  const bySource = Boolean(options.holdoutSources?.length);
  const { train, validation } = bySource
    ? splitBySource(candidates, options.holdoutSources!, seed)
    : splitByInstance(candidates, {
        seed,
        validationFraction: options.validationFraction ?? TRAIN_DEFAULTS.validationFraction,
        holdoutRepos: options.holdoutRepos,
      });
  if (train.length === 0) {
    throw wnwError('WNW_ERR_INPUT_INVALID', 'the split left no candidates to train on', {
      details: { field: bySource ? 'holdout_sources' : options.holdoutRepos?.length ? 'holdout_repos' : 'validation_fraction' },
    });
  }
  if (bySource && validation.length === 0) {
    throw wnwError('WNW_ERR_INPUT_INVALID', `no candidate comes from ${options.holdoutSources!.join(', ')}`, {
      details: { field: 'holdout_sources' },
    });
  }
  const name = bySource
    ? `held out ${options.holdoutSources!.join(',')}`
    : options.holdoutRepos?.length
      ? `held-out repositories ${options.holdoutRepos.join(',')}`
      : 'held-out instances';
  return { train, validation, bySource, name };
}
