/**
 * What a scorer wrapper (batcher, cache, observer, attached files) passes on unchanged from the
 * scorer it wraps: every field but `score()` and `close()`, optional ones only when set. One copy,
 * so a field added to `Scorer` reaches callers through every wrapper.
 */
import type { Scorer } from './types.js';

export function scorerFields(scorer: Scorer): Omit<Scorer, 'score' | 'close'> {
  return {
    backend: scorer.backend,
    model: scorer.model,
    ...(scorer.tokenizer ? { tokenizer: scorer.tokenizer } : {}),
    maxInputTokens: scorer.maxInputTokens,
    ...(scorer.selector ? { selector: scorer.selector } : {}),
    ...(scorer.chatTemplate === undefined ? {} : { chatTemplate: scorer.chatTemplate }),
    ...(scorer.template === undefined ? {} : { template: scorer.template }),
    ...(scorer.identity ? { identity: scorer.identity } : {}),
  };
}
