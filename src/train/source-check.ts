/**
 * The source-check stage of `winnower train`: how the selectors do on agents training never saw.
 * A split by source is that check already; otherwise leave-one-source-out (source-holdout.ts)
 * rotates over every source family with a mixed held-out pool, unless `sourceCheck` is `none`.
 */
import type { LabelledCandidate } from './dataset.js';
import { evaluateAll, type EvaluateOptions, evaluateScope, type ScopeTable } from './evaluate.js';
import type { FitSideOptions } from './fit-side.js';
import type { SplitVerdict } from './model-card.js';
import { hasTrajectory, type TableOptions, verdict } from './selector-tables.js';
import { evaluateHeldOutSources, type HeldOutFold } from './source-holdout.js';
import { matchesSource, rotatingSources } from './split.js';
import type { TrainSplit } from './train-split.js';

export interface SourceCheck {
  /** Leave-one-source-out's tables, listed after the validation tables (none when the split is by source). */
  tables: ScopeTable[];
  /** Leave-one-source-out's verdict (a split by source has its own verdict, the split's). */
  verdict?: SplitVerdict;
  /** The table the check reads: the fitted trajectory weights are judged on it. */
  table?: ScopeTable;
  /** Whether the check validated on any candidate with a trajectory (else it says nothing about trajectory weights). */
  withTrajectories: boolean;
}

export interface SourceCheckInput {
  sourceCheck: 'loso' | 'none' | undefined;
  fit: FitSideOptions;
  tables: TableOptions;
  log: (line: string) => void;
}

/** `validationTables` are the split's own; with a split by source, the first of them is the check. */
export async function checkHeldOutSources(
  candidates: LabelledCandidate[],
  split: TrainSplit,
  validationTables: ScopeTable[],
  input: SourceCheckInput,
): Promise<SourceCheck> {
  if (split.bySource) return { tables: [], table: validationTables[0], withTrajectories: split.validation.some(hasTrajectory) };
  if ((input.sourceCheck ?? 'loso') !== 'loso') return { tables: [], withTrajectories: false };
  const families = rotatingSources(candidates);
  if (families.length === 0) {
    // Nothing to rotate over: say why instead of "over 0 source families: " (issue 27 item 25).
    input.log('leave-one-source-out: skipped, no source family has a held-out pool with both a resolved and an unresolved candidate');
  } else {
    input.log(`leave-one-source-out over ${families.length} source famil${families.length === 1 ? 'y' : 'ies'}: ${families.join(', ')}`);
  }
  const withTrajectories = candidates.some((c) => hasTrajectory(c) && matchesSource(c.trajectory.source, families));
  const heldOut = await evaluateHeldOutSources(
    candidates,
    families.map((f) => [f]),
    input.fit,
  );
  const tables = heldOutTables(heldOut, input.tables(false));
  const first = tables[0];
  return {
    tables,
    ...(first ? { verdict: verdict(first.scope.replace(/: all$/, ''), first, true) } : {}),
    table: first,
    withTrajectories,
  };
}

/** Leave-one-source-out tables: all folds' pools together (all, mixed-label), then each fold. */
function heldOutTables(folds: HeldOutFold[], options: EvaluateOptions): ScopeTable[] {
  if (folds.length === 0) return [];
  const pooled = folds.flatMap((fold) => fold.pools);
  const name = `leave-one-source-out (${folds.length} folds; a pool counts once per fold that holds it out)`;
  return [
    ...evaluateAll(pooled, options, `${name}: `).slice(0, 2),
    ...folds.map((fold) => evaluateScope(`held out ${fold.holdout.join(',')}: all`, fold.pools, options)),
  ];
}
