/**
 * `winnower train` end to end, read top to bottom as its stages: load the labelled rollouts
 * (load-rows.ts) → split them (train-split.ts) → fit on the training side (fit-side.ts: learn the
 * tokenizer, cross-fit the value model, whose out-of-fold predictions calibrate it and train the
 * selector, then fit the final model) → export the model folder (export-folder.ts) → validate
 * every selector on the validation side through the real ONNX scorer (validate.ts) → check them
 * on agents training never saw (source-check.ts) → choose the folder's default strategy
 * (choose-default.ts) and write the selector and model card again with the results.
 */
import { atifUnknownWarning } from '../formats/atif/atif-warnings.js';
import { mkdir } from 'node:fs/promises';
import type { LearnedSelector } from '../select/index.js';
import { chooseDefault } from './choose-default.js';
import { formatTables, type ScopeTable } from './evaluate.js';
import { exportModel, writeSelectorAndCard } from './export-folder.js';
import { fitSide } from './fit-side.js';
import { dataSources, loadTrainingRows } from './load-rows.js';
import type { SplitVerdict } from './model-card.js';
import type { Calibration } from './onnx-export.js';
import { hasTrajectory, tableOptions, verdict } from './selector-tables.js';
import { checkHeldOutSources } from './source-check.js';
import { type TrainOptions, trainSettings } from './train-options.js';
import { splitTrainingRows } from './train-split.js';
import { validateFolder } from './validate.js';
import { PAD_ID } from './vocabulary.js';

export { TRAIN_DEFAULTS } from './defaults.js';
export type { TrainOptions } from './train-options.js';

export interface TrainResult {
  outDir: string;
  trainCandidates: number;
  validationCandidates: number;
  epochs: number;
  calibration: Calibration;
  selector: LearnedSelector;
  tables: ScopeTable[];
  table: string;
  seconds: number;
  /** Largest |ONNX logit − TypeScript logit| over the validation candidates. */
  exportMaxDiff: number | null;
  /** Per split: whether the learned selector and the robust default reach the best trivial selector. */
  verdicts: SplitVerdict[];
}

export async function train(options: TrainOptions): Promise<TrainResult> {
  const started = Date.now();
  const settings = trainSettings(options);
  const { seed, outDir, folds, budgetTokens, log } = settings;

  const rows = await loadTrainingRows(options);
  const split = splitTrainingRows(rows.candidates, options, seed);
  const atif = atifUnknownWarning(rows.candidates.map((row) => row.trajectory));
  if (atif) log(`warning: ${atif.message}`);
  log(
    `data: ${rows.candidates.length} labelled candidates (${split.train.length} train, ${split.validation.length} validation); dropped ${JSON.stringify(rows.dropped)}; ${rows.issues.length} input issue(s) skipped${
      rows.supersededJobs ? `; ${rows.supersededJobs.length} job(s) left out as superseded by a retry (each retry family counts once)` : ''
    }`,
  );

  await mkdir(outDir, { recursive: true });
  const fitted = await fitSide(split.train, outDir, settings.fit);
  const { space, shape, calibration, epochs } = fitted;

  await exportModel(
    fitted,
    outDir,
    `winnower value model, seed ${seed}, fold 0 of ${folds} over ${split.train.length} training candidates`,
  );
  const card = {
    outDir,
    space,
    shape,
    budgetTokens,
    padTokenId: PAD_ID,
    seed,
    epochs,
    folds,
    calibration,
    selector: fitted.selector,
    sources: dataSources(rows.candidates),
    trainCandidates: split.train.length,
    validationCandidates: split.validation.length,
    command: options.command ?? '',
    options,
  };
  // The card is written before validation too: the onnx scorer reads config.json.
  await writeSelectorAndCard({ ...card, tables: [], verdicts: [], seconds: 0 });

  const tables = tableOptions({ trajectories: rows.candidates.some(hasTrajectory), bootstrap: options.bootstrap, seed });
  const validated = await validateFolder(split.validation, fitted, {
    outDir,
    baselineModel: options.baselineModel,
    budgetTokens,
    tables,
    signal: options.signal,
    onProgress: options.onProgress,
  });
  const checked = await checkHeldOutSources(rows.candidates, split, validated.tables, {
    sourceCheck: options.sourceCheck,
    fit: settings.fit,
    tables,
    log,
  });
  const verdicts = [
    ...(validated.tables.length ? [verdict(split.name, validated.tables[0]!, split.bySource)] : []),
    ...(checked.verdict ? [checked.verdict] : []),
  ];

  const selector = chooseDefault(
    fitted.selector,
    verdicts.find((v) => v.source_held_out),
    checked,
    log,
  );
  const allTables = [...validated.tables, ...checked.tables];
  const seconds = (Date.now() - started) / 1000;
  await writeSelectorAndCard({ ...card, selector, tables: allTables, verdicts, seconds });
  return {
    outDir,
    trainCandidates: split.train.length,
    validationCandidates: split.validation.length,
    epochs,
    calibration,
    selector,
    tables: allTables,
    table: formatTables(allTables),
    seconds,
    exportMaxDiff: validated.exportMaxDiff,
    verdicts,
  };
}
