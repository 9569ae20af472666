/**
 * Reads ATIF files (one document, a JSON array of them, or JSONL rows) as trajectories. A Harbor
 * trial's `agent/trajectory.json` names no task; the trial's `result.json` beside `agent/` does
 * (`task_name`), and is read for it (docs/formats.md#atif-in).
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, normalize } from 'node:path';
import type { Trajectory } from '../../types/trajectory.js';
import { importRecords } from '../import-records.js';
import { invalidRecord } from '../issues.js';
import { fileStem } from '../read-input.js';
import type { ImportOptions, ImportResult } from '../types.js';
import { type FromAtifOptions, fromAtif } from './from-atif.js';

/** A trial result.json is a few kilobytes; a larger file is not read for a name. */
const MAX_TRIAL_RESULT_BYTES = 4 * 1024 * 1024;
/** Caps on following `continued_trajectory_ref`: segments per trajectory, bytes per segment. */
const MAX_SEGMENTS = 64;
const MAX_SEGMENT_BYTES = 256 * 1024 * 1024;

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

/**
 * The trajectory with its continuation segments appended (`continued_trajectory_ref`, a path
 * beside the file: `trajectory.cont-1.json`, …). Only files in the same folder are followed (no
 * URL, no absolute path, no `..`); a segment that is missing or invalid makes the record invalid
 * rather than silently shorter.
 */
function withContinuations(first: Trajectory, document: unknown, file: string, options: FromAtifOptions): Trajectory {
  let trajectory = first;
  let ref = (document as { continued_trajectory_ref?: unknown }).continued_trajectory_ref;
  const followed: string[] = [];
  while (typeof ref === 'string') {
    const path = normalize(ref);
    if (/^[a-z]+:\/\//i.test(ref) || isAbsolute(path) || path.startsWith('..'))
      throw invalidRecord('continued_trajectory_ref', `${ref}: only a file in the same folder is followed`);
    if (followed.length >= MAX_SEGMENTS) throw invalidRecord('continued_trajectory_ref', `more than ${MAX_SEGMENTS} continuation segments`);
    const segmentFile = join(dirname(file), path);
    if (followed.includes(segmentFile)) throw invalidRecord('continued_trajectory_ref', `${ref}: the segments form a loop`);
    let segment: unknown;
    try {
      if (statSync(segmentFile).size > MAX_SEGMENT_BYTES) throw new Error(`larger than ${MAX_SEGMENT_BYTES} bytes`);
      segment = JSON.parse(readFileSync(segmentFile, 'utf8'));
    } catch (error) {
      throw invalidRecord('continued_trajectory_ref', `${ref}: ${(error as Error).message}`);
    }
    let next: Trajectory;
    try {
      next = fromAtif(segment, { ...options, instanceId: trajectory.instance_id }).trajectory;
    } catch (error) {
      throw invalidRecord('continued_trajectory_ref', `${ref}: ${(error as Error).message}`);
    }
    followed.push(segmentFile);
    const usage = trajectory.usage && next.usage ? sumUsage(trajectory.usage, next.usage) : (trajectory.usage ?? next.usage);
    trajectory = {
      ...trajectory,
      messages: [...trajectory.messages, ...next.messages],
      ...(usage ? { usage } : {}),
      patch: next.patch || trajectory.patch,
      exit: next.exit !== 'unknown' ? next.exit : trajectory.exit,
      meta: { ...trajectory.meta, continued_segments: followed.map((segmentPath) => basename(segmentPath)) },
    };
    ref = (segment as { continued_trajectory_ref?: unknown }).continued_trajectory_ref;
  }
  return trajectory;
}

function sumUsage(a: NonNullable<Trajectory['usage']>, b: NonNullable<Trajectory['usage']>): NonNullable<Trajectory['usage']> {
  const cost = a.cost !== undefined || b.cost !== undefined ? { cost: (a.cost ?? 0) + (b.cost ?? 0) } : {};
  return {
    prompt_tokens: a.prompt_tokens + b.prompt_tokens,
    completion_tokens: a.completion_tokens + b.completion_tokens,
    calls: a.calls + b.calls,
    ...cost,
  };
}

export function importAtif(file: string, options: ImportOptions = {}): Promise<ImportResult<Trajectory>> {
  // A trial's task names every record of its file; the file's name only a file of one document.
  const named = options.instanceId ?? trialTaskName(file);
  return importRecords(file, options, {
    convert: (value, context) => {
      const instanceId = named ?? (context.line === undefined ? fileStem(file) : undefined);
      const atifOptions: FromAtifOptions = {
        ...(options.source !== undefined ? { source: options.source } : {}),
        ...(instanceId !== undefined ? { instanceId } : {}),
      };
      return withContinuations(fromAtif(value, atifOptions).trajectory, value, file, atifOptions);
    },
  });
}

/** Whether a value looks like an ATIF document (its `schema_version` says so). */
export function isAtifDocument(value: unknown): boolean {
  const version = (value as { schema_version?: unknown } | null)?.schema_version;
  return typeof version === 'string' && version.startsWith('ATIF-');
}
