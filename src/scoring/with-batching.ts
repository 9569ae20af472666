/**
 * `withBatching(scorer, options)`: concurrent `score()` calls are coalesced into batches for the
 * wrapped scorer, and only while the backend is busy (docs/value-models.md#batching). A call that
 * finds fewer than `maxInFlight` batches at the backend is sent at once, with whatever waits, as
 * it would be without batching (alone, when nothing else waits); otherwise it waits for company until a batch comes back (then the
 * queue leaves at once), the batch is full (inputs or tokens), or `windowMs` has passed since the
 * oldest queued input, so a slow batch holds the others for one window at most. A call is not
 * split over two batches unless it is larger than one. Each caller gets its own results in its
 * own order; a failed batch fails only the calls it carried; an aborted call leaves the queue at
 * once, and a batch in flight is cancelled only when every call it serves has gone.
 */
import { throwIfAborted, wnwError } from '../errors.js';
import type { ScoreCallOptions, ScoreInput, ScoreOutput, Scorer } from './types.js';

export interface BatchingOptions {
  /** Most inputs per batch. */
  maxBatchSize: number;
  /** Most tokens per batch (ids counted exactly, text estimated at 4 characters a token); a larger input goes alone. */
  maxBatchTokens: number;
  /** Longest wait for company, from the first queued input (ms); only a busy backend makes a call wait. */
  windowMs: number;
  /** Batches at the backend at once below which a call is sent without waiting (default 1). */
  maxInFlight?: number;
}

interface Call {
  results: ScoreOutput[];
  remaining: number;
  settled: boolean;
  batches: Set<Batch>;
  resolve(results: ScoreOutput[]): void;
  reject(error: unknown): void;
}

interface Item {
  call: Call;
  index: number;
  input: ScoreInput;
  tokens: number;
}

interface Batch {
  controller: AbortController;
  calls: Set<Call>;
}

/** Tokens of one input: its ids when present, else a 4-characters-a-token estimate. */
export function estimateTokens(input: ScoreInput): number {
  return input.inputIds?.length ?? Math.ceil(input.text.length / 4);
}

/** The wrapped scorer's outputs, one per input, or WNW_ERR_SCORE_RESPONSE. */
function checkedCount(outputs: ScoreOutput[], inputs: number): ScoreOutput[] {
  if (outputs.length !== inputs) throw wnwError('WNW_ERR_SCORE_RESPONSE', `scorer returned ${outputs.length} results for ${inputs} inputs`);
  return outputs;
}

export function withBatching(scorer: Scorer, options: BatchingOptions): Scorer {
  const maxInFlight = options.maxInFlight ?? 1;
  if (!(options.maxBatchSize >= 1) || !(options.maxBatchTokens >= 1) || !(options.windowMs >= 0) || !(maxInFlight >= 1)) {
    throw wnwError('WNW_ERR_CFG_INVALID', 'batching needs maxBatchSize ≥ 1, maxBatchTokens ≥ 1, windowMs ≥ 0 and maxInFlight ≥ 1', {
      details: { field: 'batching', ...options },
    });
  }
  let queue: Item[] = [];
  let queuedTokens = 0;
  let timer: NodeJS.Timeout | undefined;
  let closed = false;
  const inFlight = new Set<Promise<void>>();

  function settle(call: Call, outcome: { results: ScoreOutput[] } | { error: unknown }): void {
    if (call.settled) return;
    call.settled = true;
    if ('error' in outcome) {
      const kept = queue.filter((item) => item.call !== call);
      queuedTokens = kept.reduce((sum, item) => sum + item.tokens, 0);
      queue = kept;
      for (const batch of call.batches) {
        if ([...batch.calls].every((other) => other.settled)) batch.controller.abort();
      }
      call.reject(outcome.error);
      arm();
    } else {
      call.resolve(outcome.results);
    }
  }

  /** The queued inputs of the call at the head of the queue (they are consecutive), and their tokens. */
  function headCall(): { count: number; tokens: number } {
    const call = queue[0]!.call;
    let count = 0;
    let tokens = 0;
    while (count < queue.length && queue[count]!.call === call) tokens += queue[count++]!.tokens;
    return { count, tokens };
  }

  /** The next batch: whole calls while they fit; a call larger than a batch fills one alone. */
  function take(): Item[] {
    const items: Item[] = [];
    let tokens = 0;
    while (queue.length > 0) {
      const next = queue[0]!;
      if (items.length > 0) {
        if (items.length >= options.maxBatchSize || tokens + next.tokens > options.maxBatchTokens) break;
        // A call that would not fit whole waits for the next batch, so that it is answered by one.
        if (next.call !== items[items.length - 1]!.call) {
          const whole = headCall();
          if (items.length + whole.count > options.maxBatchSize || tokens + whole.tokens > options.maxBatchTokens) break;
        }
      }
      items.push(queue.shift()!);
      tokens += next.tokens;
      queuedTokens -= next.tokens;
    }
    return items;
  }

  function dispatch(items: Item[]): void {
    const batch: Batch = { controller: new AbortController(), calls: new Set(items.map((item) => item.call)) };
    for (const call of batch.calls) call.batches.add(batch);
    const run = (async () => {
      try {
        const outputs = checkedCount(
          await scorer.score(
            items.map((item) => item.input),
            { signal: batch.controller.signal },
          ),
          items.length,
        );
        items.forEach((item, position) => {
          const { call } = item;
          if (call.settled) return;
          call.results[item.index] = outputs[position]!;
          call.remaining -= 1;
          if (call.remaining === 0) settle(call, { results: call.results });
        });
      } catch (error) {
        for (const call of batch.calls) settle(call, { error });
      } finally {
        for (const call of batch.calls) call.batches.delete(batch);
      }
    })();
    inFlight.add(run);
    void run.finally(() => {
      inFlight.delete(run);
      // The backend has room again: what waited for company leaves now, not at the window's end.
      pump();
      arm();
    });
  }

  function fitsOneBatch(inputs: ScoreInput[]): boolean {
    if (inputs.length > options.maxBatchSize) return false;
    let tokens = 0;
    for (const input of inputs) tokens += estimateTokens(input);
    return tokens <= options.maxBatchTokens;
  }

  /** One call as its own batch: its signal cancels the request, and the call leaves at once, as a queued one would. */
  function sendAlone(inputs: ScoreInput[], signal: AbortSignal | undefined): Promise<ScoreOutput[]> {
    const sent = scorer.score(inputs, signal ? { signal } : {}).then((outputs) => checkedCount(outputs, inputs.length));
    const run = sent.then(
      () => undefined,
      () => undefined,
    );
    inFlight.add(run);
    void run.then(() => {
      inFlight.delete(run);
      pump();
      arm();
    });
    if (!signal) return sent;
    return new Promise<ScoreOutput[]>((resolve, reject) => {
      const onAbort = () => reject(wnwError('WNW_ERR_OP_ABORTED', 'scoring cancelled', { cause: signal.reason }));
      signal.addEventListener('abort', onAbort, { once: true });
      sent.then(
        (outputs) => {
          signal.removeEventListener('abort', onAbort);
          resolve(outputs);
        },
        (error) => {
          signal.removeEventListener('abort', onAbort);
          reject(error);
        },
      );
    });
  }

  /** Sends full batches, and everything queued while the backend has fewer than maxInFlight batches. */
  function pump(): void {
    while (queue.length >= options.maxBatchSize || queuedTokens >= options.maxBatchTokens) dispatch(take());
    while (queue.length > 0 && inFlight.size < maxInFlight) dispatch(take());
  }

  function flushAll(): void {
    timer = undefined;
    while (queue.length > 0) dispatch(take());
  }

  /** Keeps the window timer running exactly while something waits. */
  function arm(): void {
    if (queue.length === 0 && timer) {
      clearTimeout(timer);
      timer = undefined;
    } else if (queue.length > 0 && !timer) {
      timer = setTimeout(flushAll, options.windowMs);
    }
  }

  return {
    backend: scorer.backend,
    model: scorer.model,
    maxInputTokens: scorer.maxInputTokens,
    ...(scorer.tokenizer ? { tokenizer: scorer.tokenizer } : {}),
    score(inputs: ScoreInput[], callOptions: ScoreCallOptions = {}): Promise<ScoreOutput[]> {
      if (closed) return Promise.reject(wnwError('WNW_ERR_OP_ABORTED', `${scorer.backend} scorer is closed`));
      try {
        throwIfAborted(callOptions.signal);
      } catch (error) {
        return Promise.reject(error);
      }
      if (inputs.length === 0) return Promise.resolve([]);
      const { signal } = callOptions;
      // Nothing waits and the backend has room: the call goes alone, as it would without batching,
      // and without the queue's bookkeeping (that alone made batching lose at 64 connections, bench/results/service.md).
      if (queue.length === 0 && inFlight.size < maxInFlight && fitsOneBatch(inputs)) return sendAlone(inputs, signal);
      return new Promise<ScoreOutput[]>((resolve, reject) => {
        const onAbort = () => settle(call, { error: wnwError('WNW_ERR_OP_ABORTED', 'scoring cancelled', { cause: signal?.reason }) });
        const done = () => signal?.removeEventListener('abort', onAbort);
        const call: Call = {
          results: new Array<ScoreOutput>(inputs.length),
          remaining: inputs.length,
          settled: false,
          batches: new Set(),
          resolve: (results) => {
            done();
            resolve(results);
          },
          reject: (error) => {
            done();
            reject(error);
          },
        };
        inputs.forEach((input, index) => {
          const tokens = estimateTokens(input);
          queue.push({ call, index, input, tokens });
          queuedTokens += tokens;
        });
        signal?.addEventListener('abort', onAbort, { once: true });
        pump();
        arm();
      });
    },
    async close() {
      if (closed) return;
      closed = true;
      if (timer) clearTimeout(timer);
      flushAll();
      await Promise.allSettled([...inFlight]);
      await scorer.close();
    },
  };
}
