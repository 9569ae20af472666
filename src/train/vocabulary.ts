/**
 * The value model's tokenizer, learned from the training texts and saved as a standard Hugging
 * Face `tokenizer.json` (WordLevel model, lower-casing normalizer, `Whitespace` pre-tokenizer:
 * runs of word characters or of punctuation). Any runtime that reads tokenizer.json loads it; words
 * outside the vocabulary become `[UNK]`. `<patch>` is an added token: the ONNX graph uses it to tell
 * issue and trajectory words from patch words.
 */

export const UNK_TOKEN = '[UNK]';
export const PAD_TOKEN = '[PAD]';
/** Opens the patch section in the judge-v1 and patch-v1 templates. */
export const PATCH_MARKER = '<patch>';
/** Ids of the fixed tokens; learned words start after them. */
export const UNK_ID = 0;
export const PAD_ID = 1;
export const PATCH_ID = 2;
const FIXED = [UNK_TOKEN, PAD_TOKEN, PATCH_MARKER];

/** Approximates the Whitespace pre-tokenizer (`\w+|[^\w\s]+`, Unicode \w) for counting words. */
const WORDS = /[\p{L}\p{N}\p{M}\p{Pc}]+|[^\p{L}\p{N}\p{M}\p{Pc}\s]+/gu;
/** Longer pieces (hashes, base64, minified code) are never worth a vocabulary entry. */
const MAX_WORD_CHARS = 40;

export interface VocabularyOptions {
  /** Largest vocabulary, fixed tokens included. */
  maxSize: number;
  /** A word must occur in at least this many documents. */
  minDocuments: number;
}

/** Counts, per word, the documents it occurs in; add documents one at a time. */
export class WordCounter {
  readonly #documents = new Map<string, number>();

  add(text: string): void {
    const seen = new Set<string>();
    for (const match of text.toLowerCase().matchAll(WORDS)) {
      const word = match[0];
      if (word.length <= MAX_WORD_CHARS) seen.add(word);
    }
    for (const word of seen) this.#documents.set(word, (this.#documents.get(word) ?? 0) + 1);
  }

  /** The most frequent words (document frequency, then the word itself for a stable order). */
  top(options: VocabularyOptions): string[] {
    return [...this.#documents]
      .filter(([word, count]) => count >= options.minDocuments && !FIXED.includes(word))
      .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
      .slice(0, Math.max(0, options.maxSize - FIXED.length))
      .map(([word]) => word);
  }
}

/** tokenizer.json text for `words` (ids follow the fixed tokens, in the given order). */
export function tokenizerJson(words: readonly string[]): string {
  const vocab: Record<string, number> = {};
  FIXED.forEach((token, id) => (vocab[token] = id));
  words.forEach((word, index) => (vocab[word] = FIXED.length + index));
  const added = (id: number, content: string, special: boolean) => ({
    id,
    content,
    single_word: false,
    lstrip: false,
    rstrip: false,
    normalized: false,
    special,
  });
  return `${JSON.stringify({
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: [added(UNK_ID, UNK_TOKEN, true), added(PAD_ID, PAD_TOKEN, true), added(PATCH_ID, PATCH_MARKER, false)],
    normalizer: { type: 'Lowercase' },
    pre_tokenizer: { type: 'Whitespace' },
    post_processor: null,
    decoder: null,
    model: { type: 'WordLevel', vocab, unk_token: UNK_TOKEN },
  })}\n`;
}
