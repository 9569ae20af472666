/**
 * Tokenizers load `tokenizer.json` from a local folder (never from a hub). The Rust binding
 * `tokenizers` is async and ~3× faster than pure JS, so counting tokens of long trajectories
 * leaves the event loop free.
 */
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { wnwError } from '../errors.js';

export interface Tokenizer {
  /** A name for logs and scores (the folder or file). */
  readonly name: string;
  /** Token ids of each text, without special tokens. */
  encode(texts: string[]): Promise<number[][]>;
  /** Token count of each text, without special tokens, as `encode` would give; copies no ids to JS. */
  countTokens(texts: string[]): Promise<number[]>;
  decode(ids: number[]): Promise<string>;
  /** Id of a single token, or undefined when `token` is not one token of the vocabulary. */
  tokenToId(token: string): number | undefined;
}

/** Loads `<path>/tokenizer.json` (or `path` itself when it is the file). */
export async function loadTokenizer(path: string): Promise<Tokenizer> {
  const file = existsSync(path) && statSync(path).isDirectory() ? join(path, 'tokenizer.json') : path;
  if (!existsSync(file)) {
    throw wnwError('WNW_ERR_SCORE_TOKENIZER', `tokenizer.json not found at ${file}`, { details: { path: file } });
  }
  let native: import('tokenizers').Tokenizer;
  try {
    const { Tokenizer: NativeTokenizer } = await import('tokenizers');
    native = NativeTokenizer.fromFile(file);
    // A tokenizer.json may carry truncation or padding settings (e.g. max_length 512): they would
    // cut or pad every encoding, so counts and ids would no longer be the text's. winnower fits the
    // budget and pads batches itself.
    native.disableTruncation();
    native.disablePadding();
  } catch (error) {
    throw wnwError('WNW_ERR_SCORE_TOKENIZER', `cannot load ${file}: ${(error as Error).message}`, { cause: error });
  }
  return {
    name: file,
    async encode(texts) {
      if (texts.length === 0) return [];
      const encodings = await native.encodeBatch(texts, { addSpecialTokens: false });
      return encodings.map((encoding) => encoding.getIds());
    },
    async countTokens(texts) {
      if (texts.length === 0) return [];
      const encodings = await native.encodeBatch(texts, { addSpecialTokens: false });
      return encodings.map((encoding) => encoding.getLength());
    },
    async decode(ids) {
      return native.decode(ids, false);
    },
    tokenToId(token) {
      const id = native.tokenToId(token);
      return id === null || id === undefined ? undefined : id;
    },
  };
}
