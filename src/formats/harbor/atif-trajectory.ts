/**
 * A winnower trajectory as an ATIF-v1.7 document, for a Harbor trial's `agent/trajectory.json`
 * (docs/harbor.md#job-and-trial-layout). The minimal mapping of OpenAI-chat messages: system and
 * user messages are steps of their own, an assistant message is an agent step with its tool calls
 * (arguments parsed into objects), and tool results join the observation of the agent step that
 * called them, never a step of their own. To be replaced by the project's full ATIF exporter once
 * it lands; it keeps to the same rules, so the files do not change meaning.
 */
import type { ChatMessage, Trajectory } from '../../types/trajectory.js';

export const ATIF_VERSION = 'ATIF-v1.7';

type Step = Record<string, unknown> & { step_id: number; source: 'system' | 'user' | 'agent' };

/** The ATIF document of `trajectory`; `agent` names what produced it. */
export function trajectoryToAtif(
  trajectory: Trajectory,
  agent: { name: string; version: string; model?: string },
): Record<string, unknown> {
  const steps: Step[] = [];
  const add = (step: Omit<Step, 'step_id'>): Step => {
    const full = { step_id: steps.length + 1, ...step } as Step;
    steps.push(full);
    return full;
  };
  let lastAgent: Step | undefined;
  for (const message of trajectory.messages) {
    if (message.role === 'system' || message.role === 'user') {
      add({ source: message.role, message: message.content });
    } else if (message.role === 'assistant') {
      lastAgent = add({
        source: 'agent',
        message: message.content,
        ...(message.reasoning ? { reasoning_content: message.reasoning } : {}),
        ...(message.tool_calls?.length ? { tool_calls: message.tool_calls.map(toolCall) } : {}),
        llm_call_count: 1,
      });
    } else {
      addResult(lastAgent, message, add);
    }
  }
  // ATIF needs one step at least; a patch-only candidate has no conversation.
  if (steps.length === 0) add({ source: 'system', message: '' });
  const usage = trajectory.usage;
  return {
    schema_version: ATIF_VERSION,
    session_id: trajectory.id,
    agent: { name: agent.name, version: agent.version, ...(agent.model ? { model_name: agent.model } : {}) },
    steps,
    ...(trajectory.messages.length === 0 ? { notes: 'no conversation was recorded for this candidate' } : {}),
    final_metrics: {
      ...(usage ? { total_prompt_tokens: usage.prompt_tokens, total_completion_tokens: usage.completion_tokens } : {}),
      total_steps: steps.length,
    },
    extra: { instance_id: trajectory.instance_id, exit: trajectory.exit, patch: trajectory.patch },
  };
}

function toolCall(call: NonNullable<ChatMessage['tool_calls']>[number]): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(call.function.arguments);
  } catch {
    parsed = undefined;
  }
  const isObject = typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed);
  return {
    tool_call_id: call.id,
    function_name: call.function.name,
    arguments: isObject ? parsed : {},
    ...(isObject ? {} : { extra: { raw_arguments: call.function.arguments } }),
  };
}

/** A tool message: a result on the agent step that made the call; an id that matches no call there stays in `extra`. */
function addResult(step: Step | undefined, message: ChatMessage, add: (step: Omit<Step, 'step_id'>) => Step): void {
  if (!step) {
    add({ source: 'user', message: message.content });
    return;
  }
  const calls = (step.tool_calls as Array<{ tool_call_id: string }> | undefined) ?? [];
  const matches = message.tool_call_id !== undefined && calls.some((call) => call.tool_call_id === message.tool_call_id);
  const result = matches
    ? { source_call_id: message.tool_call_id, content: message.content }
    : { content: message.content, ...(message.tool_call_id ? { extra: { tool_call_id: message.tool_call_id } } : {}) };
  const observation = (step.observation as { results: unknown[] } | undefined) ?? { results: [] };
  observation.results.push(result);
  step.observation = observation;
}
