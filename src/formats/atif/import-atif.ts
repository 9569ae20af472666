/**
 * Reads ATIF files (one document, a JSON array of them, or JSONL rows) as trajectories. A Harbor
 * trial's `agent/trajectory.json` names no task; the trial's `result.json` beside `agent/` does
 * (`task_name`), and is read for it (docs/formats.md#atif-in).
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { Trajectory } from '../../types/trajectory.js';
import { importRecords } from '../import-records.js';
import { fileStem } from '../read-input.js';
import type { ImportOptions, ImportResult } from '../types.js';
import { fromAtif } from './from-atif.js';

/** A trial result.json is a few kilobytes; a larger file is not read for a name. */
const MAX_TRIAL_RESULT_BYTES = 4 * 1024 * 1024;

/** `task_name` of the Harbor trial holding `<trial>/agent/<file>`, when there is one. */
export function trialTaskName(file: string): string | undefined {
  const agentDir = dirname(file);
  if (basename(agentDir) !== 'agent') return undefined;
  const result = join(dirname(agentDir), 'result.json');
  try {
    if (!existsSync(result) || statSync(result).size > MAX_TRIAL_RESULT_BYTES) return undefined;
    const parsed: unknown = JSON.parse(readFileSync(result, 'utf8'));
    const name = (parsed as { task_name?: unknown } | null)?.task_name;
    return typeof name === 'string' && name !== '' ? name : undefined;
  } catch {
    return undefined;
  }
}

export function importAtif(file: string, options: ImportOptions = {}): Promise<ImportResult<Trajectory>> {
  const fallback = options.instanceId ?? trialTaskName(file) ?? fileStem(file);
  return importRecords(file, options, {
    convert: (value, context) =>
      fromAtif(value, {
        ...(options.source !== undefined ? { source: options.source } : {}),
        // A JSONL row is one of many: the file's name is not its task.
        ...(context.line === undefined || options.instanceId !== undefined ? { instanceId: fallback } : {}),
      }).trajectory,
  });
}

/** Whether a value looks like an ATIF document (its `schema_version` says so). */
export function isAtifDocument(value: unknown): boolean {
  const version = (value as { schema_version?: unknown } | null)?.schema_version;
  return typeof version === 'string' && version.startsWith('ATIF-');
}
