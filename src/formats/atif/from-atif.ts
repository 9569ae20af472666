/**
 * ATIF (v1.0 … v1.8) → winnower Trajectory (docs/formats.md#atif-in). An agent step becomes an
 * assistant message followed by one tool message per result that names its call; results without
 * a call are one user observation, as Harbor's own exporter does. A document winnower wrote
 * (`extra.winnower`) comes back as it was. ATIF-v1.8 keys winnower does not know are kept in
 * `meta.atif_unknown` and reported as warnings.
 */
import { decodePatch } from '../../sandbox/patch-bytes.js';
import { type ChatMessage, ExitReason, Trajectory, type ToolCall, type Usage } from '../../types/trajectory.js';
import { invalidRecord } from '../issues.js';
import type { AtifProblem } from './validate-atif.js';
import { validateAtif } from './validate-atif.js';
import { WINNOWER_EXTRA } from './to-atif.js';

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function asObject(value: unknown): Json {
  return isObject(value) ? value : {};
}

function stringOf(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** Text of a message or result: a string, or content parts flattened (media named by path). */
export function atifText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((part) => {
      const p = asObject(part);
      if (p.type === 'text') return typeof p.text === 'string' ? p.text : '';
      return `[${String(p.type)}: ${String(asObject(p.source).path ?? '')}]`;
    })
    .join('\n');
}

function withoutKeys(value: Json, keys: readonly string[]): Json | undefined {
  const rest = Object.fromEntries(Object.entries(value).filter(([key]) => !keys.includes(key)));
  return Object.keys(rest).length > 0 ? rest : undefined;
}

/** Drops undefined fields so a message compares equal to one built without them. */
function message(fields: ChatMessage): ChatMessage {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined)) as ChatMessage;
}

/** What a step or result carries for winnower only (written by toAtif). */
function ownExtra(extra: unknown): Json | undefined {
  const own = asObject(extra)[WINNOWER_EXTRA];
  return isObject(own) ? own : undefined;
}

function toolCall(call: Json): ToolCall {
  const raw = asObject(call.extra).raw_arguments;
  return {
    id: String(call.tool_call_id),
    type: 'function',
    function: { name: String(call.function_name), arguments: typeof raw === 'string' ? raw : JSON.stringify(call.arguments ?? {}) },
  };
}

/** The meta a message of a foreign document keeps: the step's fields winnower has no place for. */
function foreignStepMeta(step: Json): Json | undefined {
  const meta = {
    ...(step.timestamp !== undefined ? { timestamp: step.timestamp } : {}),
    ...(step.model_name !== undefined ? { model: step.model_name } : {}),
    ...(step.metrics !== undefined ? { metrics: step.metrics } : {}),
    ...(step.is_copied_context === true ? { is_copied_context: true } : {}),
    ...(step.extra !== undefined ? { atif_extra: step.extra } : {}),
  };
  return Object.keys(meta).length > 0 ? meta : undefined;
}

/** The messages of one step, in order: the step's own, then its results. */
function stepMessages(step: Json, written: boolean): ChatMessage[] {
  const own = ownExtra(step.extra);
  if (own?.placeholder === true) return [];
  const text = atifText(step.message);
  const meta = written ? (own?.meta as Json | undefined) : foreignStepMeta(step);
  const out: ChatMessage[] = [];
  if (step.source === 'agent') {
    const calls = Array.isArray(step.tool_calls) ? step.tool_calls.map((call) => toolCall(asObject(call))) : [];
    out.push(
      message({
        role: 'assistant',
        content: text,
        reasoning: typeof step.reasoning_content === 'string' ? step.reasoning_content : undefined,
        tool_calls: calls.length > 0 ? calls : undefined,
        name: own && typeof own.name === 'string' ? own.name : undefined,
        meta,
      }),
    );
  } else {
    const role = own?.role === 'tool' ? 'tool' : step.source === 'system' ? 'system' : 'user';
    out.push(
      message({
        role,
        content: text,
        tool_call_id: own && typeof own.tool_call_id === 'string' ? own.tool_call_id : undefined,
        name: own && typeof own.name === 'string' ? own.name : undefined,
        meta,
      }),
    );
  }
  const results = Array.isArray(asObject(step.observation).results) ? (asObject(step.observation).results as unknown[]) : [];
  const callNames = new Map(
    (Array.isArray(step.tool_calls) ? step.tool_calls : []).map((call) => [
      String(asObject(call).tool_call_id),
      String(asObject(call).function_name),
    ]),
  );
  const loose: string[] = [];
  const looseMeta: Json[] = [];
  for (const value of results) {
    const result = asObject(value);
    const content = atifText(result.content);
    if (written) {
      // Written by winnower: one message per result, as it was.
      const resultOwn = ownExtra(result.extra) ?? {};
      out.push(
        message({
          role: resultOwn.role === 'user' ? 'user' : 'tool',
          content,
          tool_call_id: stringOf(result.source_call_id) ?? stringOf(resultOwn.tool_call_id),
          name: typeof resultOwn.name === 'string' ? resultOwn.name : undefined,
          meta: resultOwn.meta as Json | undefined,
        }),
      );
      continue;
    }
    const id = stringOf(result.source_call_id);
    const extra = withoutKeys(result, ['source_call_id', 'content']);
    if (id !== undefined) {
      out.push(message({ role: 'tool', content, tool_call_id: id, name: callNames.get(id), meta: extra ? { atif: extra } : undefined }));
    } else {
      loose.push(content);
      if (extra) looseMeta.push(extra);
    }
  }
  if (loose.length > 0) {
    // Output without a call (terminus keystrokes, harness feedback): one observation, as Harbor's exporter joins them.
    out.push({ role: 'user', content: loose.join('\n'), meta: { observation: true, ...(looseMeta.length ? { atif: looseMeta } : {}) } });
  }
  return out;
}

function usageOf(document: Json, steps: Json[]): Usage | undefined {
  const final = asObject(document.final_metrics);
  const agentSteps = steps.filter((step) => step.source === 'agent');
  const calls = agentSteps.reduce((sum, step) => sum + (typeof step.llm_call_count === 'number' ? step.llm_call_count : 1), 0);
  const sum = (key: string) =>
    agentSteps.reduce(
      (total, step) => total + (typeof asObject(step.metrics)[key] === 'number' ? (asObject(step.metrics)[key] as number) : 0),
      0,
    );
  const prompt = typeof final.total_prompt_tokens === 'number' ? final.total_prompt_tokens : sum('prompt_tokens');
  const completion = typeof final.total_completion_tokens === 'number' ? final.total_completion_tokens : sum('completion_tokens');
  const cost = typeof final.total_cost_usd === 'number' ? final.total_cost_usd : undefined;
  if (prompt === 0 && completion === 0 && cost === undefined) return undefined;
  return { prompt_tokens: prompt, completion_tokens: completion, calls, ...(cost !== undefined ? { cost } : {}) };
}

/** The value at a validator path (`steps[2].extra.foo`), for keeping what a 1.8 document added. */
function valueAt(root: unknown, path: string): unknown {
  let value: unknown = root;
  for (const segment of path.match(/[^.[\]]+/g) ?? []) {
    if (Array.isArray(value)) value = value[Number(segment)];
    else value = asObject(value)[segment];
  }
  return value;
}

/** The root `extra` keys read into the trajectory's own fields. */
const ROOT_EXTRA_READ = ['instance_id', 'source', 'patch', 'patch_encoding', 'exit', 'exit_raw', 'resolved', WINNOWER_EXTRA];

export interface FromAtifOptions {
  /** The run name; overrides what the document says (`extra.source`, else `<agent>:<model>`), and the id. */
  source?: string;
  /** Instance id when the document's `extra.instance_id` has none (a Harbor trial's task name, the file name). */
  instanceId?: string;
}

export interface FromAtifResult {
  trajectory: Trajectory;
  /** ATIF-v1.8 keys winnower does not know (kept in `meta.atif_unknown`). */
  warnings: AtifProblem[];
}

/** Reads one ATIF document; an invalid one throws WNW_ERR_INPUT_INVALID naming the first bad field and how many there are. */
export function fromAtif(value: unknown, options: FromAtifOptions = {}): FromAtifResult {
  const validation = validateAtif(value);
  if (!validation.valid) {
    const [first] = validation.errors;
    const more = validation.errors.length > 1 ? ` (and ${validation.errors.length - 1} more problem(s))` : '';
    throw invalidRecord(first!.path || '(record)', `not valid ATIF: ${first!.message}${more}`);
  }
  const document = value as Json;
  const steps = (document.steps as unknown[]).map(asObject);
  const extra = asObject(document.extra);
  const own = ownExtra(document.extra);
  const agent = asObject(document.agent);
  const instanceId = stringOf(extra.instance_id) ?? options.instanceId;
  if (instanceId === undefined) throw invalidRecord('extra.instance_id', 'missing (the document names no task; pass an instance id)');
  const recordedSource =
    stringOf(extra.source) ?? (stringOf(agent.model_name) ? `${String(agent.name)}:${String(agent.model_name)}` : String(agent.name));
  const source = options.source ?? recordedSource;
  const written = own !== undefined;
  const messages = steps.flatMap((step) => stepMessages(step, written));
  const exitRaw = stringOf(extra.exit_raw) ?? stringOf(extra.exit);
  const exit = ExitReason.safeParse(extra.exit).data ?? 'unknown';

  let meta: Json;
  if (own && isObject(own.meta)) {
    meta = own.meta;
  } else {
    meta = {
      importer: 'atif',
      atif_version: validation.version,
      ...(document.session_id !== undefined ? { session_id: document.session_id } : {}),
      ...(document.trajectory_id !== undefined ? { trajectory_id: document.trajectory_id } : {}),
      agent: agent.name,
      agent_version: agent.version,
      ...(agent.model_name !== undefined ? { config: { model: agent.model_name } } : {}),
      ...(Array.isArray(agent.tool_definitions) ? { tools: agent.tool_definitions } : {}),
      ...(agent.extra !== undefined ? { agent_extra: agent.extra } : {}),
      ...(document.notes !== undefined ? { notes: document.notes } : {}),
      ...(document.continued_trajectory_ref !== undefined ? { continued_trajectory_ref: document.continued_trajectory_ref } : {}),
      ...(Array.isArray(document.subagent_trajectories)
        ? {
            subagents: document.subagent_trajectories.map((child) => ({
              trajectory_id: asObject(child).trajectory_id,
              steps: Array.isArray(asObject(child).steps) ? (asObject(child).steps as unknown[]).length : 0,
            })),
          }
        : {}),
      // A label the document carries is a label, as in every importer (src/formats/labels.ts reads meta.resolved).
      ...(typeof extra.resolved === 'boolean' ? { resolved: extra.resolved } : {}),
      ...(withoutKeys(extra, ROOT_EXTRA_READ) ? { atif_extra: withoutKeys(extra, ROOT_EXTRA_READ) } : {}),
    };
  }
  if (validation.warnings.length > 0) {
    meta = {
      ...meta,
      atif_unknown: Object.fromEntries(validation.warnings.map((warning) => [warning.path, valueAt(value, warning.path)])),
    };
  }
  const ownUsage = own?.usage;
  const ownId = own && options.source === undefined ? stringOf(own.id) : undefined;
  const trajectory = Trajectory.parse({
    id: ownId ?? `${source}/${instanceId}`,
    instance_id: instanceId,
    source,
    messages,
    patch:
      typeof extra.patch !== 'string'
        ? ''
        : extra.patch_encoding === 'base64'
          ? decodePatch(Buffer.from(extra.patch, 'base64'))
          : extra.patch,
    exit,
    ...(exitRaw !== undefined && exitRaw !== exit ? { exit_raw: exitRaw } : {}),
    ...(stringOf(extra.exit_raw) !== undefined ? { exit_raw: extra.exit_raw } : {}),
    ...(written ? (isObject(ownUsage) ? { usage: ownUsage } : {}) : usageOf(document, steps) ? { usage: usageOf(document, steps) } : {}),
    meta,
  });
  return { trajectory, warnings: validation.warnings };
}
