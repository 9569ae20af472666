import { z } from 'zod';
import type { ChatMessage, ToolCall, Usage } from '../types/trajectory.js';
import { Trajectory } from '../types/trajectory.js';
import { compactMessage, contentText, InputContent, InputToolCall, isRecord, toToolCalls } from './chat-input.js';
import { importRecords } from './import-records.js';
import { mapOpenHandsExit, openHandsExitRaw } from './map-openhands-exit.js';
import { fileStem } from './read-input.js';
import type { ImportOptions, ImportResult, RecordContext } from './types.js';

const ToolCallMetadata = z.looseObject({
  function_name: z.string(),
  tool_call_id: z.string(),
  /** The full litellm response that made the call; its message holds the exact content and calls. */
  model_response: z.unknown().nullish(),
  total_calls_in_response: z.number().int().nullish(),
});

/** One OpenHands event: an action (`action`) or an observation (`observation`, `cause`). */
export const OpenHandsEvent = z.looseObject({
  id: z.number().int().nullish(),
  source: z.string().nullish(),
  message: z.string().nullish(),
  action: z.string().nullish(),
  observation: z.string().nullish(),
  args: z.record(z.string(), z.unknown()).nullish(),
  content: z.string().nullish(),
  extras: z.record(z.string(), z.unknown()).nullish(),
  cause: z.number().int().nullish(),
  tool_call_metadata: ToolCallMetadata.nullish(),
});
type OpenHandsEvent = z.infer<typeof OpenHandsEvent>;

/** One record of an OpenHands evaluation `output.jsonl`. */
export const OpenHandsOutput = z.looseObject({
  instance_id: z.string().min(1),
  history: z.array(OpenHandsEvent),
  test_result: z.looseObject({ git_patch: z.string().nullish() }).nullish(),
  metadata: z.record(z.string(), z.unknown()).nullish(),
  metrics: z.record(z.string(), z.unknown()).nullish(),
  error: z.string().nullish(),
  instance: z.record(z.string(), z.unknown()).nullish(),
});

const ResponseMessage = z.looseObject({ content: InputContent, tool_calls: z.array(InputToolCall).nullish() });

/** Bookkeeping events that carry no conversation turn. */
const INTERNAL_ACTIONS = new Set(['recall', 'change_agent_state', 'null']);
const INTERNAL_OBSERVATIONS = new Set(['recall', 'agent_state_changed', 'null']);

function isEvent(value: unknown): boolean {
  return isRecord(value) && ('action' in value || 'observation' in value) && 'source' in value;
}

/** True for an `output.jsonl` record (used by detection; check SWE-agent first, it has `history` too). */
export function isOpenHandsOutput(value: unknown): boolean {
  return isRecord(value) && typeof value.instance_id === 'string' && Array.isArray(value.history) && value.history.every(isEvent);
}

/** True for a bare event list (`trajectory.json` used for replay). */
export function isOpenHandsEventList(value: unknown): boolean {
  return Array.isArray(value) && value.length > 0 && value.every(isEvent);
}

function responseMessage(response: unknown): z.infer<typeof ResponseMessage> | undefined {
  const choices = isRecord(response) ? response.choices : undefined;
  const first: unknown = Array.isArray(choices) ? choices[0] : undefined;
  const parsed = ResponseMessage.safeParse(isRecord(first) ? first.message : undefined);
  return parsed.success ? parsed.data : undefined;
}

function text(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

interface Converted {
  messages: ChatMessage[];
  /** Tool definitions of the system event (OpenAI format), which the critic's chat template is given as `tools`. */
  tools?: unknown[];
  lastAction?: string;
  agentState?: string;
  skipped: Record<string, number>;
}

/**
 * Events → chat messages. An action made by a tool call becomes the assistant turn of its model
 * response (once per response, with all its calls); its observation becomes a `tool` message.
 * Observations without a call (errors) become `user` messages. Bookkeeping events are counted, not kept.
 */
export function convertEvents(events: readonly OpenHandsEvent[]): Converted {
  const out: Converted = { messages: [], skipped: {} };
  const emittedResponses = new Set<string>();
  const skip = (kind: string): void => {
    out.skipped[kind] = (out.skipped[kind] ?? 0) + 1;
  };
  for (const event of events) {
    const args = event.args ?? {};
    const call = event.tool_call_metadata ?? undefined;
    if (event.action) {
      if (INTERNAL_ACTIONS.has(event.action)) {
        skip(event.action);
        continue;
      }
      out.lastAction = event.action;
      if (call) {
        const response = isRecord(call.model_response) ? call.model_response : undefined;
        const responseId = typeof response?.id === 'string' ? response.id : undefined;
        if (responseId !== undefined && emittedResponses.has(responseId)) continue;
        if (responseId !== undefined) emittedResponses.add(responseId);
        const message = responseMessage(response);
        const { thought, ...callArgs } = args;
        const fallback: ToolCall[] = [
          { id: call.tool_call_id, type: 'function', function: { name: call.function_name, arguments: JSON.stringify(callArgs) } },
        ];
        out.messages.push(
          compactMessage({
            role: 'assistant',
            content: message ? contentText(message.content) : text(thought),
            tool_calls: toToolCalls(message?.tool_calls) ?? fallback,
            meta: message ? { action: event.action } : { action: event.action, reconstructed: true },
          }),
        );
      } else if (event.action === 'system') {
        out.messages.push({ role: 'system', content: text(args.content) || text(event.message) });
        if (Array.isArray(args.tools) && args.tools.length > 0) out.tools = args.tools;
      } else if (event.action === 'message' && event.source === 'user') {
        out.messages.push({ role: 'user', content: text(args.content) || text(event.message) });
      } else {
        const content =
          event.action === 'message'
            ? text(args.content) || text(event.message)
            : [text(args.thought), text(event.message)].filter(Boolean).join('\n');
        out.messages.push({ role: 'assistant', content, meta: { action: event.action } });
      }
    } else if (event.observation) {
      if (INTERNAL_OBSERVATIONS.has(event.observation)) {
        if (event.observation === 'agent_state_changed') out.agentState = text(event.extras?.agent_state) || undefined;
        skip(event.observation);
        continue;
      }
      const meta: Record<string, unknown> = { observation: true, observation_type: event.observation };
      const metadata = event.extras?.metadata;
      if (isRecord(metadata) && typeof metadata.exit_code === 'number') meta.exit_code = metadata.exit_code;
      const content = event.content ?? text(event.message);
      out.messages.push(
        call ? { role: 'tool', content, tool_call_id: call.tool_call_id, name: call.function_name, meta } : { role: 'user', content, meta },
      );
    } else {
      skip('unknown');
    }
  }
  return out;
}

function usageOf(metrics: Record<string, unknown> | null | undefined): Usage | undefined {
  if (!metrics) return undefined;
  const tokens = isRecord(metrics.accumulated_token_usage) ? metrics.accumulated_token_usage : {};
  const latencies = Array.isArray(metrics.response_latencies) ? metrics.response_latencies.length : 0;
  return {
    prompt_tokens: typeof tokens.prompt_tokens === 'number' ? tokens.prompt_tokens : 0,
    completion_tokens: typeof tokens.completion_tokens === 'number' ? tokens.completion_tokens : 0,
    calls: latencies,
    ...(typeof metrics.accumulated_cost === 'number' ? { cost: metrics.accumulated_cost } : {}),
  };
}

/** Converts one `output.jsonl` record; patch = `test_result.git_patch`. */
export function openHandsOutputToTrajectory(value: unknown, options: ImportOptions = {}): Trajectory {
  const record = OpenHandsOutput.parse(value);
  const converted = convertEvents(record.history);
  const metadata = record.metadata ?? {};
  const llm = isRecord(metadata.llm_config) ? metadata.llm_config : {};
  const model = typeof llm.model === 'string' ? llm.model : undefined;
  const source = options.source ?? model ?? 'openhands';
  const instanceId = options.instanceId ?? record.instance_id;
  const exitRaw = openHandsExitRaw(record.error, converted.lastAction, converted.agentState);
  const instance = record.instance ?? {};
  const meta: Record<string, unknown> = { importer: 'openhands', agent: 'openhands', skipped_events: converted.skipped };
  if (converted.tools) meta.tools = converted.tools;
  if (typeof metadata.agent_class === 'string') meta.agent_class = metadata.agent_class;
  if (model) meta.model = model;
  if (typeof metadata.max_iterations === 'number') meta.max_iterations = metadata.max_iterations;
  if (typeof instance.repo === 'string') meta.repo = instance.repo;
  if (typeof instance.base_commit === 'string') meta.base_commit = instance.base_commit;
  if (record.error) meta.error = record.error;
  const usage = usageOf(record.metrics);
  return Trajectory.parse({
    id: `${source}/${instanceId}`,
    instance_id: instanceId,
    source,
    messages: converted.messages,
    patch: record.test_result?.git_patch ?? '',
    exit: mapOpenHandsExit(exitRaw),
    exit_raw: exitRaw,
    ...(usage ? { usage } : {}),
    meta,
  });
}

/** Converts a bare event list; it has no patch and no instance id (from options or the file name). */
export function openHandsEventsToTrajectory(value: unknown, context: RecordContext, options: ImportOptions = {}): Trajectory {
  const converted = convertEvents(z.array(OpenHandsEvent).parse(value));
  const instanceId = options.instanceId ?? fileStem(context.file);
  const source = options.source ?? 'openhands';
  const exitRaw = openHandsExitRaw(undefined, converted.lastAction, converted.agentState);
  return Trajectory.parse({
    id: `${source}/${instanceId}`,
    instance_id: instanceId,
    source,
    messages: converted.messages,
    exit: mapOpenHandsExit(exitRaw),
    exit_raw: exitRaw,
    meta: {
      importer: 'openhands',
      agent: 'openhands',
      skipped_events: converted.skipped,
      ...(converted.tools ? { tools: converted.tools } : {}),
    },
  });
}

/** Reads an OpenHands `output.jsonl` (streamed) or a bare event-list `.json`. */
export function importOpenHands(file: string, options: ImportOptions = {}): Promise<ImportResult<Trajectory>> {
  return importRecords(file, options, {
    convert: (value, context) =>
      Array.isArray(value) ? openHandsEventsToTrajectory(value, context, options) : openHandsOutputToTrajectory(value, options),
    split: (document) =>
      Array.isArray(document) && !isOpenHandsEventList(document)
        ? document.map((value, index) => ({ value, record: index }))
        : [{ value: document }],
  });
}
