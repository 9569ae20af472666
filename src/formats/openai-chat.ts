import { z } from 'zod';
import { ChatMessage, ExitReason, Trajectory } from '../types/trajectory.js';
import { compactMessage, contentText, InputContent, InputToolCall, isRecord, lastToolCallName, toToolCalls } from './chat-input.js';
import { importRecords } from './import-records.js';
import { invalidRecord } from './issues.js';
import { fileStem } from './read-input.js';
import type { ImportOptions, ImportResult, RecordContext } from './types.js';

/** One OpenAI chat message as datasets store it: unused keys may be null. */
export const InputChatMessage = z.looseObject({
  role: ChatMessage.shape.role,
  content: InputContent,
  tool_calls: z.array(InputToolCall).nullish(),
  tool_call_id: z.string().nullish(),
  name: z.string().nullish(),
  reasoning_content: z.string().nullish(),
  reasoning: z.string().nullish(),
  meta: z.record(z.string(), z.unknown()).nullish(),
});

/**
 * `{messages, tools?, metadata}` (the Orchard shape) or a SWE-Gym row, whose metadata
 * (`instance_id`, `run_id`, `resolved`, `test_result`) sits at the top level. Every field is read
 * from both places; see `recordFields`.
 */
export const OpenAIChatRecord = z.looseObject({
  messages: z.array(InputChatMessage),
  tools: z.array(z.unknown()).nullish(),
  metadata: z.record(z.string(), z.unknown()).optional(),
});

/** Tool names that end a run by choice (OpenHands/SWE-Gym `finish`, SWE-agent `submit`). */
const FINISH_TOOLS = new Set(['finish', 'submit']);

/** `python__mypy-15976_0` → `python__mypy-15976` and sample 0 (the agent-data-protocol export appends `_N`). */
export function splitSampleSuffix(instanceId: string): { instanceId: string; sample?: number } {
  const match = /^(.+-\d+)_(\d+)$/.exec(instanceId);
  return match ? { instanceId: match[1]!, sample: Number(match[2]) } : { instanceId };
}

export function toChatMessage(message: z.infer<typeof InputChatMessage>): ChatMessage {
  return compactMessage({
    role: message.role,
    content: contentText(message.content),
    reasoning: message.reasoning_content ?? message.reasoning ?? undefined,
    tool_calls: toToolCalls(message.tool_calls),
    tool_call_id: message.tool_call_id ?? undefined,
    name: message.name ?? undefined,
    meta: message.meta ?? undefined,
  });
}

function firstString(fields: Record<string, unknown>, keys: readonly string[]): string | undefined {
  for (const key of keys) {
    const value = fields[key];
    if (typeof value === 'string' && value !== '') return value;
  }
  return undefined;
}

/**
 * The fields of a record: its top-level keys and those of its `metadata` object. When both set a
 * key (not null), the top level wins: it is where a row is annotated after the fact (a run's
 * `source`, a row `id`, the evaluated `patch`), while `metadata` is what the producer wrote. The
 * metadata values that lost are returned apart, so nothing the row held is dropped.
 */
export function recordFields(
  topLevel: Record<string, unknown>,
  metadata: Record<string, unknown> | undefined,
): { fields: Record<string, unknown>; shadowed: Record<string, unknown> } {
  const fields: Record<string, unknown> = { ...metadata };
  const shadowed: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(topLevel)) {
    if (value === undefined || value === null) continue;
    if (
      metadata &&
      key in metadata &&
      metadata[key] !== null &&
      metadata[key] !== undefined &&
      JSON.stringify(metadata[key]) !== JSON.stringify(value)
    )
      shadowed[key] = metadata[key];
    fields[key] = value;
  }
  return { fields, shadowed };
}

/**
 * Rows of one instance seen so far in one file, by source: the second row of an instance with the
 * same source (nothing in the row tells them apart) becomes source `<source>#2`, and so on, as if
 * each were its own run, rather than two candidates colliding on one id and one label.
 */
export type RowCounter = Map<string, number>;

/** A row's own id (`id`, top level or metadata): a non-empty string or a number. */
function rowIdOf(fields: Record<string, unknown>): string | undefined {
  const value = fields.id;
  if (typeof value === 'string' && value !== '') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return undefined;
}

/** Converts one OpenAI-chat record (Orchard or SWE-Gym shape) into a Trajectory; `rows` numbers repeated rows of one file. */
export function openAIChatToTrajectory(
  value: unknown,
  context: RecordContext,
  options: ImportOptions = {},
  rows: RowCounter = new Map(),
): Trajectory {
  const record = OpenAIChatRecord.parse(value);
  const { messages: inputMessages, tools, metadata, ...topLevel } = record;
  const { fields, shadowed } = recordFields(topLevel, metadata);
  const testResult = isRecord(fields.test_result) ? fields.test_result : undefined;
  const { git_patch: testResultPatch, test_output: _testOutput, ...testResultRest } = testResult ?? {};

  const rawInstanceId =
    firstString(fields, ['instance_id']) ?? options.instanceId ?? (context.line === undefined ? fileStem(context.file) : undefined);
  if (rawInstanceId === undefined) throw invalidRecord(metadata ? 'metadata.instance_id' : 'instance_id', 'missing');
  const { instanceId, sample } = splitSampleSuffix(rawInstanceId);
  const recordedSource =
    options.source ?? firstString(fields, ['source', 'run_id', 'policy', 'model', 'model_name_or_path']) ?? 'openai-chat';
  const rowKey = `${recordedSource}\u0000${instanceId}`;
  const rowNumber = (rows.get(rowKey) ?? 0) + 1;
  rows.set(rowKey, rowNumber);
  const source = rowNumber === 1 ? recordedSource : `${recordedSource}#${rowNumber}`;
  const rowId = rowIdOf(fields);
  const patch = firstString(fields, ['patch', 'git_patch', 'model_patch']) ?? (typeof testResultPatch === 'string' ? testResultPatch : '');
  const report = isRecord(testResultRest.report) ? testResultRest.report : undefined;
  const resolved =
    typeof fields.resolved === 'boolean' ? fields.resolved : typeof report?.resolved === 'boolean' ? report.resolved : undefined;

  const messages = inputMessages.map(toChatMessage);
  const exitRaw = firstString(fields, ['exit', 'exit_status', 'exit_reason']);
  const finishTool = lastToolCallName(messages);
  const exit: ExitReason =
    exitRaw !== undefined
      ? (ExitReason.safeParse(exitRaw).data ?? 'unknown')
      : finishTool !== undefined && FINISH_TOOLS.has(finishTool)
        ? 'submitted'
        : 'unknown';

  const meta: Record<string, unknown> = { importer: 'openai-chat' };
  for (const [key, field] of Object.entries(fields)) {
    if (!['instance_id', 'patch', 'git_patch', 'model_patch', 'test_result', 'exit', 'exit_status', 'exit_reason'].includes(key))
      meta[key] = field;
  }
  if (Object.keys(shadowed).length > 0) meta.metadata_shadowed = shadowed;
  if (rowNumber > 1) Object.assign(meta, { source_recorded: recordedSource, row_of_instance: rowNumber });
  if (testResult) meta.test_result = testResultRest;
  if (resolved !== undefined) meta.resolved = resolved;
  if (sample !== undefined) Object.assign(meta, { instance_id_raw: rawInstanceId, sample });
  if (tools) meta.tools = tools;

  // A row id is the candidate's id as given; under a source named by the caller (a run name, the
  // file name) it is prefixed, so the same row ids in two runs stay apart.
  const id = rowId === undefined ? `${source}/${rawInstanceId}` : options.source === undefined ? rowId : `${options.source}/${rowId}`;
  return Trajectory.parse({
    id,
    instance_id: instanceId,
    source,
    messages,
    patch,
    exit,
    exit_raw: exitRaw ?? (exit === 'submitted' ? `tool:${finishTool}` : undefined),
    meta,
  });
}

/** winnower's own JSONL: one Trajectory per line; `source` overrides the stored one (and the id). */
export function winnowerRecordToTrajectory(value: unknown, options: ImportOptions = {}): Trajectory {
  const trajectory = Trajectory.parse(value);
  if (options.source === undefined || options.source === trajectory.source) return trajectory;
  return { ...trajectory, source: options.source, id: `${options.source}/${trajectory.instance_id}` };
}

/** Reads OpenAI-chat trajectories: one pretty-printed JSON record, a JSON array, or JSONL rows. */
export function importOpenAIChat(file: string, options: ImportOptions = {}): Promise<ImportResult<Trajectory>> {
  const rows: RowCounter = new Map();
  return importRecords(file, options, { convert: (value, context) => openAIChatToTrajectory(value, context, options, rows) });
}

/** Reads winnower trajectories (JSONL, a JSON array, or one JSON object). */
export function importWinnowerTrajectories(file: string, options: ImportOptions = {}): Promise<ImportResult<Trajectory>> {
  return importRecords(file, options, { convert: (value) => winnowerRecordToTrajectory(value, options) });
}
