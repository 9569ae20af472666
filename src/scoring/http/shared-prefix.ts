/**
 * Splits a batch into query + items requests (SGLang multi-item `/v1/score`, vLLM `/score`): runs of
 * consecutive inputs that share a long prefix (an instance's candidates: system prompt, tools,
 * issue) become one request whose query is that prefix, sent once, and whose items are what
 * differs. With token ids the split is exact: query + item is the very id sequence the input had.
 * Text is split only after a newline, so the server's tokenizer sees the same boundary either way.
 */
import { commonPrefixLength } from '../../util/common-prefix.js';
import type { ScoreInput } from '../types.js';

export interface PrefixGroup {
  inputs: ScoreInput[];
  /** The shared prefix: ids when every input has ids, else text. */
  query: number[] | string;
  /** Each input without the prefix, in order. */
  items: Array<number[] | string>;
}

export interface GroupOptions {
  /** Shortest prefix (tokens, or characters / 4 for text) worth sending once; shorter runs go alone. */
  minSharedTokens: number;
  /** Most items per request. */
  maxItems: number;
}

/** Length of the prefix shared by `inputs` (ids, or text cut back to just after a newline). */
function sharedLength(inputs: readonly ScoreInput[], ids: boolean): number {
  const first = inputs[0]!;
  let shared = ids ? first.inputIds!.length : first.text.length;
  for (const input of inputs.slice(1)) {
    shared = Math.min(shared, ids ? commonPrefixLength(first.inputIds!, input.inputIds!) : commonPrefixLength(first.text, input.text));
  }
  if (ids) return shared;
  const newline = first.text.lastIndexOf('\n', shared - 1);
  return newline < 0 ? 0 : newline + 1;
}

const sizeOf = (length: number, ids: boolean) => (ids ? length : Math.floor(length / 4));

function toGroup(inputs: ScoreInput[], ids: boolean, length: number): PrefixGroup {
  return ids
    ? { inputs, query: inputs[0]!.inputIds!.slice(0, length), items: inputs.map((input) => input.inputIds!.slice(length)) }
    : { inputs, query: inputs[0]!.text.slice(0, length), items: inputs.map((input) => input.text.slice(length)) };
}

/**
 * Greedy runs of consecutive inputs whose common prefix stays at least `minSharedTokens` long. An
 * input that shares too little with its neighbours is a group of its own: the whole input as the
 * query and one empty item.
 */
export function groupBySharedPrefix(inputs: readonly ScoreInput[], options: GroupOptions): PrefixGroup[] {
  const ids = inputs.every((input) => input.inputIds);
  const groups: PrefixGroup[] = [];
  let run: ScoreInput[] = [];
  let runShared = 0;
  const flush = () => {
    if (run.length === 0) return;
    groups.push(toGroup(run, ids, run.length === 1 ? (ids ? run[0]!.inputIds!.length : run[0]!.text.length) : runShared));
    run = [];
  };
  for (const input of inputs) {
    if (run.length === 0) {
      run = [input];
      continue;
    }
    const shared = sharedLength([...run, input], ids);
    if (run.length < options.maxItems && sizeOf(shared, ids) >= options.minSharedTokens) {
      run.push(input);
      runShared = shared;
    } else {
      flush();
      run = [input];
    }
  }
  flush();
  return groups;
}
