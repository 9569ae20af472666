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
  // A trial's task names every record of its file; the file's name only a file of one document.
  const named = options.instanceId ?? trialTaskName(file);
  return importRecords(file, options, {
    convert: (value, context) => {
      const instanceId = named ?? (context.line === undefined ? fileStem(file) : undefined);
      return fromAtif(value, {
        ...(options.source !== undefined ? { source: options.source } : {}),
        ...(instanceId !== undefined ? { instanceId } : {}),
      }).trajectory;
    },
  });
}

/** Whether a value looks like an ATIF document (its `schema_version` says so). */
export function isAtifDocument(value: unknown): boolean {
  const version = (value as { schema_version?: unknown } | null)?.schema_version;
  return typeof version === 'string' && version.startsWith('ATIF-');
}
