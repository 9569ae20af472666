/**
 * Token counts of every piece of a document (and of its cut variants) from one batched encode
 * call, or estimated from characters when there is no tokenizer. The final text is counted
 * once more, exactly, by `countFinal`. A piece longer than the counter's bound is counted on its
 * head + tail first: when those alone are over the budget, the piece cannot fit and only its size
 * matters (extrapolated from the sample), so a 2 MB patch is never tokenized whole.
 */
import type { Tokenizer } from './tokenizer.js';
import type { StepCounts } from './fit-budget.js';
import type { SerializationDocument } from './serialize-document.js';
import { maxOf } from '../util/large-arrays.js';

export interface FinalCount {
  ids?: number[];
  tokens: number;
}

export interface TokenCounter {
  readonly estimated: boolean;
  /**
   * Tokens of each text and, when given, ids of `whole` too, all in one call. `sampled`: some
   * text was over the bound, its count extrapolated from a sample (always over the budget).
   */
  count(texts: string[], whole?: string): Promise<{ tokens: number[]; whole?: FinalCount; sampled?: boolean }>;
  /** Tokens (and ids, when counted) of the final text. */
  countFinal(text: string): Promise<FinalCount>;
}

/** Where counting a piece whole stops paying: the budget, and the characters counted exactly. */
export interface CountBound {
  /** Tokens the whole text may have. */
  budget: number;
  /** A text longer than this is counted on a sample of this many characters (head + tail) first. */
  chars: number;
}

/**
 * Tokens the sample must exceed the budget by to prove the text over it: cutting a text splits a
 * pre-token at each cut, so a sample can count a few tokens more than it holds within the text.
 */
export const SAMPLE_MARGIN = 16;

export function tokenizerCounter(tokenizer: Tokenizer, bound?: CountBound): TokenCounter {
  return {
    estimated: false,
    async count(texts, whole) {
      // Pieces need counts only: their ids stay native. The whole text's ids are what gets sent.
      const unique = [...new Set(texts.filter((text) => text !== ''))];
      const [counted, wholeIds] = await Promise.all([
        bound === undefined
          ? tokenizer.countTokens(unique).then((counts) => ({ counts, sampled: false }))
          : countBounded(tokenizer, unique, bound),
        whole === undefined ? undefined : tokenizer.encode([whole]).then(([ids = []]) => ids),
      ]);
      const tokens = new Map(unique.map((text, index) => [text, counted.counts[index]!]));
      return {
        tokens: texts.map((text) => tokens.get(text) ?? 0),
        ...(wholeIds === undefined ? {} : { whole: { ids: wholeIds, tokens: wholeIds.length } }),
        ...(counted.sampled ? { sampled: true } : {}),
      };
    },
    async countFinal(text) {
      const [ids = []] = await tokenizer.encode([text]);
      return { ids, tokens: ids.length };
    },
  };
}

/**
 * Counts texts up to `bound.chars` whole (one batched call, as without a bound); a longer text is
 * counted on its first and last `bound.chars / 2` characters. A sample over the budget (by
 * SAMPLE_MARGIN) proves the text over it too, and its count is extrapolated from the sample's
 * tokens per character (never below the budget + margin + 1); a sample within the budget (dense
 * text: long runs of spaces or symbols) is redone four times larger, until the text is counted
 * whole. So a text that can fit is always counted exactly, and no call sees much more text than
 * the budget can take.
 */
async function countBounded(tokenizer: Tokenizer, texts: string[], bound: CountBound): Promise<{ counts: number[]; sampled: boolean }> {
  const counts: number[] = texts.map(() => 0);
  let sampled = false;
  let pending = texts.map((_text, index) => index);
  for (let chars = Math.max(2, Math.floor(bound.chars)); pending.length > 0; chars *= 4) {
    const batch: string[] = [];
    const planned = pending.map((index) => {
      const text = texts[index]!;
      const at = batch.length;
      if (text.length <= chars) batch.push(text);
      else batch.push(...headAndTail(text, Math.floor(chars / 2)));
      return { index, at, whole: text.length <= chars, sampleChars: batch.slice(at).reduce((sum, part) => sum + part.length, 0) };
    });
    const got = await tokenizer.countTokens(batch);
    const next: number[] = [];
    for (const { index, at, whole, sampleChars } of planned) {
      if (whole) {
        counts[index] = got[at]!;
        continue;
      }
      const tokens = got[at]! + got[at + 1]!;
      if (tokens <= bound.budget + SAMPLE_MARGIN) {
        next.push(index);
        continue;
      }
      const length = texts[index]!.length;
      counts[index] = Math.max(bound.budget + SAMPLE_MARGIN + 1, Math.ceil((tokens * length) / Math.max(1, sampleChars)));
      sampled = true;
    }
    pending = next;
  }
  return { counts, sampled };
}

/** The first and last `half` characters of `text`, never splitting a surrogate pair. */
function headAndTail(text: string, half: number): [string, string] {
  let headEnd = half;
  if (isHighSurrogate(text.charCodeAt(headEnd - 1))) headEnd -= 1;
  let tailStart = text.length - half;
  if (isHighSurrogate(text.charCodeAt(tailStart - 1))) tailStart += 1;
  return [text.slice(0, headEnd), text.slice(tailStart)];
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

/** ~`charsPerToken` characters per token, rounded up per piece (so a sum never undercounts the whole). */
export function estimateCounter(charsPerToken: number): TokenCounter {
  const estimate = (text: string): number => Math.ceil(text.length / charsPerToken);
  return {
    estimated: true,
    count: async (texts, whole) => ({
      tokens: texts.map(estimate),
      ...(whole === undefined ? {} : { whole: { tokens: estimate(whole) } }),
    }),
    countFinal: async (text) => ({ tokens: estimate(text) }),
  };
}

export interface DocumentCounts {
  system: number;
  instance: number;
  /** The instance piece without the issue (its template text). */
  instanceWrapper: number;
  question: number;
  patch: number;
  patchWrapper: number;
  observationWrapper: number;
  noSteps: number;
  /** Upper bound for the dropped-steps marker. */
  stepsMarker: number;
  /** Upper bound for the head/tail marker of issue, patch or action. */
  textMarker: number;
  steps: StepCounts[];
  /** Tokens of the whole document before any cut (the sum of pieces, unless the caller knows better). */
  tokensBefore: number;
  /** Some piece was over the counter's bound: its count is extrapolated, and the document cannot fit uncut. */
  sampled: boolean;
}

/** Counts every piece of the document and its cut variants in one call. */
export async function countDocument(document: SerializationDocument, counter: TokenCounter): Promise<DocumentCounts> {
  const texts: string[] = [];
  const add = (text: string): number => texts.push(text) - 1;
  const { render, steps } = document;
  const longest = maxOf(
    steps.map((step) => step.step.action.length),
    Math.max(document.problemStatement.length, document.patchText.length, 1),
  );
  const nines = Number('9'.repeat(String(longest).length));
  const at = {
    system: add(document.system),
    instance: add(document.instance),
    instanceWrapper: add(render.instance('')),
    question: add(document.question),
    patch: add(document.patch),
    patchWrapper: add(render.patch('x')),
    observationWrapper: steps.length > 0 ? add(render.observation(steps.length, 'x')) : add(''),
    noSteps: add(document.noSteps),
    stepsMarker: steps.length > 0 ? add(render.stepsMarker(steps.length, steps.length, steps.length)) : add(''),
    textMarker: add(render.textMarker({ chars: nines, lines: nines })),
    steps: steps.map((step) => ({
      full: add(step.full),
      elided: add(step.elided),
      observations: step.observations.map((observation) => ({
        full: add(observation.full),
        cut: observation.cut === undefined ? undefined : add(observation.cut),
      })),
    })),
  };
  const { tokens, sampled = false } = await counter.count(texts);
  const of = (index: number): number => tokens[index]!;
  const counts: DocumentCounts = {
    system: of(at.system),
    instance: of(at.instance),
    instanceWrapper: of(at.instanceWrapper),
    question: of(at.question),
    patch: of(at.patch),
    patchWrapper: Math.max(0, of(at.patchWrapper) - 1),
    observationWrapper: Math.max(0, of(at.observationWrapper) - 1),
    noSteps: of(at.noSteps),
    stepsMarker: of(at.stepsMarker),
    textMarker: of(at.textMarker),
    steps: at.steps.map((step) => ({
      full: of(step.full),
      elided: of(step.elided),
      observations: step.observations.map((observation) => ({
        full: of(observation.full),
        ...(observation.cut === undefined ? {} : { cut: of(observation.cut) }),
      })),
    })),
    tokensBefore: 0,
    sampled,
  };
  counts.tokensBefore =
    counts.system +
    counts.instance +
    counts.noSteps +
    counts.patch +
    counts.question +
    counts.steps.reduce((sum, step) => sum + step.full + step.observations.reduce((inner, observation) => inner + observation.full, 0), 0);
  return counts;
}
