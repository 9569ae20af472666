/**
 * Writes the trained value model as ONNX (opset 13) with the Hugging Face sequence-classification
 * signature: `input_ids`, `attention_mask` (int64 [batch, sequence]) → `logits` (float [batch, 1]).
 * The graph computes exactly `features.ts` + `value-model.ts` (plus the calibration, folded into
 * the last layer), so any ONNX runtime serves it with no special code.
 */
import onnxProto, { type onnx as Onnx } from 'onnx-proto';
import { floatTensor, int64Tensor, intAttribute, node, valueInfo } from './onnx-graph.js';
import { BIGRAM_PRIME, type FeatureSpace } from './features.js';
import type { ValueModelParams } from './value-model.js';
import { PATCH_ID } from './vocabulary.js';

const { onnx } = onnxProto;
const FLOAT = onnx.TensorProto.DataType.FLOAT;
const INT64 = onnx.TensorProto.DataType.INT64;

/** Platt scaling folded into the head: calibrated logit = a × logit + b. */
export interface Calibration {
  a: number;
  b: number;
}

export interface ExportOptions {
  params: ValueModelParams;
  space: FeatureSpace;
  calibration: Calibration;
  docString: string;
}

/** The serialized ModelProto. */
export function exportValueModel(options: ExportOptions): Uint8Array {
  const { params, space, calibration } = options;
  const { dims, hidden } = params;
  const w1 = new Float32Array((dims + 1) * hidden);
  const b1 = new Float32Array(hidden);
  for (let i = 0; i < w1.length; i++) w1[i] = params.w1[i]!;
  // Standardised log-length: fold (x − mean) / std into the length row of w1 and into b1.
  for (let j = 0; j < hidden; j++) {
    const lengthWeight = params.w1[dims * hidden + j]!;
    w1[dims * hidden + j] = lengthWeight / params.lengthStd;
    b1[j] = params.b1[j]! - (lengthWeight * params.lengthMean) / params.lengthStd;
  }
  const w2 = Float32Array.from(params.w2, (w) => w * calibration.a);
  const b2 = params.b2 * calibration.a + calibration.b;
  // The linear path, with the same length standardisation folded in.
  const skip = Float32Array.from(params.skip, (w) => w * calibration.a);
  skip[dims] = (params.skip[dims]! / params.lengthStd) * calibration.a;
  const skipBias = ((-params.skip[dims]! * params.lengthMean) / params.lengthStd) * calibration.a;
  const bigramOffset = 2 * space.vocabSize;

  const initializer: Onnx.ITensorProto[] = [
    floatTensor('embedding.weight', [params.rows, dims], params.embedding),
    floatTensor('dense.weight', [dims + 1, hidden], w1),
    floatTensor('dense.bias', [hidden], b1),
    floatTensor('score.weight', [hidden, 1], w2),
    floatTensor('score.bias', [1], [b2 + skipBias]),
    floatTensor('skip.weight', [dims + 1, 1], skip),
    int64Tensor('patch_id', [], [PATCH_ID]),
    int64Tensor('one_i', [], [1]),
    int64Tensor('vocab_size', [], [space.vocabSize]),
    int64Tensor('bigram_prime', [], [BIGRAM_PRIME]),
    int64Tensor('bigram_buckets', [], [space.bigramBuckets]),
    int64Tensor('bigram_offset', [], [bigramOffset]),
    int64Tensor('axis_1', [], [1]),
    int64Tensor('axes_1', [1], [1]),
    int64Tensor('axes_2', [1], [2]),
    int64Tensor('start_0', [1], [0]),
    int64Tensor('start_1', [1], [1]),
    int64Tensor('end_minus_1', [1], [-1]),
    int64Tensor('end_max', [1], [Number.MAX_SAFE_INTEGER]),
    floatTensor('one_f', [], [1]),
  ];
  const nodes: Onnx.INodeProto[] = [
    // slot = id + vocab × [the <patch> marker was seen at or before this position]
    node('Equal', ['input_ids', 'patch_id'], 'is_marker'),
    node('Cast', ['is_marker'], 'is_marker_i', [intAttribute('to', INT64)]),
    node('CumSum', ['is_marker_i', 'axis_1'], 'markers_seen'),
    node('Min', ['markers_seen', 'one_i'], 'in_patch'),
    node('Mul', ['in_patch', 'vocab_size'], 'slot_offset'),
    node('Add', ['input_ids', 'slot_offset'], 'slots'),
    // bigram slot = offset + (previous × prime + slot) mod buckets
    node('Slice', ['slots', 'start_0', 'end_minus_1', 'axes_1'], 'previous_slots'),
    node('Slice', ['slots', 'start_1', 'end_max', 'axes_1'], 'next_slots'),
    node('Mul', ['previous_slots', 'bigram_prime'], 'previous_scaled'),
    node('Add', ['previous_scaled', 'next_slots'], 'pair_code'),
    node('Mod', ['pair_code', 'bigram_buckets'], 'pair_bucket'),
    node('Add', ['pair_bucket', 'bigram_offset'], 'bigram_slots'),
    // masks
    node('Cast', ['attention_mask'], 'mask', [intAttribute('to', FLOAT)]),
    node('Slice', ['mask', 'start_0', 'end_minus_1', 'axes_1'], 'mask_previous'),
    node('Slice', ['mask', 'start_1', 'end_max', 'axes_1'], 'mask_next'),
    node('Mul', ['mask_previous', 'mask_next'], 'bigram_mask'),
    node('Unsqueeze', ['mask', 'axes_2'], 'mask_3d'),
    node('Unsqueeze', ['bigram_mask', 'axes_2'], 'bigram_mask_3d'),
    // embedding bag, summed and divided by √tokens
    node('Gather', ['embedding.weight', 'slots'], 'token_vectors', [intAttribute('axis', 0)]),
    node('Gather', ['embedding.weight', 'bigram_slots'], 'bigram_vectors', [intAttribute('axis', 0)]),
    node('Mul', ['token_vectors', 'mask_3d'], 'token_masked'),
    node('Mul', ['bigram_vectors', 'bigram_mask_3d'], 'bigram_masked'),
    node('ReduceSum', ['token_masked', 'axes_1'], 'token_sum', [intAttribute('keepdims', 0)]),
    node('ReduceSum', ['bigram_masked', 'axes_1'], 'bigram_sum', [intAttribute('keepdims', 0)]),
    node('Add', ['token_sum', 'bigram_sum'], 'bag_sum'),
    node('ReduceSum', ['mask', 'axes_1'], 'tokens', [intAttribute('keepdims', 1)]),
    node('Max', ['tokens', 'one_f'], 'tokens_safe'),
    node('Sqrt', ['tokens_safe'], 'tokens_root'),
    node('Div', ['bag_sum', 'tokens_root'], 'pooled'),
    node('Add', ['tokens', 'one_f'], 'tokens_plus_one'),
    node('Log', ['tokens_plus_one'], 'log_length'),
    {
      opType: 'Concat',
      input: ['pooled', 'log_length'],
      output: ['features'],
      name: 'Concat_features',
      attribute: [intAttribute('axis', 1)],
    },
    node('MatMul', ['features', 'dense.weight'], 'dense_projected'),
    node('Add', ['dense_projected', 'dense.bias'], 'dense_out'),
    node('Relu', ['dense_out'], 'hidden'),
    node('MatMul', ['hidden', 'score.weight'], 'score_projected'),
    node('MatMul', ['features', 'skip.weight'], 'skip_projected'),
    node('Add', ['score_projected', 'skip_projected'], 'score_sum'),
    node('Add', ['score_sum', 'score.bias'], 'logits'),
  ];
  return onnx.ModelProto.encode({
    irVersion: 8,
    opsetImport: [{ domain: '', version: 13 }],
    producerName: 'winnower train',
    producerVersion: '1',
    docString: options.docString,
    graph: {
      name: 'winnower-value',
      node: nodes,
      initializer,
      input: [valueInfo('input_ids', INT64, ['batch', 'sequence']), valueInfo('attention_mask', INT64, ['batch', 'sequence'])],
      output: [valueInfo('logits', FLOAT, ['batch', 1])],
    },
    metadataProps: [{ key: 'winnower.kind', value: 'scalar' }],
  }).finish();
}
