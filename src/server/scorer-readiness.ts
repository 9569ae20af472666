/**
 * Whether the server's scorer answers, as readiness and /score see it: one probe
 * (src/scoring/probe.ts) at a time, its verdict kept for `ttlMs`. `/readyz` (which a
 * load balancer or kubelet polls) probes when its verdict is stale. `/score` never probes a scorer
 * believed up, so scoring adds no probes (nor their batches to the metrics); once a probe has found
 * the scorer down, requests fail at once (503) instead of each waiting out the scorer's own
 * deadline, and past the TTL the next request probes again first, so recovery is seen.
 */
import { WinnowerError, wnwError } from '../errors.js';
import { probeScorer, type ProbeResult } from '../scoring/probe.js';
import { pinValueModel, type ServedValueModel } from '../scoring/reloadable.js';

export interface ScorerProbeOptions {
  /** How long a verdict holds (default 5 s). */
  ttlMs?: number;
  /** The probe's deadline (default 10 s, room for a cold or busy scorer): a scorer that cannot score one line in that time is not ready. */
  timeoutMs?: number;
}

export type ScorerVerdict = ProbeResult & { checked_at: string };

export interface ScorerReadiness {
  /** A verdict no older than the TTL, probing when there is none. */
  check(): Promise<ScorerVerdict>;
  /** Throws WNW_ERR_SCORE_UNAVAILABLE when the scorer is known to be down (see the file comment). */
  throwIfDown(): Promise<void>;
  /** throwIfDown's error, returned instead of thrown (undefined while the scorer is not known to be down). */
  downError(): Promise<WinnowerError | undefined>;
  /** Drops the verdict (the model was swapped: the old verdict was about the model that left). */
  forget(): void;
}

/** The job dependencies with the readiness verdict attached, so a job's scoring degrades as /score does. */
export function withReadiness<D extends object>(
  deps: D,
  readiness: ScorerReadiness | undefined,
): D & { scorerDown?: () => Promise<WinnowerError | undefined> } {
  return readiness ? { ...deps, scorerDown: () => readiness.downError() } : deps;
}

export function createScorerReadiness(served: ServedValueModel, options: ScorerProbeOptions = {}): ScorerReadiness {
  const ttlMs = options.ttlMs ?? 5_000;
  const timeoutMs = options.timeoutMs ?? 10_000;
  let last: { verdict: ScorerVerdict; at: number } | undefined;
  let running: Promise<ScorerVerdict> | undefined;

  const fresh = () => last !== undefined && performance.now() - last.at < ttlMs;
  const probe = (): Promise<ScorerVerdict> => {
    if (running) return running;
    // The model serving now, held for the probe: a reload meanwhile does not close it under the probe.
    const pinned = pinValueModel(served);
    running = probeScorer(pinned.valueModel!.scorer, { timeoutMs })
      .then((result) => {
        const verdict = { ...result, checked_at: new Date().toISOString() };
        last = { verdict, at: performance.now() };
        return verdict;
      })
      .finally(() => {
        pinned.release();
        running = undefined;
      });
    return running;
  };

  return {
    check: () => (fresh() ? Promise.resolve(last!.verdict) : probe()),
    forget: () => {
      last = undefined;
    },
    async downError() {
      try {
        await this.throwIfDown();
        return undefined;
      } catch (error) {
        if (WinnowerError.isInstance(error)) return error;
        throw error;
      }
    },
    async throwIfDown() {
      if (last === undefined || last.verdict.ok) return;
      const verdict = fresh() ? last.verdict : await probe();
      if (!verdict.ok) {
        throw wnwError(
          'WNW_ERR_SCORE_UNAVAILABLE',
          `the value model is not answering (${verdict.code}: ${verdict.reason}, checked ${verdict.checked_at}); retry later`,
          {
            details: { probe: verdict },
          },
        );
      }
    },
  };
}
