/**
 * The validate stage of `winnower train`, through the real serving path: the exported folder,
 * loaded by the onnx scorer, scores each validation pool (beside an untrained baseline folder
 * when one is given), the tables compare every selector on those pools, and the export check
 * measures how far the graph's logits are from the TypeScript model's.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { scoreCandidates } from '../scoring/score-candidates.js';
import { createOnnxScorer } from '../scoring/onnx/onnx.js';
import type { LearnedSelector } from '../select/index.js';
import { groupBy } from '../util/group-by.js';
import type { LabelledCandidate } from './dataset.js';
import { evalPool, UNTRAINED } from './eval-pools.js';
import { evaluateAll, type EvalPool, type ScopeTable } from './evaluate.js';
import type { FittedSide } from './fit-side.js';
import type { TableOptions } from './selector-tables.js';
import { predictLogit } from './value-model.js';

export interface Validation {
  /** All, mixed-label and per-benchmark tables; none without a validation side. */
  tables: ScopeTable[];
  /** Largest |ONNX logit − TypeScript logit| over the validation candidates (null: none validated). */
  exportMaxDiff: number | null;
}

export interface ValidateInput {
  outDir: string;
  baselineModel: string | null | undefined;
  budgetTokens: number;
  tables: TableOptions;
  signal?: AbortSignal;
  onProgress?: (stage: string, done: number, total: number) => void;
}

export async function validateFolder(validation: LabelledCandidate[], fitted: FittedSide, input: ValidateInput): Promise<Validation> {
  if (validation.length === 0) return { tables: [], exportMaxDiff: null };
  const { params, calibration } = fitted;
  const validationBags = await fitted.bags(validation);
  const tsRaw = new Map(validation.map((c, i) => [c, calibration.a * predictLogit(params, validationBags[i]!) + calibration.b]));
  const evaluated = await scoreValidation(validation, fitted.selector, input);
  const exportMaxDiff = Math.max(
    ...validation.map((c) => {
      const onnx = evaluated.raw.get(c);
      return onnx === undefined ? 0 : Math.abs(onnx - tsRaw.get(c)!);
    }),
  );
  return { tables: evaluateAll(evaluated.pools, input.tables(evaluated.hasBaseline)), exportMaxDiff };
}

async function scoreValidation(
  validation: LabelledCandidate[],
  selector: LearnedSelector,
  input: ValidateInput,
): Promise<{ pools: EvalPool[]; raw: Map<LabelledCandidate, number>; hasBaseline: boolean }> {
  const { outDir, baselineModel, budgetTokens, signal } = input;
  const scorer = await createOnnxScorer({ modelDir: outDir, name: 'trained' });
  const baseline =
    baselineModel && existsSync(join(baselineModel, 'model.onnx'))
      ? await createOnnxScorer({ modelDir: baselineModel, name: 'untrained' })
      : undefined;
  const raw = new Map<LabelledCandidate, number>();
  const pools: EvalPool[] = [];
  try {
    const groups = [...groupBy(validation, (c) => c.pool).values()];
    let done = 0;
    for (const members of groups) {
      signal?.throwIfAborted();
      const task = members[0]!.task;
      const trajectories = members.map((c) => c.trajectory);
      const scores = await scoreCandidates({ scorer }, task, trajectories, { budgetTokens, signal });
      const untrained = baseline ? await scoreCandidates({ scorer: baseline }, task, trajectories, { budgetTokens, signal }) : undefined;
      members.forEach((c, i) => {
        const score = scores[i]!.score;
        if (score) raw.set(c, score.raw);
      });
      pools.push(
        evalPool(
          members,
          scores.map((s) => s.score ?? undefined),
          selector,
          untrained ? { [UNTRAINED]: untrained.map((s) => s.score?.value ?? null) } : {},
        ),
      );
      input.onProgress?.('validate', ++done, groups.length);
    }
  } finally {
    await scorer.close();
    await baseline?.close();
  }
  return { pools, raw, hasBaseline: baseline !== undefined };
}
