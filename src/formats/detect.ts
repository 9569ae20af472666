import { TRAJECTORY_FORMAT } from '../types/trajectory.js';
import { isAtifDocument } from './atif/import-atif.js';
import { isRecord } from './chat-input.js';
import { isMessageArray, isMiniSweAgentRun } from './mini-swe-agent.js';
import { isOpenHandsEventList, isOpenHandsOutput } from './openhands.js';
import { openInput } from './read-input.js';
import { isSweAgentTraj } from './swe-agent.js';
import { isKeyedPredictions, isPrediction } from './swebench-predictions.js';

/** Every trajectory format an importer reads; `format` options and errors use these names. */
export const TRAJECTORY_FORMATS = [
  'swebench-predictions',
  'openai-chat',
  'winnower',
  'mini-swe-agent',
  'swe-agent',
  'openhands',
  'atif',
] as const;
export type TrajectoryFormat = (typeof TRAJECTORY_FORMATS)[number];

export function isTrajectoryFormat(name: string): name is TrajectoryFormat {
  return (TRAJECTORY_FORMATS as readonly string[]).includes(name);
}

/** The format of one record (or whole document), from its shape; undefined when none fits. */
export function detectValueFormat(value: unknown): TrajectoryFormat | undefined {
  if (Array.isArray(value)) {
    if (isMessageArray(value)) return 'mini-swe-agent';
    if (isOpenHandsEventList(value)) return 'openhands';
    return value.length > 0 && !Array.isArray(value[0]) ? detectValueFormat(value[0]) : undefined;
  }
  if (!isRecord(value)) return undefined;
  if (value.format === TRAJECTORY_FORMAT) return 'winnower';
  if (isAtifDocument(value)) return 'atif';
  if (isMiniSweAgentRun(value)) return 'mini-swe-agent';
  if (isSweAgentTraj(value)) return 'swe-agent';
  if (isOpenHandsOutput(value)) return 'openhands';
  if (Array.isArray(value.messages)) return 'openai-chat';
  if (isPrediction(value) || isKeyedPredictions(value)) return 'swebench-predictions';
  return undefined;
}

/**
 * Detects a file's trajectory format from its content, not its name: the first parsable line of a
 * JSONL file, or the whole JSON document.
 */
export async function detectFormat(file: string, signal?: AbortSignal): Promise<TrajectoryFormat | undefined> {
  const input = await openInput(file, signal);
  if (input.layout === 'document') return detectValueFormat(input.value);
  if (input.layout === 'broken') return undefined;
  for await (const entry of input.lines()) {
    if ('value' in entry) return detectValueFormat(entry.value);
  }
  return undefined;
}
