/**
 * Defaults of every tunable, shared by the CLI and the API (a module of its own, so that the CLI's
 * start reads them without loading the trainer). 16,384 bigram buckets keep the shipped
 * model near 3 MB; 65,536 (6.2 MB) validated no better on the permissive rows.
 */
export const TRAIN_DEFAULTS = {
  seed: 1,
  validationFraction: 0.2,
  vocabSize: 16_000,
  bigramBuckets: 16_384,
  dims: 16,
  hidden: 16,
  maxEpochs: 8,
  learningRate: 0.02,
  folds: 4,
  budgetTokens: 8192,
  bootstrap: 1000,
} as const;
