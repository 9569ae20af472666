/**
 * winnower Trajectory → ATIF-v1.7 (docs/formats.md#atif-out). One step per system, user and
 * assistant message; tool messages and text-mode observations become results on the agent step
 * that called them, never steps of their own. What ATIF has no field for (the patch, the exit, the
 * candidate id, per-message meta) goes under `extra`, where `fromAtif` finds it again, so a
 * winnower trajectory survives the round trip message for message.
 */
import { patchForJson } from '../../sandbox/patch-bytes.js';
import type { ChatMessage, ToolCall, Trajectory } from '../../types/trajectory.js';
import type { AtifObservationResult, AtifStep, AtifToolCall, AtifTrajectory } from './atif-types.js';
import { ATIF_WRITE_VERSION } from './atif-version.js';

/** The key under `extra` that holds what only winnower reads back. */
export const WINNOWER_EXTRA = 'winnower';
const WINNOWER_VERSION = '0.1.0';

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function compact<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, field]) => field !== undefined)) as T;
}

/** The message fields ATIF has no place for, under `extra.winnower`; undefined when there are none. */
function messageExtra(message: ChatMessage, more: Record<string, unknown> = {}): Record<string, unknown> | undefined {
  const own = compact({ name: message.name, meta: message.meta, ...more });
  return Object.keys(own).length > 0 ? { [WINNOWER_EXTRA]: own } : undefined;
}

/**
 * Parsed arguments, as ATIF requires an object. Arguments that are not a JSON object become `{}`
 * with the raw string in `extra.raw_arguments`; so do arguments whose text differs from their
 * re-serialisation (spacing, key order), so the exact string comes back.
 */
function toToolCall(call: ToolCall): AtifToolCall {
  let parsed: unknown;
  try {
    parsed = JSON.parse(call.function.arguments);
  } catch {
    parsed = undefined;
  }
  const object = isObject(parsed) ? parsed : undefined;
  const exact = object !== undefined && JSON.stringify(object) === call.function.arguments;
  return {
    tool_call_id: call.id,
    function_name: call.function.name,
    arguments: object ?? {},
    ...(exact ? {} : { extra: { raw_arguments: call.function.arguments } }),
  };
}

/** Token counts a message recorded for its own call (a harness answer's `meta.usage`), as ATIF metrics. */
function metricsOf(message: ChatMessage): AtifStep['metrics'] {
  const usage = message.meta?.usage;
  if (!isObject(usage)) return undefined;
  const count = (value: unknown) => (typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : undefined);
  const metrics = compact({ prompt_tokens: count(usage.prompt_tokens), completion_tokens: count(usage.completion_tokens) });
  return Object.keys(metrics).length > 0 ? metrics : undefined;
}

function agentStep(message: ChatMessage, stepId: number): AtifStep {
  const model = message.meta?.model;
  return compact({
    step_id: stepId,
    source: 'agent' as const,
    message: message.content,
    model_name: typeof model === 'string' ? model : undefined,
    reasoning_content: message.reasoning,
    tool_calls: message.tool_calls?.length ? message.tool_calls.map(toToolCall) : undefined,
    metrics: metricsOf(message),
    llm_call_count: 1,
    extra: messageExtra(message),
  });
}

/** A tool message or a text-mode observation, as a result of the agent step it answers. */
function toResult(message: ChatMessage, step: AtifStep): AtifObservationResult {
  const matched = message.tool_call_id !== undefined && (step.tool_calls ?? []).some((call) => call.tool_call_id === message.tool_call_id);
  // An id with no call in this step may not be a source_call_id (the format's rule); it is kept apart.
  const unmatchedId = message.tool_call_id !== undefined && !matched ? message.tool_call_id : undefined;
  const exitCode = message.meta?.exit_code;
  const own = messageExtra(message, { role: message.role === 'tool' ? undefined : message.role, tool_call_id: unmatchedId });
  const extra = { ...(typeof exitCode === 'number' ? { exit_code: exitCode } : {}), ...own };
  return compact({
    source_call_id: matched ? message.tool_call_id : undefined,
    content: message.content,
    extra: Object.keys(extra).length > 0 ? extra : undefined,
  });
}

function isObservation(message: ChatMessage): boolean {
  return message.role === 'tool' || (message.role === 'user' && Boolean(message.meta?.observation));
}

function toSteps(messages: readonly ChatMessage[]): AtifStep[] {
  const steps: AtifStep[] = [];
  for (const message of messages) {
    const last = steps.at(-1);
    if (isObservation(message) && last?.source === 'agent') {
      last.observation = { results: [...(last.observation?.results ?? []), toResult(message, last)] };
      continue;
    }
    if (message.role === 'assistant') {
      steps.push(agentStep(message, steps.length + 1));
      continue;
    }
    // A tool message with no agent step before it has no call to join: a user step that says it was one.
    const extra = messageExtra(message, message.role === 'tool' ? { role: 'tool', tool_call_id: message.tool_call_id } : {});
    steps.push(
      compact<AtifStep>({
        step_id: steps.length + 1,
        source: message.role === 'system' ? 'system' : 'user',
        message: message.content,
        extra,
      }),
    );
  }
  return steps;
}

export interface ToAtifOptions {
  /** `agent.version` when the trajectory names none (a harness's own version wins); default winnower's. */
  agentVersion?: string;
}

/** A winnower trajectory as an ATIF-v1.7 document, valid under `validateAtif`. */
export function toAtif(trajectory: Trajectory, options: ToAtifOptions = {}): AtifTrajectory {
  const { meta } = trajectory;
  const steps = toSteps(trajectory.messages);
  // ATIF needs at least one step; a patch-only candidate (a predictions row) has none to give.
  const placeholder = steps.length === 0;
  if (placeholder) steps.push({ step_id: 1, source: 'system', message: '', extra: { [WINNOWER_EXTRA]: { placeholder: true } } });
  const config = isObject(meta.config) ? meta.config : {};
  const harness = typeof meta.harness === 'string' ? meta.harness : undefined;
  const tools = Array.isArray(meta.tools) ? meta.tools.filter(isObject) : [];
  const usage = trajectory.usage;
  return compact({
    schema_version: ATIF_WRITE_VERSION,
    session_id: trajectory.id,
    trajectory_id: trajectory.id,
    agent: compact({
      name: harness ?? 'winnower',
      version:
        typeof meta.harness_version === 'string' ? meta.harness_version : harness ? 'unknown' : (options.agentVersion ?? WINNOWER_VERSION),
      model_name: typeof config.model === 'string' ? config.model : undefined,
      tool_definitions: tools.length > 0 ? tools : undefined,
      extra: typeof meta.agent === 'string' ? { agent: meta.agent } : undefined,
    }),
    steps,
    notes: placeholder ? 'patch-only candidate: no messages were recorded, so step 1 is an empty placeholder' : undefined,
    final_metrics: compact({
      total_prompt_tokens: usage?.prompt_tokens,
      total_completion_tokens: usage?.completion_tokens,
      total_cost_usd: usage?.cost,
      total_steps: steps.length,
      extra: usage ? { llm_calls: usage.calls } : undefined,
    }),
    extra: compact({
      instance_id: trajectory.instance_id,
      source: trajectory.source,
      // A patch whose bytes are not UTF-8 cannot be a JSON string: base64, with patch_encoding.
      ...patchForJson(trajectory.patch),
      exit: trajectory.exit,
      exit_raw: trajectory.exit_raw,
      [WINNOWER_EXTRA]: compact({ format: trajectory.format, id: trajectory.id, usage, meta }),
    }),
  });
}
