/**
 * A scorer whose model can be replaced while the server runs (`winnower serve`: SIGHUP and
 * `POST /admin/model` both call `reload()`): every field is read from the current scorer at the
 * moment it is asked for, so the next request after a reload scores with the new model and ranks
 * with its selector (and its default strategy). A job or request that must keep one model from
 * start to end `pin()`s it. The new model is loaded and checked in full before the swap; the old
 * scorer is closed once the calls and pins it was serving have finished. A reload that fails
 * (missing or broken folder) leaves the current scorer in place and throws WNW_ERR_SCORE_RELOAD.
 */
import { toWinnowerError, wnwError } from '../errors.js';
import { scorerFields } from './scorer-fields.js';
import type { ScorerIdentity } from './scorer-identity.js';
import type { ScoreCallOptions, ScoreInput, ScoreOutput, Scorer } from './types.js';

// A type, not an interface: the API's loose response schema needs it assignable to an index signature.
export type ReloadResult = {
  backend: string;
  model: string;
  default_strategy: string | null;
  identity: ScorerIdentity | null;
};

/** A scorer held for one job or request: a reload meanwhile does not change or close it until `release()`. */
export interface PinnedScorer {
  scorer: Scorer;
  /** Idempotent. */
  release(): void;
}

export interface ReloadableScorer extends Scorer {
  /**
   * Loads the model at `path` (default: the folder serving now; at first the configured one),
   * then swaps it in; resolves once the old one is closing. Reloads run one at a time.
   */
  reload(options?: { path?: string }): Promise<ReloadResult>;
  /** The scorer serving now, held until `release()`. */
  pin(): PinnedScorer;
}

/**
 * `create(path)` builds a scorer for the model folder `path` (undefined: the configured one) and
 * checks it; `reload` is true for every call after the first.
 */
export type ScorerFactory = (path: string | undefined, options: { reload: boolean }) => Promise<Scorer>;

export async function createReloadableScorer(create: ScorerFactory): Promise<ReloadableScorer> {
  let current = await create(undefined, { reload: false });
  let currentPath: string | undefined;
  const inFlight = new Map<Scorer, number>();
  const retired = new Set<Scorer>();
  const hold = (scorer: Scorer) => inFlight.set(scorer, (inFlight.get(scorer) ?? 0) + 1);
  const settle = async (scorer: Scorer) => {
    inFlight.set(scorer, inFlight.get(scorer)! - 1);
    if (retired.has(scorer) && !inFlight.get(scorer)) {
      retired.delete(scorer);
      inFlight.delete(scorer);
      await scorer.close();
    }
  };
  let closed = false;
  let reloading: Promise<unknown> = Promise.resolve();
  const swap = async (path: string | undefined): Promise<ReloadResult> => {
    if (closed) throw wnwError('WNW_ERR_SCORE_RELOAD', 'the server is shutting down: no model is loaded now');
    const target = path ?? currentPath;
    let next: Scorer;
    try {
      next = await create(target, { reload: true });
    } catch (error) {
      const cause = toWinnowerError(error);
      throw wnwError(
        'WNW_ERR_SCORE_RELOAD',
        `${target ?? 'the configured model'} was not loaded: ${cause.message}; the current model keeps serving`,
        {
          cause,
          details: { ...(target === undefined ? {} : { path: target }), cause: cause.toJSON() },
        },
      );
    }
    if (closed) {
      await next.close();
      throw wnwError('WNW_ERR_SCORE_RELOAD', 'the server is shutting down: the new model was not swapped in');
    }
    const previous = current;
    current = next;
    currentPath = target;
    retired.add(previous);
    hold(previous);
    void settle(previous).catch(() => {});
    return {
      backend: next.backend,
      model: next.model,
      default_strategy: next.selector ? (next.selector.default_strategy ?? 'learned') : null,
      identity: next.identity ?? null,
    };
  };
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
    get identity() {
      return current.identity;
    },
    async score(inputs: ScoreInput[], options?: ScoreCallOptions): Promise<ScoreOutput[]> {
      const scorer = current;
      hold(scorer);
      try {
        return await scorer.score(inputs, options);
      } finally {
        await settle(scorer);
      }
    },
    reload(options = {}) {
      const result = reloading.then(() => swap(options.path));
      reloading = result.catch(() => {});
      return result;
    },
    pin() {
      const scorer = current;
      hold(scorer);
      let released = false;
      const release = () => {
        if (released) return;
        released = true;
        void settle(scorer).catch(() => {});
      };
      return {
        scorer: { ...scorerFields(scorer), score: (inputs, options) => scorer.score(inputs, options), close: async () => release() },
        release,
      };
    },
    async close() {
      if (closed) return;
      closed = true;
      await Promise.all([current.close(), ...[...retired].map((scorer) => scorer.close())]);
    },
  };
}

/** Whether `scorer` can be reloaded (the server's scorer; a test's plain scorer cannot). */
export function isReloadable(scorer: Scorer | undefined): scorer is ReloadableScorer {
  return (
    scorer !== undefined &&
    typeof (scorer as Partial<ReloadableScorer>).reload === 'function' &&
    typeof (scorer as Partial<ReloadableScorer>).pin === 'function'
  );
}

/** Holds `scorer`'s current model for one job or request (a plain scorer is held as it is). */
export function pinScorer(scorer: Scorer | undefined): { scorer: Scorer | undefined; release(): void } {
  return isReloadable(scorer) ? scorer.pin() : { scorer, release: () => {} };
}
