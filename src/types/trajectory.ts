import { z } from 'zod';

export const TRAJECTORY_FORMAT = 'winnower-trajectory-1';

/** An OpenAI-style function call made by the assistant. */
export const ToolCall = z.object({
  id: z.string(),
  type: z.literal('function').default('function'),
  function: z.object({ name: z.string(), arguments: z.string() }),
});
export type ToolCall = z.infer<typeof ToolCall>;

/** One chat message in OpenAI format; `meta` keeps per-message extras (exit code, timings, raw). */
export const ChatMessage = z.object({
  role: z.enum(['system', 'user', 'assistant', 'tool']),
  /** Text content; assistant turns that only call tools have "". */
  content: z.string(),
  /** Model reasoning kept apart from `content` (e.g. deepseek `reasoning_content`). */
  reasoning: z.string().optional(),
  tool_calls: z.array(ToolCall).optional(),
  tool_call_id: z.string().optional(),
  name: z.string().optional(),
  meta: z.record(z.string(), z.unknown()).optional(),
});
export type ChatMessage = z.infer<typeof ChatMessage>;

/** Why a rollout ended, unified across agents; the agent's own word is kept in `exit_raw`. */
export const ExitReason = z.enum(['submitted', 'step_limit', 'token_limit', 'timeout', 'error', 'cancelled', 'unknown']);
export type ExitReason = z.infer<typeof ExitReason>;

export const Usage = z.object({
  prompt_tokens: z.number().int().nonnegative().default(0),
  completion_tokens: z.number().int().nonnegative().default(0),
  calls: z.number().int().nonnegative().default(0),
  cost: z.number().nonnegative().optional(),
});
export type Usage = z.infer<typeof Usage>;

/** A candidate: what an agent did for one instance and the patch it produced. */
export const Trajectory = z.object({
  format: z.literal(TRAJECTORY_FORMAT).default(TRAJECTORY_FORMAT),
  /** Unique across all candidates of a run, e.g. `<source>/<instance_id>`. */
  id: z.string().min(1),
  instance_id: z.string().min(1),
  /** Policy or submission name (a predictions file's model_name_or_path, a rollout's policy). */
  source: z.string().min(1),
  /** Empty for patch-only candidates (SWE-bench prediction files). */
  messages: z.array(ChatMessage).default([]),
  /** Unified diff; may be empty. */
  patch: z.string().default(''),
  exit: ExitReason.default('unknown'),
  exit_raw: z.string().optional(),
  usage: Usage.optional(),
  /** Importer name, version, timings, anything else worth keeping. */
  meta: z.record(z.string(), z.unknown()).default({}),
});
export type Trajectory = z.infer<typeof Trajectory>;
export type TrajectoryInput = z.input<typeof Trajectory>;
