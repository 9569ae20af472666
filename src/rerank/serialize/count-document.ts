/**
 * Token counts of every piece of a document (and of its cut variants) from one batched encode
 * call, or estimated from characters when there is no tokenizer. The final text is counted
 * once more, exactly, by `countFinal`.
 */
import type { Tokenizer } from '../tokenizer.js';
import type { StepCounts } from './fit-budget.js';
import type { SerializationDocument } from './serialize-document.js';
import { maxOf } from '../../util/large-arrays.js';

export interface FinalCount {
  ids?: number[];
  tokens: number;
}

export interface TokenCounter {
  readonly estimated: boolean;
  /** Tokens of each text and, when given, ids of `whole` too, all in one call. */
  count(texts: string[], whole?: string): Promise<{ tokens: number[]; whole?: FinalCount }>;
  /** Tokens (and ids, when counted) of the final text. */
  countFinal(text: string): Promise<FinalCount>;
}

export function tokenizerCounter(tokenizer: Tokenizer): TokenCounter {
  return {
    estimated: false,
    async count(texts, whole) {
      // Pieces need counts only: their ids stay native. The whole text's ids are what gets sent.
      const unique = [...new Set(texts.filter((text) => text !== ''))];
      const [counts, wholeIds] = await Promise.all([
        tokenizer.countTokens(unique),
        whole === undefined ? undefined : tokenizer.encode([whole]).then(([ids = []]) => ids),
      ]);
      const tokens = new Map(unique.map((text, index) => [text, counts[index]!]));
      return { tokens: texts.map((text) => tokens.get(text) ?? 0), ...(wholeIds === undefined ? {} : { whole: { ids: wholeIds, tokens: wholeIds.length } }) };
    },
    async countFinal(text) {
      const [ids = []] = await tokenizer.encode([text]);
      return { ids, tokens: ids.length };
    },
  };
}

/** ~`charsPerToken` characters per token, rounded up per piece (so a sum never undercounts the whole). */
export function estimateCounter(charsPerToken: number): TokenCounter {
  const estimate = (text: string): number => Math.ceil(text.length / charsPerToken);
  return {
    estimated: true,
    count: async (texts, whole) => ({ tokens: texts.map(estimate), ...(whole === undefined ? {} : { whole: { tokens: estimate(whole) } }) }),
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
}

/** Counts every piece of the document and its cut variants in one call. */
export async function countDocument(document: SerializationDocument, counter: TokenCounter): Promise<DocumentCounts> {
  const texts: string[] = [];
  const add = (text: string): number => texts.push(text) - 1;
  const { render, steps } = document;
  const longest = maxOf(steps.map((step) => step.step.action.length), Math.max(document.problemStatement.length, document.patchText.length, 1));
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
      observations: step.observations.map((observation) => ({ full: add(observation.full), cut: observation.cut === undefined ? undefined : add(observation.cut) })),
    })),
  };
  const { tokens } = await counter.count(texts);
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
      observations: step.observations.map((observation) => ({ full: of(observation.full), ...(observation.cut === undefined ? {} : { cut: of(observation.cut) }) })),
    })),
    tokensBefore: 0,
  };
  counts.tokensBefore =
    counts.system + counts.instance + counts.noSteps + counts.patch + counts.question +
    counts.steps.reduce((sum, step) => sum + step.full + step.observations.reduce((inner, observation) => inner + observation.full, 0), 0);
  return counts;
}
