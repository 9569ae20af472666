/**
 * A ValueModel around a test's own scorer, with the identity loadValueModel gives a model served
 * elsewhere (no folder, no hashes) and no selector unless the test gives one.
 */
import type { ValueModel } from '../../src/scoring/value-model.js';
import type { Scorer } from '../../src/scoring/types.js';

export function fakeValueModel(scorer: Scorer, extra: Partial<Omit<ValueModel, 'scorer' | 'identity'>> = {}): ValueModel {
  return {
    scorer,
    ...extra,
    identity: {
      model: { name: scorer.model, path: null, hash: null },
      selector: { path: null, hash: null, default_strategy: extra.selector ? (extra.selector.default_strategy ?? 'learned') : null },
      scorer: { backend: scorer.backend, urls: [] },
    },
  };
}
