/**
 * A pure-JS (float64) reference for the tiny models' graph, computed from the weights stored in
 * model.onnx: embedding (+ position embedding) → masked mean (causal for the LM) → linear head.
 * Tests compare the ONNX scorer against it to check padding, batching and label reading.
 */
import { readFileSync } from 'node:fs';
import onnxProto from 'onnx-proto';

const { onnx } = onnxProto;

interface Matrix {
  dims: number[];
  data: Float64Array;
}

export interface TinyWeights {
  embedding: Matrix;
  position?: Matrix;
  head: Matrix;
  bias: Matrix;
}

export function readTinyWeights(modelPath: string): TinyWeights {
  const model = onnx.ModelProto.decode(readFileSync(modelPath));
  const tensors = new Map<string, Matrix>();
  for (const tensor of model.graph?.initializer ?? []) {
    if (tensor.dataType !== onnx.TensorProto.DataType.FLOAT) continue;
    const bytes = tensor.rawData ?? new Uint8Array();
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const data = new Float64Array(bytes.byteLength / 4);
    for (let i = 0; i < data.length; i++) data[i] = view.getFloat32(i * 4, true);
    tensors.set(tensor.name ?? '', { dims: (tensor.dims ?? []).map(Number), data });
  }
  const get = (name: string) => {
    const tensor = tensors.get(name);
    if (!tensor) throw new Error(`initializer ${name} missing from ${modelPath}`);
    return tensor;
  };
  return {
    embedding: get('embedding.weight'),
    ...(tensors.has('position_embedding.weight') ? { position: get('position_embedding.weight') } : {}),
    head: get('head.weight'),
    bias: get('head.bias'),
  };
}

/** Mean of the (position-added) embeddings of `ids[0..length)`. */
function pooled(weights: TinyWeights, ids: number[], length: number): Float64Array {
  const hidden = weights.embedding.dims[1]!;
  const sum = new Float64Array(hidden);
  for (let t = 0; t < length; t++) {
    for (let d = 0; d < hidden; d++) {
      sum[d]! += weights.embedding.data[ids[t]! * hidden + d]!;
      if (weights.position) sum[d]! += weights.position.data[t * hidden + d]!;
    }
  }
  for (let d = 0; d < hidden; d++) sum[d]! /= Math.max(length, 1);
  return sum;
}

function logit(weights: TinyWeights, state: Float64Array, column: number): number {
  const labels = weights.head.dims[1]!;
  let total = weights.bias.data[column]!;
  for (let d = 0; d < state.length; d++) total += state[d]! * weights.head.data[d * labels + column]!;
  return total;
}

/** The scorer's `raw` for one unpadded row: the logit, or logit(YES) − logit(NO) for judges. */
export function referenceRaw(
  weights: TinyWeights,
  ids: number[],
  pick: { kind: 'scalar' } | { kind: 'two-class' | 'causal-lm'; yes: number; no: number },
): number {
  const state = pooled(weights, ids, ids.length);
  if (pick.kind === 'scalar') return logit(weights, state, 0);
  return logit(weights, state, pick.yes) - logit(weights, state, pick.no);
}

/** Every logit of a `[batch, labels]` head for one unpadded row (a multi-label head). */
export function referenceLogits(weights: TinyWeights, ids: number[]): number[] {
  const state = pooled(weights, ids, ids.length);
  return Array.from({ length: weights.head.dims[1]! }, (_, column) => logit(weights, state, column));
}
