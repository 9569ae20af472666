import { z } from 'zod';
import { Trajectory } from '../types/trajectory.js';
import { importRecords, splitArrayOrOne, type DocumentRecord } from './import-records.js';
import { invalidRecord } from './issues.js';
import type { ImportOptions, ImportResult } from './types.js';

/** One SWE-bench prediction; extra fields (e.g. `resolved`) are kept in the trajectory's meta. */
export const PredictionRecord = z.looseObject({
  instance_id: z.string().min(1),
  model_name_or_path: z.string().min(1).optional(),
  /** null (no patch generated) is read as the empty patch. */
  model_patch: z.string().nullable(),
});
export type PredictionRecord = z.infer<typeof PredictionRecord>;

/** True for a record that looks like a prediction (used by detection). */
export function isPrediction(value: unknown): boolean {
  return typeof value === 'object' && value !== null && 'model_patch' in value;
}

/** `{instance_id: {model_patch, ...}}` (SWE-bench's older predictions.json) → records, key as instance_id. */
export function isKeyedPredictions(value: unknown): value is Record<string, Record<string, unknown>> {
  if (typeof value !== 'object' || value === null || Array.isArray(value) || isPrediction(value)) return false;
  const entries = Object.values(value);
  return entries.length > 0 && entries.every(isPrediction);
}

function splitPredictions(document: unknown): DocumentRecord[] {
  if (isKeyedPredictions(document)) {
    return Object.entries(document).map(([key, value]) => ({ value: { instance_id: key, ...value }, record: key }));
  }
  return splitArrayOrOne(document);
}

/** A patch-only trajectory: no messages, `source` = the caller's name or model_name_or_path. */
export function predictionToTrajectory(value: unknown, options: Pick<ImportOptions, 'source'> = {}): Trajectory {
  const record = PredictionRecord.parse(value);
  const { instance_id, model_name_or_path, model_patch, ...extra } = record;
  const source = options.source ?? model_name_or_path;
  if (source === undefined) throw invalidRecord('model_name_or_path', 'missing, and no source was given');
  return Trajectory.parse({
    id: `${source}/${instance_id}`,
    instance_id,
    source,
    patch: model_patch ?? '',
    meta: {
      importer: 'swebench-predictions',
      ...(model_name_or_path !== undefined && model_name_or_path !== source ? { model_name_or_path } : {}),
      ...(model_patch === null ? { patch_null: true } : {}),
      ...extra,
    },
  });
}

/** Reads SWE-bench predictions: JSONL (streamed), a JSON array, or a JSON object keyed by instance_id. */
export function importSwebenchPredictions(file: string, options: ImportOptions = {}): Promise<ImportResult<Trajectory>> {
  return importRecords(file, options, {
    convert: (value) => predictionToTrajectory(value, options),
    split: splitPredictions,
  });
}
