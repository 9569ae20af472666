import { z } from 'zod';
import { Task } from '../types/task.js';
import { importRecords } from './import-records.js';
import type { ImportOptions, ImportResult } from './types.js';

/** A list of test ids: a JSON list, or (as on Hugging Face) a JSON-encoded string of one. */
const TestList = z.union([z.array(z.string()), z.string()]).transform((value, context) => {
  if (Array.isArray(value)) return value;
  if (value.trim() === '') return [];
  try {
    const parsed: unknown = JSON.parse(value);
    if (Array.isArray(parsed) && parsed.every((item) => typeof item === 'string')) return parsed as string[];
  } catch {
    // reported below
  }
  context.addIssue({ code: 'custom', message: 'expected a list of test ids or a JSON-encoded list' });
  return z.NEVER;
});

/** One SWE-bench task record; fields not mapped onto Task are kept in `meta`. */
export const SwebenchTaskRecord = z.looseObject({
  instance_id: z.string().min(1),
  problem_statement: z.string(),
  /** `owner/name`. */
  repo: z.string().min(1).optional(),
  base_commit: z.string().min(1).optional(),
  FAIL_TO_PASS: TestList.optional(),
  PASS_TO_PASS: TestList.optional(),
  test_patch: z.string().optional(),
  /** Container image (SWE-bench's `image_name` / winnower's `image`). */
  image_name: z.string().min(1).optional(),
  image: z.string().min(1).optional(),
  test_command: z.string().min(1).optional(),
  version: z.union([z.string(), z.number()]).optional(),
});

/** SWE-bench record → Task: repo → `{name, base_commit}`, FAIL_TO_PASS → fail_to_pass, ... */
export function taskFromRecord(value: unknown): Task {
  const record = SwebenchTaskRecord.parse(value);
  const {
    instance_id,
    problem_statement,
    repo,
    base_commit,
    FAIL_TO_PASS,
    PASS_TO_PASS,
    test_patch,
    image_name,
    image,
    test_command,
    version,
    ...rest
  } = record;
  const meta: Record<string, unknown> = { ...rest };
  if (version !== undefined) meta.version = String(version);
  return Task.parse({
    instance_id,
    problem_statement,
    ...(repo !== undefined || base_commit !== undefined
      ? { repo: { ...(repo ? { name: repo } : {}), ...(base_commit ? { base_commit } : {}) } }
      : {}),
    ...((image ?? image_name) ? { image: image ?? image_name } : {}),
    ...(test_command ? { test_command } : {}),
    fail_to_pass: FAIL_TO_PASS ?? [],
    pass_to_pass: PASS_TO_PASS ?? [],
    ...(test_patch !== undefined ? { test_patch } : {}),
    meta,
  });
}

/** Reads SWE-bench task records: JSONL (streamed), a JSON array, or one JSON object. */
export function importSwebenchTasks(
  file: string,
  options: Pick<ImportOptions, 'onInvalid' | 'signal' | 'onItem'> = {},
): Promise<ImportResult<Task>> {
  return importRecords(file, options, { convert: (value) => taskFromRecord(value) });
}
