/**
 * What a value-model server would compute in prefill: every prompt token, less those a prefix
 * cache already holds. The cache is vLLM's automatic prefix caching (and, for this purpose,
 * SGLang's radix cache): full blocks of `blockSize` tokens, keyed by the whole prefix up to the
 * block's end, so a block is reused only when everything before it matched too. Text prompts are
 * counted at 4 characters a token, as the fakes count them everywhere else.
 */
export interface PrefillStats {
  /** Prompt tokens received. */
  promptTokens: number;
  /** Prompt tokens computed (received minus cache hits). */
  prefillTokens: number;
  /** Prompt tokens served from the prefix cache. */
  cachedTokens: number;
}

export class PrefillCounter {
  readonly stats: PrefillStats = { promptTokens: 0, prefillTokens: 0, cachedTokens: 0 };
  readonly #blocks = new Set<string>();

  constructor(
    /** Whether computed blocks are kept for later prompts. */
    public prefixCache = false,
    readonly blockSize = 16,
  ) {}

  /** Counts one sequence's prefill and returns its token count. */
  add(prompt: readonly number[] | string): number {
    const tokens =
      typeof prompt === 'string'
        ? Array.from({ length: Math.ceil(prompt.length / 4) }, (_, index) => prompt.slice(index * 4, index * 4 + 4))
        : prompt;
    let cached = 0;
    if (this.prefixCache) {
      let key = '';
      let hitting = true;
      for (let end = this.blockSize; end <= tokens.length; end += this.blockSize) {
        // Chained hash: a block's key covers every token before it, as vLLM's block hashes do.
        key = chainHash(key, tokens.slice(end - this.blockSize, end).join('\u0001'));
        if (hitting && this.#blocks.has(key)) cached = end;
        else hitting = false;
        this.#blocks.add(key);
      }
    }
    this.stats.promptTokens += tokens.length;
    this.stats.cachedTokens += cached;
    this.stats.prefillTokens += tokens.length - cached;
    return tokens.length;
  }

  /** Counts tokens computed outside any cache (e.g. a multi-item request's delimiters). */
  addComputed(tokens: number): void {
    this.stats.promptTokens += tokens;
    this.stats.prefillTokens += tokens;
  }

  reset(): void {
    this.stats.promptTokens = 0;
    this.stats.prefillTokens = 0;
    this.stats.cachedTokens = 0;
    this.#blocks.clear();
  }
}

/** Two 32-bit FNV-1a hashes of (parent key, block), as one key; collisions are beside the point of a fake. */
function chainHash(parent: string, block: string): string {
  const text = `${parent}|${block}`;
  let a = 2166136261;
  let b = 33554467;
  for (let index = 0; index < text.length; index += 1) {
    const code = text.charCodeAt(index);
    a = Math.imul(a ^ code, 16777619);
    b = Math.imul(b ^ code, 2246822519);
  }
  return `${(a >>> 0).toString(16)}${(b >>> 0).toString(16)}`;
}
