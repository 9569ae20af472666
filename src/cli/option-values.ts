/**
 * The values the subcommands' help and option defaults show, from the light modules that own them
 * (no zod, trainer, providers or bench runners), so that registering the commands (every start,
 * `--help` included) loads none of the heavy ones.
 */
export { STRATEGY_NAMES } from '../types/strategy-names.js';
export { SANDBOX_PROVIDERS as SANDBOX_PROVIDER_NAMES } from '../sandbox/provider-names.js';
export { SCENARIOS as BENCH_SCENARIOS, BACKEND_KINDS as BENCH_BACKEND_KINDS } from '../loadgen/names.js';
export { TRAIN_DEFAULTS as TRAIN_OPTION_DEFAULTS } from '../train/defaults.js';
export { TINY_MODEL_DIR as tinyModelDir } from '../util/package-root.js';

/** `winnower rerank`'s exit status when some instance has no candidate that could be scored (rerank-summary.ts). */
export const RERANK_EXIT_UNSCORED = 3;

/** `winnower solve`'s and `winnower demo`'s exit status when the job ran but chose nothing: no candidate had a usable patch. */
export const SOLVE_EXIT_NONE_USABLE = 3;
