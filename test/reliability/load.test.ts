/**
 * Load: a fixed-rate /rerank load over loopback for a bounded time, in two halves. Every request
 * must succeed, and the server's memory (after a full GC) and open handles must not grow from the
 * first half to the second: a leak per request shows as growth, a steady state does not. No
 * wall-clock limit is asserted; the halves are compared with each other.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runLoad, type LoadResult } from '../../src/loadgen/load.js';
import { scenarioRequest, scoringBody } from '../../src/loadgen/scenarios.js';
import { listenOnLoopback, startTestApp, type TestApp } from '../server/test-app.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const RATE_PER_S = 25;
const HALF_S = 4;

/**
 * Memory in use after a full collection — the JS heap and the buffers outside it (where request
 * and response bodies live), not other native memory, which the load generator's WebAssembly
 * histograms in this same process grow once — and the handles (sockets, timers) keeping the loop alive.
 */
function footprint(): { heapBytes: number; handles: number } {
  for (let i = 0; i < 3; i += 1) gc();
  const memory = process.memoryUsage();
  return {
    heapBytes: memory.heapUsed + memory.arrayBuffers,
    handles: process.getActiveResourcesInfo().filter((kind) => kind !== 'TTYWrap').length,
  };
}

describe('fixed-rate /rerank load', () => {
  let server: TestApp;
  let base: string;
  beforeAll(async () => {
    server = await startTestApp({ valueModel: 'bundled' });
    ({ base } = await listenOnLoopback(server.app));
  });
  afterAll(async () => server?.close());

  it(`holds ${RATE_PER_S} req/s for two halves of ${HALF_S} s with no errors and no growth of memory or handles`, async () => {
    const request = scenarioRequest('rerank', scoringBody({ candidates: 4, tokens: 400 }), undefined);
    const half = (label: string) =>
      runLoad(base, request, { connections: 4, durationS: HALF_S, ratePerS: RATE_PER_S, timeoutS: 30, label, progress: false });
    // A short warm-up first: the workers, JIT and caches settle before anything is measured.
    await runLoad(base, request, { connections: 4, durationS: 1, ratePerS: RATE_PER_S, timeoutS: 30, label: 'warm-up', progress: false });
    const results: LoadResult[] = [];
    const marks = [footprint()];
    for (const label of ['first half', 'second half']) {
      results.push(await half(label));
      // The client's sockets close with the run; give the server a turn to see them go.
      await new Promise((resolve) => setTimeout(resolve, 200));
      marks.push(footprint());
    }
    for (const result of results) {
      expect(result.requests).toBeGreaterThan(0);
      expect({ errors: result.errors, timeouts: result.timeouts, non_2xx: result.non_2xx, failed_answers: result.failed_answers }).toEqual({
        errors: 0,
        timeouts: 0,
        non_2xx: 0,
        failed_answers: 0,
      });
    }
    const [, afterFirst, afterSecond] = marks as [unknown, ReturnType<typeof footprint>, ReturnType<typeof footprint>];
    // Growth from the first half to the second: at most 5% or 4 MiB, whichever is larger (a leak of 40 KB a request would pass it).
    const allowed = Math.max(4 * 1024 * 1024, afterFirst.heapBytes * 0.05);
    expect(afterSecond.heapBytes - afterFirst.heapBytes, `heap ${afterFirst.heapBytes} → ${afterSecond.heapBytes}`).toBeLessThan(allowed);
    expect(afterSecond.handles, `handles ${afterFirst.handles} → ${afterSecond.handles}`).toBeLessThanOrEqual(afterFirst.handles + 2);
    // Nothing is left over either: no job, no open sandbox, scorer idle.
    expect(await server.store.listJobs()).toEqual([]);
  }, 60_000);
});
