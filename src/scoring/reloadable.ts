/**
 * A value model that can be replaced while the server runs (`winnower serve`: SIGHUP and
 * `POST /admin/model` both call `reload()`): the whole ValueModel — scorer, selector, templates,
 * identity — is swapped at once, so the next request after a reload scores with the new model and
 * ranks with its selector (and its default strategy). Whatever scores `pin()`s the model serving
 * and keeps it from start to end: a job, a request, a readiness probe. The new model is loaded and
 * checked in full before the swap; the old one is closed once the pins it was serving are
 * released. A reload that fails (missing or broken folder) leaves the current model in place and
 * throws WNW_ERR_SCORE_RELOAD.
 */
import { toWinnowerError, wnwError } from '../errors.js';
import type { ScorerIdentity } from './scorer-identity.js';
import type { ValueModel } from './value-model.js';

// A type, not an interface: the API's loose response schema needs it assignable to an index signature.
export type ReloadResult = {
  backend: string;
  model: string;
  default_strategy: string | null;
  identity: ScorerIdentity | null;
};

/** A value model held for one job or request: a reload meanwhile does not change or close it until `release()`. */
export interface PinnedValueModel {
  /** Scores and selects for the holder; closed by the reloadable model, never by the holder. */
  valueModel: ValueModel;
  /** Idempotent. */
  release(): void;
}

export interface ReloadableValueModel {
  /** The value model serving now, for what it says about itself; what scores with it pins it first. */
  readonly current: ValueModel;
  /**
   * Loads the model at `path` (default: the folder serving now; at first the configured one),
   * then swaps it in; resolves once the old one is closing. Reloads run one at a time.
   */
  reload(options?: { path?: string }): Promise<ReloadResult>;
  /** The value model serving now, held until `release()`. */
  pin(): PinnedValueModel;
  /** Closes the model serving and every one still held. */
  close(): Promise<void>;
}

/**
 * `create(path)` loads the value model for the model folder `path` (undefined: the configured one)
 * and checks it; `reload` is true for every call after the first.
 */
export type ValueModelFactory = (path: string | undefined, options: { reload: boolean }) => Promise<ValueModel>;

export async function createReloadableValueModel(create: ValueModelFactory): Promise<ReloadableValueModel> {
  let current = await create(undefined, { reload: false });
  let currentPath: string | undefined;
  const held = new Map<ValueModel, number>();
  const retired = new Set<ValueModel>();
  const hold = (model: ValueModel) => held.set(model, (held.get(model) ?? 0) + 1);
  const settle = async (model: ValueModel) => {
    held.set(model, held.get(model)! - 1);
    if (retired.has(model) && !held.get(model)) {
      retired.delete(model);
      held.delete(model);
      await model.scorer.close();
    }
  };
  let closed = false;
  let reloading: Promise<unknown> = Promise.resolve();
  const swap = async (path: string | undefined): Promise<ReloadResult> => {
    if (closed) throw wnwError('WNW_ERR_SCORE_RELOAD', 'the server is shutting down: no model is loaded now');
    const target = path ?? currentPath;
    let next: ValueModel;
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
      await next.scorer.close();
      throw wnwError('WNW_ERR_SCORE_RELOAD', 'the server is shutting down: the new model was not swapped in');
    }
    const previous = current;
    current = next;
    currentPath = target;
    retired.add(previous);
    hold(previous);
    void settle(previous).catch(() => {});
    return {
      backend: next.scorer.backend,
      model: next.scorer.model,
      default_strategy: next.selector ? (next.selector.default_strategy ?? 'learned') : null,
      identity: next.identity,
    };
  };
  return {
    get current() {
      return current;
    },
    reload(options = {}) {
      const result = reloading.then(() => swap(options.path));
      reloading = result.catch(() => {});
      return result;
    },
    pin() {
      const model = current;
      hold(model);
      let released = false;
      return {
        valueModel: model,
        release() {
          if (released) return;
          released = true;
          void settle(model).catch(() => {});
        },
      };
    },
    async close() {
      if (closed) return;
      closed = true;
      await Promise.all([current.scorer.close(), ...[...retired].map((model) => model.scorer.close())]);
    },
  };
}

/** What a server scores with: one fixed value model (tests, a plain scorer), or the reloadable one `winnower serve` holds. */
export type ServedValueModel = ValueModel | ReloadableValueModel;

/** Whether `served` can be reloaded (the server's; a fixed one cannot). */
export function isReloadable(served: ServedValueModel | undefined): served is ReloadableValueModel {
  return (
    served !== undefined &&
    typeof (served as Partial<ReloadableValueModel>).reload === 'function' &&
    typeof (served as Partial<ReloadableValueModel>).pin === 'function'
  );
}

/** The value model serving now (a fixed one is itself), for what it says about itself. */
export function servingNow(served: ServedValueModel | undefined): ValueModel | undefined {
  return isReloadable(served) ? served.current : served;
}

/** Holds the value model serving now for one job or request (a fixed one is held as it is). */
export function pinValueModel(served: ServedValueModel | undefined): { valueModel: ValueModel | undefined; release(): void } {
  return isReloadable(served) ? served.pin() : { valueModel: served, release: () => {} };
}
