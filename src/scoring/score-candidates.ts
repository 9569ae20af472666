/**
 * Scores an instance's candidates: serialize each under the token budget (shared prefix first,
 * in the same order for every candidate so a prefix-caching server computes it once), then one
 * scorer call for all. A candidate whose serialization or scoring fails gets no Score and an
 * error instead; the others are still scored. Without the model's tokenizer the budget is an
 * estimate, so candidates are fitted a margin under it, and one the server still refuses as too
 * long is cut again, to the count the server reported, and sent once more.
 */
import { availableParallelism } from 'node:os';
import { throwIfAborted, toWinnowerError, type WinnowerError } from '../errors.js';
import { mapLimited } from '../util/map-limited.js';
import type { Score, Task, Trajectory } from '../types/index.js';
import type { Scorer, ScoreInput } from './types.js';
import type { ValueModel } from './value-model.js';
import { scoreKey, serializeTrajectory } from '../serialize/index.js';

export interface ScoreCandidatesOptions {
  /** Template when any candidate of the instance has messages. */
  template?: string;
  /** Template when none has (patch-only candidates, e.g. SWE-bench prediction files). */
  patchTemplate?: string;
  /** Token budget; defaults to the scorer's limit. */
  budgetTokens?: number;
  /**
   * Stops the work: no candidate starts serializing after it fires, the serializer stops between
   * its encodes, and a scorer call still queued leaves the queue (the call rejects WNW_ERR_OP_ABORTED).
   */
  signal?: AbortSignal;
  /** Candidates serialized at once (default: the cores); more only queue on the tokenizer's threads. */
  serializeConcurrency?: number;
}

export interface CandidateScore {
  trajectory_id: string;
  score?: Score;
  error?: WinnowerError;
}

export const DEFAULT_TEMPLATE = 'judge-v1';

/**
 * Share of the budget left free when tokens are estimated (no tokenizer on the client): the
 * estimate was off by −3.5% to +6.5% against vLLM's own count (docs/design/06-value-model-servers.md#8).
 */
export const ESTIMATE_MARGIN = 0.08;
export const DEFAULT_PATCH_TEMPLATE = 'patch-v1';

/** The template of an instance whose candidates have messages (any of them), or are patches only. */
export function templateFor(hasMessages: boolean, options: Pick<ScoreCandidatesOptions, 'template' | 'patchTemplate'>): string {
  return hasMessages ? (options.template ?? DEFAULT_TEMPLATE) : (options.patchTemplate ?? options.template ?? DEFAULT_PATCH_TEMPLATE);
}

/** The budget asked for (the scorer's limit when none is), never above that limit. */
export function budgetFor(scorer: Pick<Scorer, 'maxInputTokens'>, budget: number | undefined): number {
  return Math.min(budget ?? scorer.maxInputTokens, scorer.maxInputTokens);
}

/** The budget a candidate is fitted to: the budget itself when counted exactly, else less the estimate's margin. */
export function fitBudgetFor(scorer: Pick<Scorer, 'tokenizer'>, budgetTokens: number): number {
  return scorer.tokenizer ? budgetTokens : Math.max(1, Math.floor(budgetTokens * (1 - ESTIMATE_MARGIN)));
}

/**
 * A tighter budget for a candidate the server refused as too long: its own count scaled by the
 * server's limit over the tokens the server counted (vLLM: "maximum context length is L tokens.
 * However, you requested R tokens"; SGLang: "The input (R tokens) is longer than the model's
 * context length (L tokens)"), 2% under that; 80% of it when the message says neither.
 */
export function tighterBudget(tokens: number, error: WinnowerError): number {
  const text = `${error.message} ${String((error.details as { body?: unknown }).body ?? '')}`;
  const vllm = /maximum context length is (\d+) tokens[^]*?requested (\d+) tokens/.exec(text);
  const sglang = /input \((\d+) tokens\) is longer than the model's context length \((\d+) tokens\)/i.exec(text);
  const [limit, requested] = vllm ? [Number(vllm[1]), Number(vllm[2])] : sglang ? [Number(sglang[2]), Number(sglang[1])] : [0, 0];
  const scaled = limit > 0 && requested > limit ? Math.floor(((tokens * limit) / requested) * 0.98) : Math.floor(tokens * 0.8);
  return Math.max(1, Math.min(scaled, tokens - 1));
}

/** What scoring needs of a value model: its scorer, and its own templates when it has them. */
export type ScoringModel = Pick<ValueModel, 'scorer' | 'template' | 'chatTemplate'>;

export async function scoreCandidates(
  model: ScoringModel,
  task: Task,
  trajectories: Trajectory[],
  options: ScoreCandidatesOptions = {},
): Promise<CandidateScore[]> {
  const { scorer } = model;
  const budgetTokens = fitBudgetFor(scorer, budgetFor(scorer, options.budgetTokens));
  // One template for the whole instance, so every candidate shares the same prefix. A model's own
  // template (model.template, e.g. the critic's) reads trajectories: patch-only instances keep the patch template.
  const hasMessages = trajectories.some((trajectory) => trajectory.messages.length > 0);
  const template = templateFor(hasMessages, { ...options, template: options.template ?? (hasMessages ? model.template : undefined) });
  const { signal } = options;
  // A few at a time, so that a request given up on (its client gone) stops costing CPU between candidates.
  const serialized = await mapLimited(trajectories, options.serializeConcurrency ?? availableParallelism(), async (trajectory) => {
    throwIfAborted(signal);
    try {
      return await serializeTrajectory(task, trajectory, {
        template,
        budgetTokens,
        tokenizer: scorer.tokenizer,
        chatTemplate: model.chatTemplate,
        signal,
      });
    } catch (error) {
      if (signal?.aborted) throw error;
      return toWinnowerError(error, 'WNW_ERR_SCORE_TEMPLATE');
    }
  });
  const ready = serialized.flatMap((item, index) => ('text' in item ? [{ index, item }] : []));
  const inputs: ScoreInput[] = ready.map(({ item }) => ({ key: scoreKey(scorer.model, item), text: item.text, inputIds: item.inputIds }));

  let outputs: Awaited<ReturnType<Scorer['score']>> | undefined;
  let scoreError: WinnowerError | undefined;
  if (inputs.length > 0) {
    try {
      outputs = await scorer.score(inputs, { signal });
    } catch (error) {
      if (signal?.aborted) throw error;
      scoreError = toWinnowerError(error, 'WNW_ERR_SCORE_UPSTREAM');
    }
  }
  // Refused as too long (an estimate that fell short, a server limit below the budget): cut again, once.
  const refused = ready.flatMap(({ index, item }, position) =>
    outputs?.[position]?.error?.code === 'WNW_ERR_SCORE_TOO_LONG' ? [{ index, item, position }] : [],
  );
  if (refused.length > 0) {
    const retried = await Promise.all(
      refused.map(async ({ item, index, position }) => {
        try {
          const tighter = tighterBudget(item.inputTokens, outputs![position]!.error!);
          return await serializeTrajectory(task, trajectories[index]!, {
            template,
            budgetTokens: tighter,
            tokenizer: scorer.tokenizer,
            chatTemplate: model.chatTemplate,
            signal,
          });
        } catch {
          return undefined; // cannot be cut that far: the server's refusal stands
        }
      }),
    );
    const again = refused.flatMap((entry, position) => (retried[position] ? [{ ...entry, item: retried[position] }] : []));
    if (again.length > 0) {
      try {
        const second = await scorer.score(
          again.map(({ item }) => ({ key: scoreKey(scorer.model, item), text: item.text, inputIds: item.inputIds })),
          { signal },
        );
        again.forEach((entry, position) => {
          const output = second[position];
          if (!output || output.error) return;
          outputs![entry.position] = output;
          ready[entry.position] = { index: entry.index, item: entry.item };
        });
      } catch {
        // the first refusal, with its reason, stays the answer for these candidates
      }
    }
  }

  const results: CandidateScore[] = trajectories.map((trajectory, index) => {
    const item = serialized[index]!;
    return 'text' in item ? { trajectory_id: trajectory.id, error: scoreError } : { trajectory_id: trajectory.id, error: item };
  });
  ready.forEach(({ index, item }, position) => {
    const output = outputs?.[position];
    if (!output) return;
    const trajectory = trajectories[index]!;
    if (output.error) {
      // Refused alone (too long for the server): this candidate is unscored, its siblings are not.
      results[index] = { trajectory_id: trajectory.id, error: output.error };
      return;
    }
    results[index] = {
      trajectory_id: trajectory.id,
      score: {
        trajectory_id: trajectory.id,
        instance_id: trajectory.instance_id,
        value: output.value,
        raw: output.raw,
        backend: scorer.backend,
        model: scorer.model,
        template: item.template,
        input_tokens: item.inputTokens,
        truncated: item.truncated,
        cut: item.cut,
        cached: output.cached ?? false,
      },
    };
  });
  return results;
}
