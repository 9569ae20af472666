import { describe, expect, it } from 'vitest';
import { BACKEND_KINDS } from '../../src/bench/run-bench.js';
import { SCENARIOS } from '../../src/bench/scenarios.js';
import { EXIT_UNSCORED } from '../../src/cli/rerank-summary.js';
import { TINY_MODEL_DIR } from '../../src/config.js';
import { SANDBOX_PROVIDERS } from '../../src/sandbox/registry.js';
import { TRAIN_DEFAULTS } from '../../src/train/train.js';
import { Strategy } from '../../src/types/selection.js';
import {
  BENCH_BACKEND_KINDS,
  BENCH_SCENARIOS,
  RERANK_EXIT_UNSCORED,
  SANDBOX_PROVIDER_NAMES,
  STRATEGY_NAMES,
  TRAIN_OPTION_DEFAULTS,
  tinyModelDir,
} from '../../src/cli/option-values.js';

// The CLI registers its subcommands from copies of these values (src/cli/option-values.ts) so a
// start loads none of their owners; a copy that drifts would make --help and the defaults lie.
describe('the values the CLI help shows', () => {
  it('equal the ones their owners define', () => {
    expect(STRATEGY_NAMES).toEqual(Strategy.options);
    expect(SANDBOX_PROVIDER_NAMES).toEqual(SANDBOX_PROVIDERS);
    expect(BENCH_SCENARIOS).toEqual(SCENARIOS);
    expect(BENCH_BACKEND_KINDS).toEqual(BACKEND_KINDS);
    expect(TRAIN_OPTION_DEFAULTS).toEqual(TRAIN_DEFAULTS);
    expect(tinyModelDir()).toBe(TINY_MODEL_DIR());
    expect(RERANK_EXIT_UNSCORED).toBe(EXIT_UNSCORED);
  });
});
