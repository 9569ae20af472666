/**
 * `withObserver(scorer, onCall)`: reports every `score()` call when it ends — how many inputs,
 * how many tokens, how many came from the cache, how long it took and whether it failed — to a
 * callback (metrics). The scores pass through untouched. buildScorer (registry.ts) puts one under the batcher
 * (each call is one batch sent to the backend) and one over the cache (each call is a caller's).
 */
import { estimateTokens } from './with-batching.js';
import type { ScoreCallOptions, ScoreInput, ScoreOutput, Scorer } from './types.js';

export interface ScoreCallEvent {
  backend: string;
  model: string;
  inputs: number;
  /** Token ids counted exactly, text estimated as the batcher does. */
  tokens: number;
  /** Outputs answered from the cache of finished scores. */
  cached: number;
  durationMs: number;
  /** Set when the call failed (or was aborted). */
  error?: unknown;
}

export type ScoreCallListener = (event: ScoreCallEvent) => void;

/** Where buildScorer (registry.ts) reports to: each batch the backend receives, and each caller's call. */
export interface ScorerObserver {
  onBatch?: ScoreCallListener;
  onCall?: ScoreCallListener;
}

export function withObserver(scorer: Scorer, onCall: ScoreCallListener): Scorer {
  return {
    backend: scorer.backend,
    model: scorer.model,
    maxInputTokens: scorer.maxInputTokens,
    ...(scorer.tokenizer ? { tokenizer: scorer.tokenizer } : {}),
    async score(inputs: ScoreInput[], options?: ScoreCallOptions): Promise<ScoreOutput[]> {
      const started = performance.now();
      const base = {
        backend: scorer.backend,
        model: scorer.model,
        inputs: inputs.length,
        tokens: inputs.reduce((sum, input) => sum + estimateTokens(input), 0),
      };
      try {
        const outputs = await scorer.score(inputs, options);
        onCall({ ...base, cached: outputs.filter((output) => output.cached).length, durationMs: performance.now() - started });
        return outputs;
      } catch (error) {
        onCall({ ...base, cached: 0, durationMs: performance.now() - started, error });
        throw error;
      }
    },
    close: () => scorer.close(),
  };
}
