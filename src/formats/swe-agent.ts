import { z } from 'zod';
import { ChatMessage, Trajectory, type Usage } from '../types/trajectory.js';
import { compactMessage, contentText, InputContent, InputToolCall, isRecord, toToolCalls } from './chat-input.js';
import { importRecords } from './import-records.js';
import { mapSweAgentExit } from './map-swe-agent-exit.js';
import { fileStem } from './read-input.js';
import type { ImportOptions, ImportResult, RecordContext } from './types.js';

const SweAgentMessage = z.looseObject({
  role: ChatMessage.shape.role,
  content: InputContent,
  /** 0.x: the parsed thought and action of an assistant turn. */
  thought: z.string().nullish(),
  action: z.string().nullish(),
  is_demo: z.boolean().nullish(),
  agent: z.string().nullish(),
  /** 1.x: system_prompt | action | observation | demonstration. */
  message_type: z.string().nullish(),
  tool_calls: z.array(InputToolCall).nullish(),
  /** 1.x observations answer a list of calls. */
  tool_call_ids: z.array(z.string()).nullish(),
  tool_call_id: z.string().nullish(),
});
type SweAgentMessage = z.infer<typeof SweAgentMessage>;

/** A SWE-agent `.traj` file (0.x text actions or 1.x function calling). */
export const SweAgentTraj = z.looseObject({
  environment: z.string().nullish(),
  trajectory: z.array(z.record(z.string(), z.unknown())),
  history: z.array(SweAgentMessage),
  info: z.looseObject({
    exit_status: z.string().nullish(),
    submission: z.string().nullish(),
    model_stats: z
      .looseObject({
        instance_cost: z.number().nullish(),
        tokens_sent: z.number().int().nullish(),
        tokens_received: z.number().int().nullish(),
        api_calls: z.number().int().nullish(),
      })
      .nullish(),
    swe_agent_version: z.string().nullish(),
  }),
  /** A dict in 1.x; some versions store it as a JSON string. */
  replay_config: z.union([z.record(z.string(), z.unknown()), z.string()]).nullish(),
});

/** True for a SWE-agent `.traj` object (used by detection). */
export function isSweAgentTraj(value: unknown): boolean {
  return isRecord(value) && Array.isArray(value.history) && Array.isArray(value.trajectory) && isRecord(value.info);
}

function replayConfigOf(value: z.infer<typeof SweAgentTraj>['replay_config']): Record<string, unknown> | undefined {
  if (isRecord(value)) return value;
  if (typeof value !== 'string') return undefined;
  try {
    const parsed: unknown = JSON.parse(value);
    return isRecord(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

function path(value: unknown, ...keys: string[]): unknown {
  let current = value;
  for (const key of keys) current = isRecord(current) ? current[key] : undefined;
  return current;
}

/** History entries in their roles; observations (user after an assistant turn, or `tool`) get `meta.observation`. */
function convertHistory(history: readonly SweAgentMessage[]): ChatMessage[] {
  let previous: string | undefined;
  return history.map((message) => {
    const meta: Record<string, unknown> = {};
    if (message.thought) meta.thought = message.thought;
    if (message.action) meta.action = message.action;
    if (message.is_demo) meta.is_demo = true;
    if (message.message_type) meta.message_type = message.message_type;
    const ids = message.tool_call_ids ?? [];
    if (ids.length > 1) meta.tool_call_ids = ids;
    const observation = message.role === 'tool' || (message.role === 'user' && previous === 'assistant');
    if (observation) meta.observation = true;
    previous = message.role;
    return compactMessage({
      role: message.role,
      content: contentText(message.content),
      tool_calls: toToolCalls(message.tool_calls),
      tool_call_id: message.tool_call_id ?? ids[0],
      meta: Object.keys(meta).length > 0 ? meta : undefined,
    });
  });
}

/** Converts a SWE-agent `.traj`: messages from `history`, patch = `info.submission`. */
export function sweAgentToTrajectory(value: unknown, context: RecordContext, options: ImportOptions = {}): Trajectory {
  const traj = SweAgentTraj.parse(value);
  const replay = replayConfigOf(traj.replay_config);
  const problemId = path(replay, 'problem_statement', 'id');
  const model = path(replay, 'agent', 'model', 'name');
  const instanceId = options.instanceId ?? (typeof problemId === 'string' ? problemId : fileStem(context.file));
  const source = options.source ?? (typeof model === 'string' ? model : 'swe-agent');
  const stats = traj.info.model_stats;
  const usage: Usage = {
    prompt_tokens: stats?.tokens_sent ?? 0,
    completion_tokens: stats?.tokens_received ?? 0,
    calls: stats?.api_calls ?? traj.trajectory.length,
    ...(typeof stats?.instance_cost === 'number' ? { cost: stats.instance_cost } : {}),
  };
  const functionCalling = traj.history.some((message) => (message.tool_calls?.length ?? 0) > 0);
  const meta: Record<string, unknown> = {
    importer: 'swe-agent',
    agent: 'swe-agent',
    style: functionCalling ? 'function_calling' : 'text',
    steps: traj.trajectory.length,
  };
  if (traj.environment) meta.environment = traj.environment;
  if (traj.info.swe_agent_version) meta.agent_version = traj.info.swe_agent_version;
  if (typeof model === 'string') meta.model = model;
  return Trajectory.parse({
    id: `${source}/${instanceId}`,
    instance_id: instanceId,
    source,
    messages: convertHistory(traj.history),
    patch: traj.info.submission ?? '',
    exit: mapSweAgentExit(traj.info.exit_status),
    exit_raw: traj.info.exit_status ?? undefined,
    usage,
    meta,
  });
}

/** Reads a SWE-agent `.traj` file (one JSON document), or JSONL of them. */
export function importSweAgent(file: string, options: ImportOptions = {}): Promise<ImportResult<Trajectory>> {
  return importRecords(file, options, { convert: (value, context) => sweAgentToTrajectory(value, context, options) });
}
