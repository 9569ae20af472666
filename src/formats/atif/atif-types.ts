/** The ATIF document shapes winnower writes and reads (docs/formats.md#atif-out). */

export type AtifContentPart =
  | { type: 'text'; text: string }
  | { type: 'image' | 'audio'; source: { media_type: string; path: string; duration_sec?: number } };

export type AtifContent = string | AtifContentPart[];

export interface AtifToolCall {
  tool_call_id: string;
  function_name: string;
  arguments: Record<string, unknown>;
  extra?: Record<string, unknown>;
}

export interface AtifSubagentRef {
  session_id?: string;
  trajectory_id?: string;
  trajectory_path?: string;
  extra?: Record<string, unknown>;
}

export interface AtifObservationResult {
  source_call_id?: string;
  content?: AtifContent | null;
  subagent_trajectory_ref?: AtifSubagentRef[];
  extra?: Record<string, unknown>;
}

export interface AtifMetrics {
  prompt_tokens?: number;
  completion_tokens?: number;
  cached_tokens?: number;
  cost_usd?: number;
  prompt_token_ids?: number[];
  completion_token_ids?: number[];
  logprobs?: number[];
  extra?: Record<string, unknown>;
}

export interface AtifStep {
  step_id: number;
  timestamp?: string;
  source: 'system' | 'user' | 'agent';
  message: AtifContent;
  model_name?: string;
  reasoning_effort?: string | number;
  reasoning_content?: string;
  tool_calls?: AtifToolCall[];
  observation?: { results: AtifObservationResult[] };
  metrics?: AtifMetrics;
  llm_call_count?: number;
  is_copied_context?: boolean;
  extra?: Record<string, unknown>;
}

export interface AtifFinalMetrics {
  total_prompt_tokens?: number;
  total_completion_tokens?: number;
  total_cached_tokens?: number;
  total_cost_usd?: number;
  total_steps?: number;
  extra?: Record<string, unknown>;
}

export interface AtifTrajectory {
  schema_version: string;
  session_id?: string;
  trajectory_id?: string;
  agent: {
    name: string;
    version: string;
    model_name?: string;
    tool_definitions?: Record<string, unknown>[];
    extra?: Record<string, unknown>;
  };
  steps: AtifStep[];
  notes?: string;
  final_metrics?: AtifFinalMetrics;
  continued_trajectory_ref?: string;
  extra?: Record<string, unknown>;
  subagent_trajectories?: AtifTrajectory[];
}
