import { z } from 'zod';
import { ChatMessage, Trajectory, type Usage } from '../types/trajectory.js';
import { compactMessage, contentText, InputContent, InputToolCall, isRecord, parseReturnCode, toToolCalls } from './chat-input.js';
import { importRecords } from './import-records.js';
import { mapMiniSweAgentExit } from './map-mini-swe-agent-exit.js';
import { fileStem } from './read-input.js';
import type { ImportOptions, ImportResult, RecordContext } from './types.js';

const MiniMessage = z.looseObject({
  role: z.union([ChatMessage.shape.role, z.literal('exit')]),
  content: InputContent,
  tool_calls: z.array(InputToolCall).nullish(),
  tool_call_id: z.string().nullish(),
  reasoning_content: z.string().nullish(),
  extra: z.record(z.string(), z.unknown()).nullish(),
});
type MiniMessage = z.infer<typeof MiniMessage>;

/** A saved mini-swe-agent run: `trajectory_format` `mini-swe-agent-1` (text) or `-1.1` (tool calls). */
export const MiniSweAgentRun = z.looseObject({
  info: z.looseObject({
    exit_status: z.string().nullish(),
    submission: z.string().nullish(),
    mini_version: z.string().nullish(),
    model_stats: z.looseObject({ instance_cost: z.number().nullish(), api_calls: z.number().int().nullish() }).nullish(),
    config: z.record(z.string(), z.unknown()).nullish(),
    exception_str: z.string().nullish(),
  }),
  messages: z.array(MiniMessage),
  trajectory_format: z.string().nullish(),
  instance_id: z.string().nullish(),
});

/** mini-swe-agent's golden test data: a bare array of messages, no `info`. */
export const MiniSweAgentMessages = z.array(MiniMessage);

/** The echo that makes mini-swe-agent submit (v1 and v2 spellings). */
const SUBMIT_SENTINEL = /\b(?:MINI_SWE_AGENT_FINAL_OUTPUT|COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT)\b/;
/** The single action block of a text-mode turn: ```bash or ```mswea_bash_command. */
const ACTION_BLOCK = /```(?:bash|mswea_bash_command)\s*\n([\s\S]*?)\n```/;

/** True for the saved-run object (used by detection). */
export function isMiniSweAgentRun(value: unknown): boolean {
  if (!isRecord(value)) return false;
  if (typeof value.trajectory_format === 'string') return value.trajectory_format.startsWith('mini-swe-agent');
  return isRecord(value.info) && 'mini_version' in value.info && Array.isArray(value.messages);
}

/** True for a bare array of `{role, content}` messages (used by detection). */
export function isMessageArray(value: unknown): boolean {
  return (
    Array.isArray(value) && value.length > 0 && value.every((item) => isRecord(item) && typeof item.role === 'string' && 'content' in item)
  );
}

function actionOf(message: MiniMessage, text: string): string | undefined {
  const actions = message.extra?.actions;
  if (Array.isArray(actions) && actions.length > 0) {
    const commands = actions.map((action) => (isRecord(action) && typeof action.command === 'string' ? action.command : ''));
    return commands.join('\n');
  }
  return ACTION_BLOCK.exec(text)?.[1];
}

interface Converted {
  messages: ChatMessage[];
  usage: { prompt_tokens: number; completion_tokens: number };
  exitMessage?: string;
  /** The last action submitted, so the output after it is the patch (bare message arrays). */
  submittedOutput?: string;
}

/**
 * Messages stay in their roles. A `user` message that answers an assistant turn is an observation:
 * `meta.observation = true` and `meta.exit_code` from `<returncode>`. `tool` messages (v1.1) get the
 * same meta. The final `exit` message is not a chat message; its text goes to the trajectory meta.
 */
function convertMessages(input: readonly MiniMessage[]): Converted {
  const out: Converted = { messages: [], usage: { prompt_tokens: 0, completion_tokens: 0 } };
  let previous: string | undefined;
  let lastAction: string | undefined;
  for (const message of input) {
    const content = contentText(message.content);
    if (message.role === 'exit') {
      out.exitMessage = content;
      continue;
    }
    const meta: Record<string, unknown> = {};
    if (message.role === 'assistant') {
      const action = actionOf(message, content);
      if (action !== undefined) meta.action = action;
      lastAction = action;
      const cost = message.extra?.cost;
      if (typeof cost === 'number') meta.cost = cost;
      const response = message.extra?.response;
      const usage = isRecord(response) && isRecord(response.usage) ? response.usage : undefined;
      if (usage) {
        out.usage.prompt_tokens += typeof usage.prompt_tokens === 'number' ? usage.prompt_tokens : 0;
        out.usage.completion_tokens += typeof usage.completion_tokens === 'number' ? usage.completion_tokens : 0;
      }
    }
    const observation = message.role === 'tool' || (message.role === 'user' && (previous === 'assistant' || previous === 'tool'));
    if (observation) {
      meta.observation = true;
      const recorded = message.extra?.returncode;
      const exitCode = typeof recorded === 'number' ? recorded : parseReturnCode(content);
      if (exitCode !== undefined) meta.exit_code = exitCode;
      if (lastAction !== undefined && SUBMIT_SENTINEL.test(lastAction)) out.submittedOutput = content;
    }
    out.messages.push(
      compactMessage({
        role: message.role,
        content,
        reasoning: message.reasoning_content ?? undefined,
        tool_calls: toToolCalls(message.tool_calls),
        tool_call_id: message.tool_call_id ?? undefined,
        meta: Object.keys(meta).length > 0 ? meta : undefined,
      }),
    );
    previous = message.role;
  }
  return out;
}

/** Converts a saved mini-swe-agent run (v1 text or v1.1 tool calls). Patch = `info.submission`. */
export function miniSweAgentRunToTrajectory(value: unknown, context: RecordContext, options: ImportOptions = {}): Trajectory {
  const run = MiniSweAgentRun.parse(value);
  const { info } = run;
  const converted = convertMessages(run.messages);
  const config = info.config ?? {};
  const model = isRecord(config.model) && typeof config.model.model_name === 'string' ? config.model.model_name : undefined;
  const instanceId = options.instanceId ?? run.instance_id ?? fileStem(context.file);
  const source = options.source ?? model ?? 'mini-swe-agent';
  const usage: Usage = {
    ...converted.usage,
    calls: info.model_stats?.api_calls ?? converted.messages.filter((message) => message.role === 'assistant').length,
    ...(typeof info.model_stats?.instance_cost === 'number' ? { cost: info.model_stats.instance_cost } : {}),
  };
  const patch = info.submission ?? '';
  const meta: Record<string, unknown> = {
    importer: 'mini-swe-agent',
    agent: 'mini-swe-agent',
    trajectory_format: run.trajectory_format ?? undefined,
    agent_version: info.mini_version ?? undefined,
    model,
    agent_type: typeof config.agent_type === 'string' ? config.agent_type : undefined,
  };
  if (info.exception_str) meta.exception = info.exception_str;
  if (converted.exitMessage !== undefined && converted.exitMessage !== patch && converted.exitMessage !== info.exception_str) {
    meta.exit_message = converted.exitMessage;
  }
  return Trajectory.parse({
    id: `${source}/${instanceId}`,
    instance_id: instanceId,
    source,
    messages: converted.messages,
    patch,
    exit: mapMiniSweAgentExit(info.exit_status),
    exit_raw: info.exit_status ?? undefined,
    usage,
    meta: Object.fromEntries(Object.entries(meta).filter(([, field]) => field !== undefined)),
  });
}

/**
 * Converts a bare message array (mini-swe-agent's golden test data). Without `info`, the run counts
 * as submitted when its last action echoed the submit sentinel; the output of that action is the patch.
 */
export function miniSweAgentMessagesToTrajectory(value: unknown, context: RecordContext, options: ImportOptions = {}): Trajectory {
  const converted = convertMessages(MiniSweAgentMessages.parse(value));
  const instanceId = options.instanceId ?? fileStem(context.file);
  const source = options.source ?? 'mini-swe-agent';
  const submitted = converted.submittedOutput !== undefined;
  return Trajectory.parse({
    id: `${source}/${instanceId}`,
    instance_id: instanceId,
    source,
    messages: converted.messages,
    patch: converted.submittedOutput ?? '',
    exit: submitted ? mapMiniSweAgentExit('Submitted') : 'unknown',
    exit_raw: submitted ? 'Submitted' : undefined,
    meta: { importer: 'mini-swe-agent', agent: 'mini-swe-agent', exit_inferred: true },
  });
}

/** Reads a mini-swe-agent `.traj.json` (saved run or bare message array), or JSONL of saved runs. */
export function importMiniSweAgent(file: string, options: ImportOptions = {}): Promise<ImportResult<Trajectory>> {
  return importRecords(file, options, {
    convert: (value, context) =>
      Array.isArray(value)
        ? miniSweAgentMessagesToTrajectory(value, context, options)
        : miniSweAgentRunToTrajectory(value, context, options),
    split: (document) =>
      Array.isArray(document) && !isMessageArray(document)
        ? document.map((value, index) => ({ value, record: index }))
        : [{ value: document }],
  });
}
