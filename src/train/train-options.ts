/**
 * What `winnower train` is given (TrainOptions) and what its stages read from it once the defaults
 * (defaults.ts) are filled in and the combinations it refuses are checked.
 */
import { resolve } from 'node:path';
import { wnwError } from '../errors.js';
import { TRAIN_DEFAULTS } from './defaults.js';
import type { FitSideOptions } from './fit-side.js';

export interface TrainOptions {
  rollouts: string[];
  /** Also (or only, with no rollouts) the verified candidates of past jobs in this server data dir (store-rows.ts). */
  fromStore?: string;
  /** How plain rollout paths name their source, as `rerank --source-from` (default: `file` when they are several files). */
  sourceFrom?: 'record' | 'file';
  /** Read every rollout file as this format instead of detecting it. */
  format?: string;
  labels?: string[];
  tasks?: string[];
  out: string;
  seed?: number;
  validationFraction?: number;
  holdoutRepos?: string[];
  /** Validate on the pools of these sources (run names, or families such as `acr`) instead. */
  holdoutSources?: string[];
  /**
   * The source-held-out check that decides the folder's default strategy: leave-one-source-out
   * over every source family with a mixed held-out pool (default, when no --holdout-sources), or
   * none (the default is then `robust`, unchecked).
   */
  sourceCheck?: 'loso' | 'none';
  /** Learn own-history priors per agent configuration into selector.json (default true). */
  priors?: boolean;
  permissiveOnly?: boolean;
  onInvalid?: 'skip' | 'fail';
  vocabSize?: number;
  bigramBuckets?: number;
  dims?: number;
  hidden?: number;
  maxEpochs?: number;
  learningRate?: number;
  folds?: number;
  budgetTokens?: number;
  /** An untrained model folder scored beside the trained one (null: none). */
  baselineModel?: string | null;
  bootstrap?: number;
  /** The command line, for the model card. */
  command?: string;
  signal?: AbortSignal;
  onProgress?: (stage: string, done: number, total: number) => void;
  onLog?: (line: string) => void;
}

/** The options with their defaults, as the stages use them. */
export interface TrainSettings {
  seed: number;
  /** The model folder, absolute. */
  outDir: string;
  folds: number;
  budgetTokens: number;
  log: (line: string) => void;
  /** How each training side is fitted: the shipped one and every held-out-source fold. */
  fit: FitSideOptions;
}

export function trainSettings(options: TrainOptions): TrainSettings {
  const seed = options.seed ?? TRAIN_DEFAULTS.seed;
  const log = options.onLog ?? (() => {});
  const folds = options.folds ?? TRAIN_DEFAULTS.folds;
  const budgetTokens = options.budgetTokens ?? TRAIN_DEFAULTS.budgetTokens;
  if (folds < 2) throw wnwError('WNW_ERR_INPUT_INVALID', 'folds must be at least 2', { details: { field: 'folds' } });
  if (options.holdoutSources?.length && options.holdoutRepos?.length) {
    throw wnwError('WNW_ERR_INPUT_INVALID', 'give --holdout-sources or --holdout-repos, not both', {
      details: { field: 'holdout_sources' },
    });
  }
  return {
    seed,
    outDir: resolve(options.out),
    folds,
    budgetTokens,
    log,
    fit: {
      seed,
      folds,
      maxEpochs: options.maxEpochs ?? TRAIN_DEFAULTS.maxEpochs,
      budgetTokens,
      vocabSize: options.vocabSize ?? TRAIN_DEFAULTS.vocabSize,
      bigramBuckets: options.bigramBuckets ?? TRAIN_DEFAULTS.bigramBuckets,
      dims: options.dims ?? TRAIN_DEFAULTS.dims,
      hidden: options.hidden ?? TRAIN_DEFAULTS.hidden,
      ...(options.learningRate ? { learningRate: options.learningRate } : {}),
      priors: options.priors ?? true,
      signal: options.signal,
      onProgress: options.onProgress,
      log,
    },
  };
}
