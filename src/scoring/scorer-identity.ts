/**
 * Which value model and selector a scorer is: the model's name, folder and a content hash of the
 * files that decide its scores (model.onnx, tokenizer.json, config.json), the selector.json's hash
 * and default strategy, and the backend with its URLs. Every job records it (`scored_by`), so a
 * result says what scored it, and a reload of a different folder changes the hashes.
 */
import { createHash } from 'node:crypto';
import { createReadStream, existsSync, statSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { SELECTOR_FILE, type LearnedSelector } from '../types/selector.js';

/** The files of an onnx model folder hashed into its identity, in this order. */
const MODEL_FILES = ['model.onnx', 'tokenizer.json', 'config.json'];

// Types, not interfaces: the API's loose response schemas need them assignable to an index signature.
export type ScorerIdentity = {
  model: {
    /** The model's name as reported in each Score (the folder's name for onnx). */
    name: string;
    /** The model folder (onnx), absolute; null for a model served elsewhere. */
    path: string | null;
    /** `sha256:<hex>` over the folder's model.onnx, tokenizer.json and config.json (onnx); null for a model served elsewhere. */
    hash: string | null;
  };
  selector: {
    /** The selector.json read, absolute; null without one. */
    path: string | null;
    /** `sha256:<hex>` of its bytes; null without one. */
    hash: string | null;
    /** The strategy a request naming none gets from it (`learned` or `robust`); null without a selector. */
    default_strategy: string | null;
  };
  scorer: {
    /** onnx | sglang | vllm | openai */
    backend: string;
    /** The server base URLs (no credentials, no query); empty for onnx. */
    urls: string[];
  };
};

/** What a job records: the scorer's identity and the strategy that selected. */
export type ScoredBy = Omit<ScorerIdentity, 'selector'> & {
  /** `strategy`: the one that selected (null where nothing was selected: /score). */
  selector: ScorerIdentity['selector'] & { strategy: string | null };
};

/** `sha256:<hex>` over the named files that exist, each prefixed with its name so that a renamed file changes the hash. */
async function hashFiles(files: string[]): Promise<string> {
  const hash = createHash('sha256');
  for (const file of files) {
    if (!existsSync(file)) continue;
    hash.update(`${basename(file)}\0`);
    for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
    hash.update('\0');
  }
  return `sha256:${hash.digest('hex')}`;
}

/** A base URL without user info, query or fragment: an identity must not carry a credential. */
function shownUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.origin}${parsed.pathname}`;
  } catch {
    return '(invalid url)';
  }
}

/** The selector.json that `selectorPath` names (the file or its folder), when it exists. */
function selectorFile(selectorPath: string | undefined): string | undefined {
  if (selectorPath === undefined) return undefined;
  const file = existsSync(selectorPath) && statSync(selectorPath).isFile() ? selectorPath : join(selectorPath, SELECTOR_FILE);
  return existsSync(file) ? resolve(file) : undefined;
}

export async function scorerIdentity(options: {
  backend: string;
  /** Model folder (onnx) or the model's name on its server. */
  model: string;
  /** The name each Score reports. */
  name: string;
  urls: string[];
  /** Where the selector was read from (a selector.json or its folder), if anywhere. */
  selectorPath?: string;
  selector?: LearnedSelector;
}): Promise<ScorerIdentity> {
  const folder = options.backend === 'onnx' ? resolve(options.model) : null;
  const file = options.selector ? selectorFile(options.selectorPath) : undefined;
  return {
    model: {
      name: options.name,
      path: folder,
      hash: folder ? await hashFiles(MODEL_FILES.map((name) => join(folder, name))) : null,
    },
    selector: {
      path: file ?? null,
      hash: file ? await hashFiles([file]) : null,
      default_strategy: options.selector ? (options.selector.default_strategy ?? 'learned') : null,
    },
    scorer: { backend: options.backend, urls: options.urls.map(shownUrl) },
  };
}

/** What a job records as `scored_by`: the identity of the scorer it used and the strategy that chose. */
export function scoredBy(identity: ScorerIdentity | undefined, strategy: string | null): ScoredBy | null {
  if (!identity) return null;
  return { ...identity, selector: { ...identity.selector, strategy } };
}
