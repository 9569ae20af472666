/**
 * What the value model sees of a token sequence, computed exactly as the exported ONNX graph does
 * (`onnx-export.ts`), so training and serving agree to float precision:
 * - a token's *slot* is its id, or id + vocabulary size once the `<patch>` marker has been seen
 *   (issue and trajectory words are told from patch words);
 * - a bigram's slot is (previous slot × BIGRAM_PRIME + slot) mod buckets, offset by 2 × vocabulary;
 * - every token and bigram weighs 1 / √tokens (a rare decisive token is not drowned by a long
 *   input, as in mean pooling), and log(tokens + 1) is one more input.
 */
import { PATCH_ID } from './vocabulary.js';

export const BIGRAM_PRIME = 1_000_003;

export interface FeatureSpace {
  vocabSize: number;
  bigramBuckets: number;
}

/** A sparse bag: embedding rows and their weights (row order is first occurrence). */
export interface FeatureBag {
  rows: Int32Array;
  weights: Float32Array;
  /** log(tokens + 1), before standardisation. */
  logLength: number;
}

export function embeddingRows(space: FeatureSpace): number {
  return 2 * space.vocabSize + space.bigramBuckets;
}

/** The bag of one (unpadded) token id sequence. */
export function featureBag(ids: ArrayLike<number>, space: FeatureSpace): FeatureBag {
  const counts = new Map<number, number>();
  const add = (row: number) => counts.set(row, (counts.get(row) ?? 0) + 1);
  const { vocabSize, bigramBuckets } = space;
  let inPatch = 0;
  let previous = -1;
  for (let i = 0; i < ids.length; i++) {
    const id = ids[i]!;
    if (id === PATCH_ID) inPatch = 1;
    const slot = id + inPatch * vocabSize;
    add(slot);
    if (previous >= 0) add(2 * vocabSize + ((previous * BIGRAM_PRIME + slot) % bigramBuckets));
    previous = slot;
  }
  const norm = Math.sqrt(Math.max(ids.length, 1));
  const rows = new Int32Array(counts.size);
  const weights = new Float32Array(counts.size);
  let k = 0;
  for (const [row, count] of counts) {
    rows[k] = row;
    weights[k] = count / norm;
    k++;
  }
  return { rows, weights, logLength: Math.log(ids.length + 1) };
}
