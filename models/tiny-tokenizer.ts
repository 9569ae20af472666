/**
 * A deterministic byte-level BPE tokenizer (GPT-2 / Qwen layout: ByteLevel pre-tokenizer, BPE
 * model with merges stored as pairs, ByteLevel decoder). Merges are learned by plain BPE training
 * on the fixed word list in `tiny-words.ts`; the 256 byte symbols mean any text tokenizes.
 */
import { LABEL_WORDS, NEGATIVE_WORDS, POSITIVE_WORDS, trainingSymbols, trainingWords } from './tiny-words.js';

/** End of text, also used as padding. */
export const SPECIAL_TOKEN = '<|endoftext|>';

/** The GPT-2 pre-tokenization pattern, as the ByteLevel pre-tokenizer applies it. */
const PRETOKENIZE = /'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+/gu;

export interface TinyTokenizer {
  /** tokenizer.json content. */
  json: string;
  vocab: Map<string, number>;
  merges: Array<[string, string]>;
  /** Total ids, special token included. */
  vocabSize: number;
  padTokenId: number;
}

/** GPT-2's reversible byte → printable character map. */
export function byteToUnicode(): string[] {
  const printable: number[] = [];
  for (let b = 33; b <= 126; b++) printable.push(b);
  for (let b = 161; b <= 172; b++) printable.push(b);
  for (let b = 174; b <= 255; b++) printable.push(b);
  const table: string[] = new Array<string>(256);
  let extra = 0;
  for (let b = 0; b < 256; b++) {
    table[b] = printable.includes(b) ? String.fromCharCode(b) : String.fromCharCode(256 + extra++);
  }
  return table;
}

/** Text → its byte-level symbol string (what the vocabulary stores). */
export function toByteLevel(text: string, table = byteToUnicode()): string {
  let out = '';
  for (const byte of new TextEncoder().encode(text)) out += table[byte];
  return out;
}

function pretokenize(text: string): string[] {
  return text.match(PRETOKENIZE) ?? [];
}

/** Training units (pre-tokenized, byte-level) with weights, in a fixed order. */
function trainingUnits(excluded: Set<string>): Map<string, number> {
  const table = byteToUnicode();
  const units = new Map<string, number>();
  const add = (text: string, weight: number) => {
    for (const piece of pretokenize(text)) {
      const unit = toByteLevel(piece, table);
      units.set(unit, (units.get(unit) ?? 0) + weight);
    }
  };
  const boosted = new Map<string, number>();
  for (const word of LABEL_WORDS) boosted.set(word, 10_000);
  for (const word of [...POSITIVE_WORDS, ...NEGATIVE_WORDS]) boosted.set(word, 1_000);
  for (const word of trainingWords()) {
    if (excluded.has(word)) continue;
    const weight = boosted.get(word) ?? 10;
    add(word, weight);
    add(` ${word}`, weight);
  }
  for (const symbol of trainingSymbols()) add(symbol, 20);
  return units;
}

/** Plain BPE training: merge the most frequent adjacent pair until `maxMerges` or no pair is left. */
function learnMerges(units: Map<string, number>, maxMerges: number): Array<[string, string]> {
  const words = [...units].map(([unit, weight]) => ({ symbols: [...unit], weight }));
  const merges: Array<[string, string]> = [];
  while (merges.length < maxMerges) {
    const counts = new Map<string, number>();
    for (const { symbols, weight } of words) {
      for (let i = 0; i + 1 < symbols.length; i++) {
        const pair = `${symbols[i]} ${symbols[i + 1]}`;
        counts.set(pair, (counts.get(pair) ?? 0) + weight);
      }
    }
    let best: string | undefined;
    let bestCount = 0;
    for (const [pair, count] of counts) {
      if (count > bestCount || (count === bestCount && best !== undefined && pair < best)) {
        best = pair;
        bestCount = count;
      }
    }
    if (best === undefined) break;
    const space = best.indexOf(' ', 1);
    const left = best.slice(0, space);
    const right = best.slice(space + 1);
    merges.push([left, right]);
    const joined = left + right;
    for (const word of words) {
      const { symbols } = word;
      if (symbols.length < 2) continue;
      const next: string[] = [];
      for (let i = 0; i < symbols.length; i++) {
        if (i + 1 < symbols.length && symbols[i] === left && symbols[i + 1] === right) {
          next.push(joined);
          i++;
        } else {
          next.push(symbols[i]!);
        }
      }
      word.symbols = next;
    }
  }
  return merges;
}

/**
 * Builds the tokenizer: 256 byte symbols, then one token per learned merge, then SPECIAL_TOKEN.
 * `excludeWords` leaves words out of training (tests use it to make a vocabulary without YES).
 */
export function buildTinyTokenizer(options: { vocabSize: number; excludeWords?: string[] }): TinyTokenizer {
  const key = JSON.stringify([options.vocabSize, [...(options.excludeWords ?? [])].sort()]);
  let tokenizer = built.get(key);
  if (!tokenizer) built.set(key, (tokenizer = train(options)));
  return tokenizer;
}

/** Training takes ~0.5 s; tests build several models in one process. */
const built = new Map<string, TinyTokenizer>();

function train(options: { vocabSize: number; excludeWords?: string[] }): TinyTokenizer {
  const table = byteToUnicode();
  const vocab = new Map<string, number>();
  for (let b = 0; b < 256; b++) vocab.set(table[b]!, b);
  const merges = learnMerges(trainingUnits(new Set(options.excludeWords ?? [])), options.vocabSize - 256 - 1);
  for (const [left, right] of merges) {
    const token = left + right;
    if (!vocab.has(token)) vocab.set(token, vocab.size);
  }
  const padTokenId = vocab.size;
  const byteLevel = { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true };
  const json = {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: [
      { id: padTokenId, content: SPECIAL_TOKEN, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true },
    ],
    normalizer: null,
    pre_tokenizer: byteLevel,
    post_processor: { ...byteLevel, trim_offsets: false },
    decoder: byteLevel,
    model: {
      type: 'BPE',
      dropout: null,
      unk_token: null,
      continuing_subword_prefix: null,
      end_of_word_suffix: null,
      fuse_unk: false,
      byte_fallback: false,
      ignore_merges: false,
      vocab: Object.fromEntries(vocab),
      merges,
    },
  };
  return { json: `${JSON.stringify(json)}\n`, vocab, merges, vocabSize: padTokenId + 1, padTokenId };
}
