/**
 * The embedded scorer: an exported value model run by ONNX Runtime in worker threads
 * (`onnx-pool.ts`, `onnx-worker.ts`), tokenized on the client with the folder's tokenizer.json.
 * The model's kind follows from its output: `[batch, 1]` scalar head (value = sigmoid(logit)),
 * `[batch, 2]` NO/YES classifier or `[batch, seq, vocab]` causal-LM judge (value = P(YES) from the
 * YES and NO logits at the last real position; raw = logit_YES − logit_NO).
 *
 * @example
 * const scorer = await createOnnxScorer({ modelDir: 'models/tiny-value', workers: 2 });
 * const [score] = await scorer.score([{ key, text }]);
 * await scorer.close();
 */
import { existsSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { z } from 'zod';
import { throwIfAborted, WinnowerError, wnwError } from '../../errors.js';
import { loadTokenizer, type Tokenizer } from '../../serialize/tokenizer.js';
import { type OnnxBatch, type OnnxSessionInfo, OnnxWorkerPool } from './onnx-pool.js';
import type { HeadSettings } from '../http/head.js';
import type { OnnxPick } from './onnx-worker.js';
import type { ScoreCallOptions, ScoreInput, ScoreOutput, Scorer } from '../types.js';
import { sigmoid } from '../../util/logistic.js';
import { untilAborted } from '../../util/until-aborted.js';

export interface OnnxScorerOptions {
  /** Folder holding model.onnx, tokenizer.json and (optionally) config.json. */
  modelDir: string;
  /** Worker threads, each with its own session (default 1). */
  workers?: number;
  /** ONNX Runtime intra-op threads per worker (default: cores / workers, at least 1). */
  intraOpThreads?: number;
  /** Longest input accepted (default: config.json `max_position_embeddings`, else 4096). */
  maxInputTokens?: number;
  /** Judge labels exactly as the model emits them, e.g. `' YES'` after "Answer:" (default YES / NO). */
  labels?: { yes: string; no: string };
  /** A head of several labels (`[batch, labels]` logits): the label table, the success index and the activation. */
  head?: HeadSettings;
  /** Padded tokens (rows × longest row) per model run (default 32768); one longer input still runs alone. */
  maxBatchTokens?: number;
  /** Reported as `Score.model` (default: the folder's name). */
  name?: string;
}

export type OnnxModelKind = 'scalar' | 'two-class' | 'multi-label' | 'causal-lm';

export interface OnnxScorer extends Scorer {
  readonly backend: 'onnx';
  readonly tokenizer: Tokenizer;
  readonly kind: OnnxModelKind;
  /** Input and output names as the session reports them. */
  readonly session: OnnxSessionInfo;
  /** Judges: what is read for YES and NO (token ids for a causal LM, columns for a classifier). */
  readonly labelIds: { yes: number; no: number } | undefined;
}

const ModelConfig = z.looseObject({
  max_position_embeddings: z.number().int().positive().optional(),
  pad_token_id: z.number().int().nonnegative().nullable().optional(),
  eos_token_id: z
    .union([z.number().int().nonnegative(), z.array(z.number().int().nonnegative())])
    .nullable()
    .optional(),
  id2label: z.record(z.string(), z.string()).optional(),
});
type ModelConfig = z.infer<typeof ModelConfig>;

const KNOWN_INPUTS = ['input_ids', 'attention_mask', 'position_ids', 'token_type_ids'];
/** Largest logits tensor a causal-LM run may produce (floats, 256 MiB). */
const MAX_LOGITS = 2 ** 26;

/** Loads the model in `workers` threads, checks its signature and labels, and returns the scorer. */
export async function createOnnxScorer(options: OnnxScorerOptions): Promise<OnnxScorer> {
  const modelDir = resolve(options.modelDir);
  const modelPath = join(modelDir, 'model.onnx');
  if (!existsSync(modelPath)) {
    throw wnwError('WNW_ERR_SCORE_MODEL', `model.onnx not found at ${modelPath}`, { details: { file: modelPath } });
  }
  const config = readConfig(modelDir);
  const tokenizer = await loadTokenizer(modelDir);
  const workers = Math.max(1, Math.floor(options.workers ?? 1));
  const intraOpThreads = options.intraOpThreads ?? Math.max(1, Math.floor(availableParallelism() / workers));
  const { pool, info } = await OnnxWorkerPool.start({ modelPath, workers, intraOpThreads });
  try {
    const padTokenId = config.pad_token_id ?? [config.eos_token_id ?? 0].flat()[0] ?? 0;
    checkInputs(info, modelPath);
    const probe = await pool.run(
      { ids: new Int32Array([padTokenId]), lengths: new Int32Array([1]), padTokenId, pick: { kind: 'probe' } },
      1,
    );
    const kind = options.head ? headKind(probe.dims, options.head, modelPath) : kindOf(probe.dims, info.outputName, modelPath);
    const labels = options.labels ?? { yes: 'YES', no: 'NO' };
    const labelIds =
      kind === 'two-class'
        ? classifierColumns(config, labels)
        : kind === 'causal-lm'
          ? await labelTokenIds(tokenizer, labels, probe.dims[2]!, modelPath)
          : undefined;
    const pick: OnnxPick = options.head
      ? { kind: 'head', index: options.head.labelIndex, softmax: options.head.activation === 'softmax' }
      : labelIds && (kind === 'two-class' || kind === 'causal-lm')
        ? { kind, ...labelIds }
        : { kind: 'scalar' };
    return new OnnxScorerImpl({
      pool,
      tokenizer,
      kind,
      info,
      labelIds,
      pick,
      padTokenId,
      model: options.name ?? basename(modelDir),
      maxInputTokens: options.maxInputTokens ?? config.max_position_embeddings ?? 4096,
      maxBatchTokens: options.maxBatchTokens ?? 32_768,
      vocabSize: kind === 'causal-lm' ? probe.dims[2]! : 1,
      batchable: info.inputNames.some((name) => name.includes('attention_mask')),
    });
  } catch (error) {
    await pool.close();
    throw error;
  }
}

interface ScorerParts {
  pool: OnnxWorkerPool;
  tokenizer: Tokenizer;
  kind: OnnxModelKind;
  info: OnnxSessionInfo;
  labelIds: { yes: number; no: number } | undefined;
  pick: OnnxPick;
  padTokenId: number;
  model: string;
  maxInputTokens: number;
  maxBatchTokens: number;
  vocabSize: number;
  /** False when the graph has no attention mask: each row then runs alone, unpadded. */
  batchable: boolean;
}

class OnnxScorerImpl implements OnnxScorer {
  readonly backend = 'onnx' as const;
  readonly model: string;
  readonly tokenizer: Tokenizer;
  readonly maxInputTokens: number;
  readonly kind: OnnxModelKind;
  readonly session: OnnxSessionInfo;
  readonly labelIds: { yes: number; no: number } | undefined;
  readonly #parts: ScorerParts;
  readonly #active = new Set<Promise<unknown>>();
  #closed = false;
  #closing: Promise<void> | undefined;

  constructor(parts: ScorerParts) {
    this.#parts = parts;
    this.model = parts.model;
    this.tokenizer = parts.tokenizer;
    this.maxInputTokens = parts.maxInputTokens;
    this.kind = parts.kind;
    this.session = parts.info;
    this.labelIds = parts.labelIds;
  }

  score(inputs: ScoreInput[], options: ScoreCallOptions = {}): Promise<ScoreOutput[]> {
    if (this.#closed) return Promise.reject(wnwError('WNW_ERR_OP_ABORTED', 'ONNX scorer is closed'));
    const call = this.#score(inputs, options);
    const settled: Promise<unknown> = call.then(
      () => this.#active.delete(settled),
      () => this.#active.delete(settled),
    );
    this.#active.add(settled);
    return call;
  }

  /** Lets the score() calls already made finish, then terminates the workers; idempotent. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      this.#closed = true;
      await Promise.allSettled([...this.#active]);
      await this.#parts.pool.close();
    })();
    return this.#closing;
  }

  async #score(inputs: ScoreInput[], options: ScoreCallOptions): Promise<ScoreOutput[]> {
    throwIfAborted(options.signal);
    if (inputs.length === 0) return [];
    const rows = await this.#tokenize(inputs);
    throwIfAborted(options.signal);
    const outputs = new Array<ScoreOutput>(inputs.length);
    await Promise.all(
      this.#plan(rows).map(async (run) => {
        const { batch, cost } = this.#batch(run, rows);
        const result = await untilAborted(this.#parts.pool.run(batch, cost), options.signal, scoringCancelled);
        run.forEach((index, row) => {
          outputs[index] = this.#output(result.values[row * 2]!, result.values[row * 2 + 1]!);
        });
      }),
    );
    return outputs;
  }

  async #tokenize(inputs: ScoreInput[]): Promise<number[][]> {
    const missing = inputs.flatMap((input, index) => (input.inputIds ? [] : [index]));
    const encoded = await this.#parts.tokenizer.encode(missing.map((index) => inputs[index]!.text));
    const rows = inputs.map((input) => input.inputIds ?? []);
    missing.forEach((index, i) => (rows[index] = encoded[i]!));
    rows.forEach((ids, index) => {
      const key = inputs[index]!.key;
      if (ids.length === 0) {
        throw wnwError('WNW_ERR_INPUT_INVALID', `input ${key} has no tokens`, { details: { key } });
      }
      if (ids.length > this.maxInputTokens) {
        throw wnwError(
          'WNW_ERR_INPUT_INVALID',
          `input ${key} has ${ids.length} tokens; ${this.model} takes at most ${this.maxInputTokens}`,
          {
            details: { key, tokens: ids.length, max: this.maxInputTokens },
          },
        );
      }
    });
    return rows;
  }

  /**
   * Groups row indices into model runs: longest first (little padding), about equal tokens per
   * live worker so one batch spreads over all of them, and within the padded-token budget.
   */
  #plan(rows: number[][]): number[][] {
    const { pool, maxBatchTokens, kind, vocabSize, batchable } = this.#parts;
    const order = rows.map((_, index) => index).sort((a, b) => rows[b]!.length - rows[a]!.length || a - b);
    if (!batchable) return order.map((index) => [index]);
    const total = rows.reduce((sum, ids) => sum + ids.length, 0);
    const share = Math.ceil(total / Math.max(1, Math.min(pool.alive, rows.length)));
    const runs: number[][] = [];
    let run: number[] = [];
    let tokens = 0;
    for (const index of order) {
      const width = run.length > 0 ? rows[run[0]!]!.length : rows[index]!.length;
      const padded = (run.length + 1) * width;
      const full = tokens >= share || padded > maxBatchTokens || (kind === 'causal-lm' && padded * vocabSize > MAX_LOGITS);
      if (run.length > 0 && full) {
        runs.push(run);
        run = [];
        tokens = 0;
      }
      run.push(index);
      tokens += rows[index]!.length;
    }
    if (run.length > 0) runs.push(run);
    return runs;
  }

  #batch(run: number[], rows: number[][]): { batch: OnnxBatch; cost: number } {
    const lengths = new Int32Array(run.length);
    let total = 0;
    run.forEach((index, row) => {
      lengths[row] = rows[index]!.length;
      total += lengths[row]!;
    });
    const ids = new Int32Array(total);
    let offset = 0;
    for (const index of run) {
      const source = rows[index]!;
      for (let t = 0; t < source.length; t++) ids[offset + t] = source[t]!;
      offset += source.length;
    }
    const cost = run.length * lengths[0]!;
    return { batch: { ids, lengths, padTokenId: this.#parts.padTokenId, pick: this.#parts.pick }, cost };
  }

  /** `first`, `second`: [logit, 0] for a scalar head, [logit_NO, logit_YES] for judges, [logit, log Σ exp] for a head. */
  #output(first: number, second: number): ScoreOutput {
    if (this.#parts.pick.kind === 'head')
      return { value: this.#parts.pick.softmax ? Math.exp(first - second) : sigmoid(first), raw: first };
    const raw = this.kind === 'scalar' ? first : second - first;
    return { value: sigmoid(raw), raw };
  }
}

function readConfig(modelDir: string): ModelConfig {
  const file = join(modelDir, 'config.json');
  if (!existsSync(file)) return {};
  try {
    return ModelConfig.parse(JSON.parse(readFileSync(file, 'utf8')));
  } catch (error) {
    throw wnwError('WNW_ERR_SCORE_MODEL', `cannot read ${file}: ${(error as Error).message}`, { cause: error, details: { file } });
  }
}

function checkInputs(info: OnnxSessionInfo, modelPath: string): void {
  const unknown = info.inputNames.filter((name) => !KNOWN_INPUTS.some((known) => name.includes(known)));
  if (unknown.length > 0 || !info.inputNames.some((name) => name.includes('input_ids'))) {
    throw wnwError(
      'WNW_ERR_SCORE_MODEL',
      `${modelPath} takes inputs [${info.inputNames.join(', ')}]; supported: input_ids (required), ${KNOWN_INPUTS.slice(1).join(', ')}`,
      { details: { file: modelPath, inputs: info.inputNames } },
    );
  }
}

function kindOf(dims: number[], outputName: string, modelPath: string): OnnxModelKind {
  if (dims.length === 1 || (dims.length === 2 && dims[1] === 1)) return 'scalar';
  if (dims.length === 2 && dims[1] === 2) return 'two-class';
  if (dims.length === 3 && dims[2]! > 2) return 'causal-lm';
  if (dims.length === 2) {
    throw wnwError(
      'WNW_ERR_SCORE_MODEL',
      `${modelPath}: output ${outputName} has ${dims[1]} labels; name them (scorer.labels, and labelIndex for success) to read it as a multi-label head`,
      {
        details: { file: modelPath, output: outputName, dims, field: 'scorer.labels' },
      },
    );
  }
  throw wnwError(
    'WNW_ERR_SCORE_MODEL',
    `${modelPath}: output ${outputName} has dims [${dims.join(', ')}] for one row; expected [batch, 1], [batch, 2] (NO, YES), [batch, labels] with scorer.labels, or [batch, sequence, vocab]`,
    { details: { file: modelPath, output: outputName, dims } },
  );
}

/** A head read by its label table: the output must be `[batch, labels]` with exactly that many labels. */
function headKind(dims: number[], head: HeadSettings, modelPath: string): OnnxModelKind {
  if (dims.length === 2 && dims[1] === head.labels.length) return 'multi-label';
  throw wnwError(
    'WNW_ERR_SCORE_MODEL',
    `${modelPath}: output dims [${dims.join(', ')}] for one row do not match the ${head.labels.length} labels of scorer.labels`,
    {
      details: { file: modelPath, dims, labels: head.labels.length, field: 'scorer.labels' },
    },
  );
}

/** Columns of a two-class head: from config.json's id2label when it names the labels, else NO=0, YES=1. */
function classifierColumns(config: ModelConfig, labels: { yes: string; no: string }): { yes: number; no: number } {
  const column = (label: string) => {
    const wanted = label.trim().toUpperCase();
    const entry = Object.entries(config.id2label ?? {}).find(([, name]) => name.trim().toUpperCase() === wanted);
    return entry ? Number(entry[0]) : undefined;
  };
  const yes = column(labels.yes);
  const no = column(labels.no);
  return yes !== undefined && no !== undefined && yes !== no && yes < 2 && no < 2 ? { yes, no } : { yes: 1, no: 0 };
}

/** Token ids of the judge labels; each must be exactly one token, or start-up fails. */
async function labelTokenIds(
  tokenizer: Tokenizer,
  labels: { yes: string; no: string },
  vocabSize: number,
  modelPath: string,
): Promise<{ yes: number; no: number }> {
  const single = async (label: string): Promise<number> => {
    const bare = label.trim();
    const variants = [...new Set([label, bare, ` ${bare}`])];
    const encoded = await tokenizer.encode(variants);
    const ids = encoded[0]!;
    if (ids.length === 1) {
      if (ids[0]! >= vocabSize) {
        throw wnwError(
          'WNW_ERR_SCORE_MODEL',
          `label ${JSON.stringify(label)} is token ${ids[0]}, beyond the ${vocabSize} logits of ${modelPath}`,
          {
            details: { file: modelPath, label },
          },
        );
      }
      return ids[0]!;
    }
    const singles = variants.filter((_, i) => encoded[i]!.length === 1).map((variant) => JSON.stringify(variant));
    throw wnwError(
      'WNW_ERR_SCORE_TOKENIZER',
      `judge label ${JSON.stringify(label)} is ${ids.length} tokens in ${tokenizer.name}; it must be one. ` +
        (singles.length > 0
          ? `Single-token variants: ${singles.join(', ')} (set labels to one of them).`
          : 'No variant (with or without a leading space) is a single token.'),
      { details: { label, tokens: ids, tokenizer: tokenizer.name } },
    );
  };
  const yes = await single(labels.yes);
  const no = await single(labels.no);
  if (yes === no) {
    throw wnwError(
      'WNW_ERR_SCORE_TOKENIZER',
      `judge labels ${JSON.stringify(labels.yes)} and ${JSON.stringify(labels.no)} are the same token ${yes}`,
      {
        details: { labels },
      },
    );
  }
  return { yes, no };
}

const scoringCancelled = (signal: AbortSignal) => new WinnowerError('WNW_ERR_OP_ABORTED', 'scoring cancelled', { cause: signal.reason });
