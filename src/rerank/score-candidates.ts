/**
 * Scores an instance's candidates: serialize each under the token budget (shared prefix first,
 * in the same order for every candidate so a prefix-caching server computes it once), then one
 * scorer call for all. A candidate whose serialization or scoring fails gets no Score and an
 * error instead; the others are still scored.
 */
import { toWinnowerError, type WinnowerError } from '../errors.js';
import type { Score, Task, Trajectory } from '../types/index.js';
import type { Scorer, ScoreInput } from './scorers/types.js';
import { scoreKey, serializeTrajectory } from './serialize/index.js';

export interface ScoreCandidatesOptions {
  /** Template when any candidate of the instance has messages. */
  template?: string;
  /** Template when none has (patch-only candidates, e.g. SWE-bench prediction files). */
  patchTemplate?: string;
  /** Token budget; defaults to the scorer's limit. */
  budgetTokens?: number;
  signal?: AbortSignal;
}

export interface CandidateScore {
  trajectory_id: string;
  score?: Score;
  error?: WinnowerError;
}

export const DEFAULT_TEMPLATE = 'judge-v1';
export const DEFAULT_PATCH_TEMPLATE = 'patch-v1';

/** The template of an instance whose candidates have messages (any of them), or are patches only. */
export function templateFor(hasMessages: boolean, options: Pick<ScoreCandidatesOptions, 'template' | 'patchTemplate'>): string {
  return hasMessages ? (options.template ?? DEFAULT_TEMPLATE) : (options.patchTemplate ?? options.template ?? DEFAULT_PATCH_TEMPLATE);
}

/** The budget asked for (the scorer's limit when none is), never above that limit. */
export function budgetFor(scorer: Pick<Scorer, 'maxInputTokens'>, budget: number | undefined): number {
  return Math.min(budget ?? scorer.maxInputTokens, scorer.maxInputTokens);
}

export async function scoreCandidates(
  scorer: Scorer,
  task: Task,
  trajectories: Trajectory[],
  options: ScoreCandidatesOptions = {},
): Promise<CandidateScore[]> {
  const budgetTokens = budgetFor(scorer, options.budgetTokens);
  // One template for the whole instance, so every candidate shares the same prefix. A model's own
  // template (scorer.template, e.g. the critic's) reads trajectories: patch-only instances keep the patch template.
  const hasMessages = trajectories.some((trajectory) => trajectory.messages.length > 0);
  const template = templateFor(hasMessages, { ...options, template: options.template ?? (hasMessages ? scorer.template : undefined) });
  const serialized = await Promise.all(
    trajectories.map(async (trajectory) => {
      try {
        return await serializeTrajectory(task, trajectory, { template, budgetTokens, tokenizer: scorer.tokenizer, chatTemplate: scorer.chatTemplate });
      } catch (error) {
        return toWinnowerError(error, 'WNW_ERR_SCORE_TEMPLATE');
      }
    }),
  );
  const ready = serialized.flatMap((item, index) => ('text' in item ? [{ index, item }] : []));
  const inputs: ScoreInput[] = ready.map(({ item }) => ({ key: scoreKey(scorer.model, item), text: item.text, inputIds: item.inputIds }));

  let outputs: Awaited<ReturnType<Scorer['score']>> | undefined;
  let scoreError: WinnowerError | undefined;
  if (inputs.length > 0) {
    try {
      outputs = await scorer.score(inputs, { signal: options.signal });
    } catch (error) {
      scoreError = toWinnowerError(error, 'WNW_ERR_SCORE_UPSTREAM');
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
