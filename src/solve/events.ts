/** Progress events of a job, named noun-action; the server streams them as SSE. */
export type JobEventBody =
  | { type: 'job-start'; n: number; waves: number[] }
  | { type: 'rollout-start'; index: number; wave: number }
  | { type: 'rollout-finish'; index: number; status: 'finished' | 'failed' | 'cancelled'; exit: string; steps: number; patch_bytes: number; error?: string }
  | { type: 'rollout-skip'; index: number; reason: string }
  | { type: 'score-available'; index: number; value: number | null; error?: string }
  | { type: 'verify-finish'; index: number; status: string; resolved: boolean }
  | { type: 'stop-rule'; index: number; reason: string }
  | { type: 'selection'; chosen_index: number | null; trajectory_id: string | null; reason: string }
  | { type: 'job-finish'; status: string; error?: string };

export type JobEvent = JobEventBody & { seq: number; time: string };

export type JobEventListener = (event: JobEvent) => void;
