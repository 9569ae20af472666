/**
 * One cheap call that says whether a scorer answers sensibly now: a one-line input with a key of
 * its own (so no cache answers it), under a short deadline, whose output must be a probability.
 * Used by the server's readiness (src/server/scorer-readiness.ts); it wraps the Scorer interface
 * and knows nothing of any backend.
 */
import { randomUUID } from 'node:crypto';
import { toWinnowerError } from '../errors.js';
import type { Scorer } from './types.js';

export type ProbeResult = { ok: true; ms: number } | { ok: false; ms: number; code: string; reason: string };

/** The probe's input: a few tokens, like the shortest real trajectory. */
const PROBE_TEXT = 'readiness probe: is the value model answering?';

export async function probeScorer(scorer: Scorer, options: { timeoutMs: number; signal?: AbortSignal }): Promise<ProbeResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const deadline = AbortSignal.timeout(options.timeoutMs);
  const signal = options.signal ? AbortSignal.any([options.signal, deadline]) : deadline;
  let timer: NodeJS.Timeout | undefined;
  // A backend that ignores the signal still gets a verdict at the deadline.
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${options.timeoutMs} ms`)), options.timeoutMs);
  });
  try {
    const [output] = await Promise.race([scorer.score([{ key: `probe:${randomUUID()}`, text: PROBE_TEXT }], { signal }), late]);
    if (output?.error) return { ok: false, ms: elapsed(), code: output.error.code, reason: output.error.message };
    if (!output || !Number.isFinite(output.value) || output.value < 0 || output.value > 1) {
      return {
        ok: false,
        ms: elapsed(),
        code: 'WNW_ERR_SCORE_RESPONSE',
        reason: `the answer is not a probability (${JSON.stringify(output?.value ?? null)})`,
      };
    }
    return { ok: true, ms: elapsed() };
  } catch (error) {
    if (deadline.aborted || (error instanceof Error && error.message.startsWith('no answer within'))) {
      return { ok: false, ms: elapsed(), code: 'WNW_ERR_SCORE_TIMEOUT', reason: `no answer within ${options.timeoutMs} ms` };
    }
    const coded = toWinnowerError(error, 'WNW_ERR_SCORE_UPSTREAM');
    return { ok: false, ms: elapsed(), code: coded.code, reason: coded.message };
  } finally {
    clearTimeout(timer);
  }
}
