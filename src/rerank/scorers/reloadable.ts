/**
 * A scorer whose model can be replaced while the server runs (`winnower serve` reloads on SIGHUP):
 * every field is read from the current scorer at the moment it is asked for, so the next request
 * after a reload scores with the new model and ranks with its selector (and its default strategy).
 * The old scorer is closed once the calls it was serving have finished. A reload that fails
 * (missing or broken folder) leaves the current scorer in place and rethrows.
 */
import type { ScoreCallOptions, ScoreInput, ScoreOutput, Scorer } from './types.js';

export interface ReloadableScorer extends Scorer {
  /** Builds a new scorer with `create` and swaps it in; resolves once the old one is closing. */
  reload(): Promise<{ backend: string; model: string; default_strategy: string | null }>;
}

export async function createReloadableScorer(create: () => Promise<Scorer>): Promise<ReloadableScorer> {
  let current = await create();
  const inFlight = new Map<Scorer, number>();
  const retired = new Set<Scorer>();
  const settle = async (scorer: Scorer) => {
    if (retired.has(scorer) && !inFlight.get(scorer)) {
      retired.delete(scorer);
      await scorer.close();
    }
  };
  let closed = false;
  return {
    get backend() {
      return current.backend;
    },
    get model() {
      return current.model;
    },
    get tokenizer() {
      return current.tokenizer;
    },
    get maxInputTokens() {
      return current.maxInputTokens;
    },
    get selector() {
      return current.selector;
    },
    get chatTemplate() {
      return current.chatTemplate;
    },
    get template() {
      return current.template;
    },
    async score(inputs: ScoreInput[], options?: ScoreCallOptions): Promise<ScoreOutput[]> {
      const scorer = current;
      inFlight.set(scorer, (inFlight.get(scorer) ?? 0) + 1);
      try {
        return await scorer.score(inputs, options);
      } finally {
        inFlight.set(scorer, inFlight.get(scorer)! - 1);
        await settle(scorer);
      }
    },
    async reload() {
      const next = await create();
      const previous = current;
      current = next;
      retired.add(previous);
      void settle(previous).catch(() => {});
      return { backend: next.backend, model: next.model, default_strategy: next.selector ? (next.selector.default_strategy ?? 'learned') : null };
    },
    async close() {
      if (closed) return;
      closed = true;
      await Promise.all([current.close(), ...[...retired].map((scorer) => scorer.close())]);
    },
  };
}
