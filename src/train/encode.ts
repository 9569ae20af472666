/**
 * Candidates → token ids, through the same serialization the scorers use at inference time
 * (`scoreCandidates`: judge-v1 when any candidate of the pool has messages, patch-v1 otherwise),
 * so the model is trained on exactly the input it will be served.
 */
import pLimit from 'p-limit';
import { templateFor } from '../scoring/score-candidates.js';
import { serializeTrajectory } from '../serialize/index.js';
import type { Tokenizer } from '../serialize/tokenizer.js';
import type { LabelledCandidate } from './dataset.js';

export interface EncodeOptions {
  tokenizer: Tokenizer;
  budgetTokens: number;
  signal?: AbortSignal;
  onProgress?: (done: number, total: number) => void;
}

/** Token ids per candidate, in the order given. */
export async function encodeCandidates(candidates: LabelledCandidate[], options: EncodeOptions): Promise<number[][]> {
  const withMessages = new Set(candidates.filter((c) => c.trajectory.messages.length > 0).map((c) => c.pool));
  const limit = pLimit(4);
  let done = 0;
  return Promise.all(
    candidates.map((candidate) =>
      limit(async () => {
        options.signal?.throwIfAborted();
        const template = templateFor(withMessages.has(candidate.pool), {});
        const serialized = await serializeTrajectory(candidate.task, candidate.trajectory, {
          template,
          budgetTokens: options.budgetTokens,
          tokenizer: options.tokenizer,
          signal: options.signal,
        });
        const ids = serialized.inputIds ?? (await options.tokenizer.encode([serialized.text]))[0]!;
        options.onProgress?.(++done, candidates.length);
        return ids;
      }),
    ),
  );
}
