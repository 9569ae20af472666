/**
 * What every evaluation table of `winnower train` compares, and the verdict read off a split's
 * "all" table: do the learned selector and the robust default reach the best trivial selector.
 */
import { LEARNED, LEARNED_FIXED, ROBUST, ROBUST_FIXED, TRAINED, UNTRAINED } from './eval-pools.js';
import { beatsTrivial, bestTrivial, type EvaluateOptions, type ScopeTable, TRIVIAL_SELECTORS } from './evaluate.js';
import type { SplitVerdict } from './model-card.js';

/** The table options for a table with or without the untrained baseline. */
export type TableOptions = (baseline: boolean) => EvaluateOptions;

export const hasTrajectory = (candidate: { trajectory: { messages: unknown[] } }): boolean => candidate.trajectory.messages.length > 0;

export function tableOptions(input: { trajectories: boolean; bootstrap: number | undefined; seed: number }): TableOptions {
  return (baseline) => ({
    selectors: [
      ...TRIVIAL_SELECTORS,
      ...(baseline ? [UNTRAINED] : []),
      TRAINED,
      LEARNED,
      ROBUST,
      // With trajectories in the data, each strategy is also shown with its fixed trajectory priors: the check on the fitted weights.
      ...(input.trajectories ? [LEARNED_FIXED, ROBUST_FIXED] : []),
    ],
    probabilistic: [TRAINED, ...(baseline ? [UNTRAINED] : [])],
    bootstrap: input.bootstrap,
    seed: input.seed,
  });
}

/** Whether the learned selector and the robust default reach the best trivial selector on one split's "all" table. */
export function verdict(split: string, table: ScopeTable, sourceHeldOut: boolean): SplitVerdict {
  const selected = (name: string) => table.rows.find((r) => r.selector === name)?.selected_at_1.value ?? null;
  const best = bestTrivial(table);
  return {
    split,
    source_held_out: sourceHeldOut,
    pools: table.pools,
    best_trivial: best ? best.selector : 'none',
    best_trivial_selected: best?.selected_at_1.value ?? null,
    learned_selected: selected(LEARNED),
    robust_selected: selected(ROBUST),
    learned_beats_trivial: beatsTrivial(table, LEARNED),
    robust_reaches_trivial: beatsTrivial(table, ROBUST, false),
  };
}
