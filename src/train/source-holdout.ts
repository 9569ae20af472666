/**
 * Source-held-out evaluation: for each set of held-out sources, fit on the pools that none of them
 * touched (`splitBySource`) and evaluate on theirs, so a selector is measured on agents it never
 * saw. Leave-one-source-out rotates over every source family with a mixed held-out pool
 * (`rotatingSources`). Values come from the fitted parameters in TypeScript, which the exported
 * ONNX graph reproduces to float precision (train's export check).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { groupBy } from '../util/group-by.js';
import type { LabelledCandidate } from './dataset.js';
import { evalPool } from './eval-pools.js';
import type { EvalPool } from './evaluate.js';
import { fitSide, offlineScore, type FitSideOptions } from './fit-side.js';
import { splitBySource } from './split.js';

export interface HeldOutFold {
  /** The held-out source names (or families). */
  holdout: string[];
  trainCandidates: number;
  validationCandidates: number;
  pools: EvalPool[];
}

const mixed = (members: LabelledCandidate[]) => members.some((c) => c.resolved) && members.some((c) => !c.resolved);

/** One fold per entry of `holdouts`; a fold with nothing to train on or no mixed pool is skipped (logged). */
export async function evaluateHeldOutSources(
  candidates: LabelledCandidate[],
  holdouts: string[][],
  options: FitSideOptions,
): Promise<HeldOutFold[]> {
  const root = await mkdtemp(join(tmpdir(), 'winnower-sources-'));
  const folds: HeldOutFold[] = [];
  try {
    for (const [k, holdout] of holdouts.entries()) {
      options.signal?.throwIfAborted();
      const { train, validation } = splitBySource(candidates, holdout, options.seed);
      const groups = [...groupBy(validation, (c) => c.pool).values()];
      if (train.length === 0 || !groups.some(mixed)) {
        options.log(
          `held out ${holdout.join(',')}: skipped (${train.length === 0 ? 'nothing left to train on' : 'no held-out pool with both outcomes'})`,
        );
        continue;
      }
      options.log(`held out ${holdout.join(',')}: ${train.length} train, ${validation.length} validation candidates`);
      const fitted = await fitSide(train, join(root, String(k)), { ...options, log: (line) => options.log(`  ${line}`) });
      const bags = await fitted.bags(validation);
      const scoreOf = new Map(
        validation.map((c, i) => {
          const { value, raw } = fitted.value(bags[i]!);
          return [c, offlineScore(c, value, raw)];
        }),
      );
      folds.push({
        holdout,
        trainCandidates: train.length,
        validationCandidates: validation.length,
        pools: groups.map((members) =>
          evalPool(
            members,
            members.map((c) => scoreOf.get(c)),
            fitted.selector,
          ),
        ),
      });
    }
  } finally {
    await rm(root, { recursive: true, force: true });
  }
  return folds;
}
