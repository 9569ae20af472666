/**
 * Values the subcommands' help and option defaults show, copied here so that registering the
 * commands (every start, `--help` included) loads none of the modules that own them (zod, the
 * trainer, the sandbox providers, the bench scenarios). test/cli/option-values.test.ts keeps each
 * copy equal to its owner's.
 */
import { join } from 'node:path';
import { packageRoot } from '../util/package-root.js';

/** `Strategy.options` (src/types/selection.ts). */
export const STRATEGY_NAMES = ['value', 'consensus', 'hybrid', 'learned', 'robust'] as const;

/** `SANDBOX_PROVIDERS` (src/sandbox/registry.ts). */
export const SANDBOX_PROVIDER_NAMES = ['local', 'orchard', 'docker'] as const;

/** `SCENARIOS` (src/bench/scenarios.ts). */
export const BENCH_SCENARIOS = ['score', 'rerank', 'solve'] as const;

/** `BACKEND_KINDS` (src/bench/run-bench.ts). */
export const BENCH_BACKEND_KINDS = ['vllm', 'sglang'] as const;

/** `TRAIN_DEFAULTS` (src/train/train.ts). */
export const TRAIN_OPTION_DEFAULTS = {
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

/** `TINY_MODEL_DIR()` (src/config.ts). */
export const tinyModelDir = (): string => join(packageRoot(), 'models', 'tiny-value');

/** `EXIT_UNSCORED` (src/cli/rerank-summary.ts). */
export const RERANK_EXIT_UNSCORED = 3;
