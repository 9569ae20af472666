/**
 * The async pre-pass before selection: finds what the strategy leaves tied (src/select
 * `judgeTies`), asks the judge about those pairs, each in both orders, and hands the synchronous
 * ranking its verdicts. A judge that fails (an error, a timeout, an unusable answer) never fails
 * the selection: the pass stops at its first failure and selection goes on without any verdict,
 * the report saying why. Only the caller's own cancellation is thrown.
 */
import pLimit from 'p-limit';
import { toWinnowerError } from '../errors.js';
import { judgeTies, type Candidate, type JudgeScores, type SelectOptions } from '../select/index.js';
import type { JudgeReport, Strategy } from '../types/index.js';
import { createJudge, type Judge } from './judge-client.js';
import type { JudgeOptions } from './judge-options.js';
import { circulantPairs } from './tournament.js';

export interface JudgePassInput {
  strategy: Strategy;
  candidates: Candidate[];
  /** The issue shown to the judge. */
  issue: string;
  /** What `select` will be given (instance id, selector, ...), without `judge`. */
  options?: SelectOptions;
  /** Opponents per candidate (tournament.ts). */
  k: number;
  /** Judge calls at once (default 4). */
  concurrency?: number;
  signal?: AbortSignal;
}

export interface JudgePassResult {
  /** The verdicts for `select` (options.judge), or undefined when the judge failed or compared nothing. */
  scores: JudgeScores | undefined;
  /** Why there are no verdicts, for `select` (options.judgeUnavailable). */
  unavailable: string | undefined;
  report: JudgeReport;
}

/** Runs the judge for one selection; see the module comment. */
export async function judgePass(judge: Judge, input: JudgePassInput): Promise<JudgePassResult> {
  const options = input.options ?? {};
  const before = judgeTies(input.strategy, input.candidates, options);
  // `judge` ranks every usable candidate by the judge; `hybrid` asks only about its ties.
  const groups = input.strategy === 'judge' ? (before.order.length > 1 ? [before.order] : []) : before.groups;
  const pairs = groups.flatMap((group) => circulantPairs(group, input.k));
  const patchOf = new Map(input.candidates.map((candidate) => [candidate.trajectory.id, candidate.trajectory.patch]));

  const usage = { comparisons: 0, pairs: 0, prompt_tokens: 0, completion_tokens: 0 };
  const stop = new AbortController();
  const signal = input.signal ? AbortSignal.any([input.signal, stop.signal]) : stop.signal;
  const limit = pLimit(input.concurrency ?? 4);
  let failure: { code: string; message: string } | null = null;

  const ask = async (a: string, b: string): Promise<number | undefined> => {
    if (signal.aborted) return undefined;
    try {
      const verdict = await judge.compare({ issue: input.issue, a: patchOf.get(a)!, b: patchOf.get(b)! }, signal);
      usage.comparisons += 1;
      usage.prompt_tokens += verdict.promptTokens;
      usage.completion_tokens += verdict.completionTokens;
      return verdict.preference;
    } catch (error) {
      if (input.signal?.aborted) throw input.signal.reason;
      if (failure === null && !stop.signal.aborted) {
        const coded = toWinnowerError(error);
        failure = { code: coded.code, message: coded.message };
        stop.abort(coded);
      }
      return undefined;
    }
  };

  const verdicts = await Promise.all(
    pairs.map(([a, b]) =>
      limit(async () => {
        // Both orders, so that a judge that favours the first (or second) patch shown favours neither.
        const [forward, backward] = await Promise.all([ask(a, b), ask(b, a)]);
        if (forward === undefined || backward === undefined) return undefined;
        usage.pairs += 1;
        return { a, b, preferA: (forward + (1 - backward)) / 2 };
      }),
    ),
  );
  input.signal?.throwIfAborted();

  let scores: JudgeScores | undefined;
  if (failure === null && pairs.length > 0) {
    const byId = new Map<string, { wins: number; games: number }>();
    const add = (id: string, wins: number) => {
      const entry = byId.get(id) ?? { wins: 0, games: 0 };
      entry.wins += wins;
      entry.games += 1;
      byId.set(id, entry);
    };
    for (const verdict of verdicts) {
      if (!verdict) continue;
      add(verdict.a, verdict.preferA);
      add(verdict.b, 1 - verdict.preferA);
    }
    scores = { model: judge.model, byId };
  }
  const after = scores ? judgeTies(input.strategy, input.candidates, { ...options, judge: scores }) : before;
  const rate = (tied: number) => (before.usable === 0 ? 0 : tied / before.usable);
  const failed = failure as { code: string; message: string } | null;
  return {
    scores,
    unavailable: failed
      ? `the judge failed (${failed.code}: ${failed.message})`
      : pairs.length === 0
        ? 'nothing was left for the judge to compare'
        : undefined,
    report: {
      model: judge.model,
      strategy: input.strategy,
      ...usage,
      usable: before.usable,
      tied_before: before.tied,
      tied_after: after.tied,
      tie_rate_before: rate(before.tied),
      tie_rate_after: rate(after.tied),
      error: failed,
    },
  };
}

/** One selection's judge pass with a client of its own, closed after: for a request or job that names its judge. */
export async function judgeCandidates(
  options: JudgeOptions,
  strategy: Strategy,
  candidates: Candidate[],
  issue: string,
  selectOptions: SelectOptions,
  signal?: AbortSignal,
): Promise<JudgePassResult> {
  const judge = createJudge(options);
  try {
    return await judgePass(judge, { strategy, candidates, issue, options: selectOptions, k: options.k, ...(signal ? { signal } : {}) });
  } finally {
    await judge.close();
  }
}
