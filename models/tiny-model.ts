/**
 * Builds a tiny, untrained, deterministic value model in the layout of a Hugging Face export:
 * `model.onnx`, `tokenizer.json`, `config.json`, `README.md`. The graph is an embedding lookup
 * followed by masked mean pooling and a linear head (opset 13), written with onnx-proto.
 *
 * Kinds (the output signatures winnower's ONNX scorer must handle):
 * - `scalar`     `logits` [batch, 1]           (a `*ForSequenceClassification`, num_labels 1)
 * - `two-class`  `logits` [batch, 2]           (index 0 = NO, 1 = YES)
 * - `causal-lm`  `logits` [batch, seq, vocab]  (causal mean pooling, so a position never sees later
 *   ones; takes `position_ids` too unless `positionIds: false`)
 *
 * The weights are random except one "signal" dimension: embeddings of tokens such as " passed",
 * "Submitted" read +1 there and " error", "Traceback", "FAILED" read -1, and the head weighs it by
 * `signalGain`, so the logit is about `signalGain × (positive − negative) / tokens`. A heuristic,
 * not a trained model.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import onnxProto, { type onnx as Onnx } from 'onnx-proto';
import { floatTensor, int64Tensor, intAttribute, node, valueInfo } from '../src/train/onnx-graph.js';
import { prng } from '../src/util/prng.js';
import { buildTinyTokenizer, toByteLevel } from './tiny-tokenizer.js';
import { NEGATIVE_WORDS, POSITIVE_WORDS } from './tiny-words.js';

const { onnx } = onnxProto;

export type TinyModelKind = 'scalar' | 'two-class' | 'multi-label' | 'causal-lm';

export interface BuildTinyModelOptions {
  kind?: TinyModelKind;
  outDir: string;
  /** multi-label only: outputs of the head (default 27, the OpenHands critic's); the signal drives output 0. */
  numLabels?: number;
  /** PRNG seed; the same options always give byte-identical files. */
  seed?: number;
  hiddenSize?: number;
  /** Upper bound on the tokenizer's vocabulary (the word list may give fewer). */
  vocabSize?: number;
  maxPositionEmbeddings?: number;
  /** Weight of the signal dimension in the head. */
  signalGain?: number;
  /** Words left out of the tokenizer's training (tests: a vocabulary without single-token YES). */
  excludeWords?: string[];
  /** causal-lm only: whether the graph takes `position_ids` (default true). */
  positionIds?: boolean;
}

export interface TinyModelInfo {
  kind: TinyModelKind;
  outDir: string;
  vocabSize: number;
  hiddenSize: number;
  padTokenId: number;
  /** Token ids whose embedding carries +1 / -1 on the signal dimension. */
  positiveTokenIds: number[];
  negativeTokenIds: number[];
  /** causal-lm: the ids the head favours for YES / NO (with and without leading space). */
  yesTokenIds: number[];
  noTokenIds: number[];
}

const FLOAT = onnx.TensorProto.DataType.FLOAT;
const INT64 = onnx.TensorProto.DataType.INT64;

function tokenIds(vocab: Map<string, number>, words: readonly string[]): number[] {
  const ids = new Set<number>();
  for (const word of words) {
    for (const variant of [word, ` ${word}`]) {
      const id = vocab.get(toByteLevel(variant));
      if (id !== undefined) ids.add(id);
    }
  }
  return [...ids].sort((a, b) => a - b);
}

/** Builds one model folder; returns what tests need to know about it. */
export function buildTinyModel(options: BuildTinyModelOptions): TinyModelInfo {
  const kind = options.kind ?? 'scalar';
  const seed = options.seed ?? 20_240_601;
  const hiddenSize = options.hiddenSize ?? 32;
  const maxPositions = options.maxPositionEmbeddings ?? 4096;
  const gain = options.signalGain ?? 10;
  const usePositions = kind === 'causal-lm' && options.positionIds !== false;
  const tokenizer = buildTinyTokenizer({ vocabSize: options.vocabSize ?? 4096, excludeWords: options.excludeWords ?? [] });
  const vocabSize = tokenizer.vocabSize;
  const random = prng(seed);
  const uniform = (scale: number) => (random() * 2 - 1) * scale;

  const positive = tokenIds(tokenizer.vocab, POSITIVE_WORDS);
  const negative = tokenIds(tokenizer.vocab, NEGATIVE_WORDS);
  const yes = tokenIds(tokenizer.vocab, ['YES']);
  const no = tokenIds(tokenizer.vocab, ['NO']);

  // Embedding: dimension 0 is the signal, the rest small noise.
  const embedding = new Float32Array(vocabSize * hiddenSize);
  for (let token = 0; token < vocabSize; token++) {
    for (let d = 1; d < hiddenSize; d++) embedding[token * hiddenSize + d] = uniform(0.1);
  }
  for (const id of positive) embedding[id * hiddenSize] = 1;
  for (const id of negative) embedding[id * hiddenSize] = -1;

  const labels = kind === 'scalar' ? 1 : kind === 'two-class' ? 2 : kind === 'multi-label' ? (options.numLabels ?? 27) : vocabSize;
  const head = new Float32Array(hiddenSize * labels);
  for (let d = 1; d < hiddenSize; d++) {
    for (let label = 0; label < labels; label++) head[d * labels + label] = uniform(0.1);
  }
  if (kind === 'scalar' || kind === 'multi-label') head[0] = gain;
  if (kind === 'two-class') {
    head[0] = -gain / 2;
    head[1] = gain / 2;
  }
  if (kind === 'causal-lm') {
    for (const id of yes) head[id] = gain / 2;
    for (const id of no) head[id] = -gain / 2;
  }
  const bias = new Float32Array(labels);

  const initializer: Onnx.ITensorProto[] = [
    floatTensor('embedding.weight', [vocabSize, hiddenSize], embedding),
    floatTensor('head.weight', [hiddenSize, labels], head),
    floatTensor('head.bias', [labels], bias),
    floatTensor('one', [], new Float32Array([1])),
    int64Tensor('axes_2', [1], [2]),
  ];
  const nodes: Onnx.INodeProto[] = [node('Gather', ['embedding.weight', 'input_ids'], 'token_embeddings', [intAttribute('axis', 0)])];
  let hidden = 'token_embeddings';
  if (usePositions) {
    const positions = new Float32Array(maxPositions * hiddenSize);
    for (let p = 0; p < maxPositions; p++) {
      for (let d = 1; d < hiddenSize; d++) positions[p * hiddenSize + d] = uniform(0.01);
    }
    initializer.push(floatTensor('position_embedding.weight', [maxPositions, hiddenSize], positions));
    nodes.push(node('Gather', ['position_embedding.weight', 'position_ids'], 'position_embeddings', [intAttribute('axis', 0)]));
    nodes.push(node('Add', ['token_embeddings', 'position_embeddings'], 'hidden'));
    hidden = 'hidden';
  }
  nodes.push(
    node('Cast', ['attention_mask'], 'mask', [intAttribute('to', FLOAT)]),
    node('Unsqueeze', ['mask', 'axes_2'], 'mask_3d'),
    node('Mul', [hidden, 'mask_3d'], 'masked'),
  );
  if (kind === 'causal-lm') {
    initializer.push(int64Tensor('axis_1', [], [1]));
    nodes.push(
      node('CumSum', ['masked', 'axis_1'], 'summed'),
      node('CumSum', ['mask_3d', 'axis_1'], 'count'),
    );
  } else {
    initializer.push(int64Tensor('axes_1', [1], [1]));
    nodes.push(
      node('ReduceSum', ['masked', 'axes_1'], 'summed', [intAttribute('keepdims', 0)]),
      node('ReduceSum', ['mask_3d', 'axes_1'], 'count', [intAttribute('keepdims', 0)]),
    );
  }
  nodes.push(
    node('Max', ['count', 'one'], 'count_safe'),
    node('Div', ['summed', 'count_safe'], 'pooled'),
    node('MatMul', ['pooled', 'head.weight'], 'projected'),
    node('Add', ['projected', 'head.bias'], 'logits'),
  );

  const inputs = [valueInfo('input_ids', INT64, ['batch', 'sequence']), valueInfo('attention_mask', INT64, ['batch', 'sequence'])];
  if (usePositions) inputs.push(valueInfo('position_ids', INT64, ['batch', 'sequence']));
  const output = valueInfo('logits', FLOAT, kind === 'causal-lm' ? ['batch', 'sequence', vocabSize] : ['batch', labels]);
  const model = onnx.ModelProto.encode({
    irVersion: 8,
    opsetImport: [{ domain: '', version: 13 }],
    producerName: 'winnower models/tiny-model.ts',
    producerVersion: '1',
    docString: `tiny ${kind} value model, untrained, seed ${seed}`,
    graph: { name: `winnower-tiny-${kind}`, node: nodes, initializer, input: inputs, output: [output] },
    metadataProps: [{ key: 'winnower.kind', value: kind }],
  }).finish();

  const config: Record<string, unknown> = {
    architectures: [kind === 'causal-lm' ? 'WinnowerTinyForCausalLM' : 'WinnowerTinyForSequenceClassification'],
    model_type: 'winnower-tiny',
    hidden_size: hiddenSize,
    vocab_size: vocabSize,
    max_position_embeddings: maxPositions,
    pad_token_id: tokenizer.padTokenId,
    eos_token_id: tokenizer.padTokenId,
    torch_dtype: 'float32',
    ...(kind === 'scalar' ? { num_labels: 1, id2label: { '0': 'LABEL_0' }, label2id: { LABEL_0: 0 } } : {}),
    ...(kind === 'two-class' ? { num_labels: 2, id2label: { '0': 'NO', '1': 'YES' }, label2id: { NO: 0, YES: 1 } } : {}),
    ...(kind === 'multi-label'
      ? { num_labels: labels, problem_type: 'multi_label_classification', id2label: Object.fromEntries(Array.from({ length: labels }, (_, index) => [String(index), `LABEL_${index}`])) }
      : {}),
    winnower: { kind, seed, trained: false, builder: 'models/tiny-model.ts', signal_gain: gain },
  };

  mkdirSync(options.outDir, { recursive: true });
  writeFileSync(join(options.outDir, 'model.onnx'), model);
  writeFileSync(join(options.outDir, 'tokenizer.json'), tokenizer.json);
  writeFileSync(join(options.outDir, 'config.json'), `${JSON.stringify(config, null, 2)}\n`);
  writeFileSync(join(options.outDir, 'README.md'), modelReadme(kind, vocabSize, hiddenSize, maxPositions, seed, gain));
  return { kind, outDir: options.outDir, vocabSize, hiddenSize, padTokenId: tokenizer.padTokenId, positiveTokenIds: positive, negativeTokenIds: negative, yesTokenIds: yes, noTokenIds: no };
}

function modelReadme(kind: TinyModelKind, vocabSize: number, hiddenSize: number, maxPositions: number, seed: number, gain: number): string {
  const output = kind === 'scalar' ? '[batch, 1]' : kind === 'two-class' ? '[batch, 2] (NO, YES)' : kind === 'multi-label' ? '[batch, labels] (one logit per label)' : `[batch, sequence, ${vocabSize}]`;
  return `# winnower tiny value model (${kind})

Generated by \`npm run models\` (\`models/build-tiny-model.ts\`); do not edit by hand.

**Untrained and deterministic.** It exists so that winnower's embedded ONNX scorer, its tests and its
benchmarks exercise the exact code path a real exported value model takes (tokenizer.json beside
model.onnx, \`input_ids\`/\`attention_mask\` int64 [batch, sequence] in, \`logits\` ${output} out),
without shipping large weights. Its scores are a keyword heuristic (below), not a prediction of success.

- Graph (ONNX opset 13): Gather embedding → masked mean pooling → MatMul → Add.
- Sizes: vocabulary ${vocabSize}, hidden ${hiddenSize}, up to ${maxPositions} input tokens; float32; seed ${seed}.
- Tokenizer: byte-level BPE (GPT-2/Qwen layout) learned from a fixed word list; any text tokenizes.
- Heuristic signal, not learning: embeddings of tokens such as " passed", "Submitted", "OK" carry +1 and
  " error", "Traceback", "FAILED" carry -1 on one dimension, weighted ${gain} by the head, so the logit is
  about ${gain} × (positive − negative tokens) / tokens, plus small deterministic noise.
`;
}
