/**
 * `withCache(scorer, { maxEntries })`: inputs with the same `key` (content hash of template, model
 * and text) are scored once. Finished scores stay in an LRU of `maxEntries`; an input already in
 * flight for another caller is awaited, not sent again. A caller that aborts stops waiting; the
 * request it started is cancelled only when no other caller still waits on it. Failures are not
 * cached. An output answered from the LRU carries `cached: true`.
 */
import { throwIfAborted, wnwError } from '../errors.js';
import type { ScoreCallOptions, ScoreInput, ScoreOutput, Scorer } from './types.js';

export interface CacheOptions {
  /** Scores kept; 0 keeps none (in-flight duplicates are still shared). */
  maxEntries: number;
}

export interface CacheStats {
  /** Inputs answered from the LRU. */
  hits: number;
  /** Inputs sent to the wrapped scorer. */
  misses: number;
  /** Inputs that joined an identical one already in flight. */
  shared: number;
  /** Scores held now. */
  entries: number;
}

/** One call to the wrapped scorer, shared by every caller waiting on one of its keys. */
interface Flight {
  controller: AbortController;
  waiters: number;
}

interface Pending {
  promise: Promise<ScoreOutput>;
  flight: Flight;
}

export function withCache(scorer: Scorer, options: CacheOptions): Scorer & { readonly stats: CacheStats } {
  const entries = new Map<string, ScoreOutput>();
  const pending = new Map<string, Pending>();
  const stats = { hits: 0, misses: 0, shared: 0 };

  function remember(key: string, output: ScoreOutput): void {
    if (options.maxEntries <= 0) return;
    entries.delete(key);
    entries.set(key, output);
    while (entries.size > options.maxEntries) entries.delete(entries.keys().next().value!);
  }

  function leave(flights: Set<Flight>): void {
    for (const flight of flights) {
      flight.waiters -= 1;
      if (flight.waiters === 0) flight.controller.abort();
    }
  }

  function start(misses: ScoreInput[]): Flight {
    const flight: Flight = { controller: new AbortController(), waiters: 0 };
    const run = scorer.score(misses, { signal: flight.controller.signal });
    misses.forEach((input, position) => {
      const promise = run.then((outputs) => {
        const output = outputs[position];
        if (output === undefined)
          throw wnwError('WNW_ERR_SCORE_RESPONSE', `scorer returned ${outputs.length} results for ${misses.length} inputs`);
        return output;
      });
      promise.catch(() => undefined);
      pending.set(input.key, { promise, flight });
    });
    const forget = () => {
      for (const input of misses) if (pending.get(input.key)?.flight === flight) pending.delete(input.key);
    };
    run.then((outputs) => {
      forget();
      misses.forEach((input, position) => {
        const output = outputs[position];
        // An input the server refused (too long) is refused again only under the same limits: not kept.
        if (output && !output.error) remember(input.key, output);
      });
    }, forget);
    return flight;
  }

  return {
    backend: scorer.backend,
    model: scorer.model,
    maxInputTokens: scorer.maxInputTokens,
    ...(scorer.tokenizer ? { tokenizer: scorer.tokenizer } : {}),
    get stats(): CacheStats {
      return { ...stats, entries: entries.size };
    },
    async score(inputs: ScoreInput[], callOptions: ScoreCallOptions = {}): Promise<ScoreOutput[]> {
      const { signal } = callOptions;
      throwIfAborted(signal);
      const results = new Array<ScoreOutput>(inputs.length);
      const waits: Array<Promise<void>> = [];
      const flights = new Set<Flight>();
      const misses: ScoreInput[] = [];
      const missing = new Map<string, number[]>();
      inputs.forEach((input, index) => {
        const hit = entries.get(input.key);
        if (hit) {
          stats.hits += 1;
          entries.delete(input.key);
          entries.set(input.key, hit);
          results[index] = { ...hit, cached: true };
          return;
        }
        const joined = pending.get(input.key);
        if (joined && !joined.flight.controller.signal.aborted) {
          stats.shared += 1;
          flights.add(joined.flight);
          waits.push(joined.promise.then((output) => void (results[index] = output)));
          return;
        }
        const slots = missing.get(input.key);
        if (slots) {
          stats.shared += 1;
          slots.push(index);
        } else {
          stats.misses += 1;
          missing.set(input.key, [index]);
          misses.push(input);
        }
      });
      if (misses.length > 0) {
        const flight = start(misses);
        flights.add(flight);
        for (const input of misses) {
          const slots = missing.get(input.key)!;
          waits.push(pending.get(input.key)!.promise.then((output) => slots.forEach((index) => (results[index] = output))));
        }
      }
      if (waits.length === 0) return results;
      for (const flight of flights) flight.waiters += 1;

      let onAbort: (() => void) | undefined;
      const aborted = new Promise<never>((_, reject) => {
        onAbort = () => reject(wnwError('WNW_ERR_OP_ABORTED', 'scoring cancelled', { cause: signal?.reason }));
        signal?.addEventListener('abort', onAbort, { once: true });
      });
      aborted.catch(() => undefined);
      try {
        await Promise.race([Promise.all(waits), aborted]);
        for (const flight of flights) flight.waiters -= 1;
        return results;
      } catch (error) {
        leave(flights);
        throw error;
      } finally {
        if (onAbort) signal?.removeEventListener('abort', onAbort);
      }
    },
    async close() {
      await scorer.close();
    },
  };
}
