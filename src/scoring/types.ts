/**
 * The scorer seam: a value model behind one interface, whatever serves it (ONNX Runtime in
 * process, SGLang, vLLM, any OpenAI-compatible server). Inputs arrive already serialized (and
 * tokenized when a tokenizer is available) so what the model sees is exactly what was counted.
 * Batching, caching and retries wrap this interface (`with-batching.ts`, `with-cache.ts`). What
 * comes with a model besides its scorer (selector, templates, identity) is the ValueModel
 * (`value-model.ts`), so a wrapper passes on only the fields below.
 */
import type { WinnowerError } from '../errors.js';
import type { Tokenizer } from '../serialize/tokenizer.js';

export interface ScoreInput {
  /** Content hash of (template, model, text): identical inputs share one key. */
  key: string;
  /** Serialized trajectory (the model's whole prompt). */
  text: string;
  /** Token ids of `text` when the client tokenized it; servers then receive ids, not text. */
  inputIds?: number[];
}

export interface ScoreOutput {
  /** Probability of success in [0, 1]. */
  value: number;
  /** Raw output: the scalar head's logit, or log-odds of YES for judges. */
  raw: number;
  /** True when the score came from the content-hash cache of finished scores (`with-cache.ts`), not from the model. */
  cached?: boolean;
  /**
   * Set when this one input could not be scored while the rest of its batch was (e.g. the server
   * refused it as longer than its context, WNW_ERR_SCORE_TOO_LONG); `value` and `raw` are then NaN.
   */
  error?: WinnowerError;
}

export interface ScoreCallOptions {
  signal?: AbortSignal;
}

export interface Scorer {
  /** onnx | sglang | vllm | openai */
  readonly backend: string;
  /** Model name or folder, as reported in each Score. */
  readonly model: string;
  /** The model's tokenizer when available on the client; budgets are counted with it. */
  readonly tokenizer?: Tokenizer;
  /** Largest input, in tokens, the model accepts. */
  readonly maxInputTokens: number;
  /** Scores every input; the result has the same order and length. */
  score(inputs: ScoreInput[], options?: ScoreCallOptions): Promise<ScoreOutput[]>;
  /** Releases workers, pools and sockets; idempotent. */
  close(): Promise<void>;
}
