/**
 * A validator for ATIF trajectories written from the format's rules (docs/formats.md#validation):
 * closed objects, required keys and JSON types, step ids 1…N, tool results joined to a call of
 * the same step, agent-only fields, refs that resolve, content parts. Every problem is collected,
 * with its JSON path, not only the first. winnower runs it on what it writes and on what it reads.
 */
import { ATIF_NEWEST_MINOR, ATIF_STRICT_MINOR, atifMinor } from './atif-version.js';

export interface AtifProblem {
  /** JSON path of the offending value, e.g. `steps[2].tool_calls[0].arguments`; `` for the root. */
  path: string;
  message: string;
}

export interface AtifValidation {
  valid: boolean;
  /** The document's `schema_version` when it is one winnower reads. */
  version?: string;
  errors: AtifProblem[];
  /** Only for ATIF-v1.8: keys winnower does not know, which a reader keeps under `extra`. */
  warnings: AtifProblem[];
}

/** Keys of each closed object with the minor version that introduced them. */
const ROOT_KEYS = {
  schema_version: 0,
  session_id: 0,
  trajectory_id: 7,
  agent: 0,
  steps: 0,
  notes: 0,
  final_metrics: 0,
  continued_trajectory_ref: 5,
  extra: 1,
  subagent_trajectories: 7,
};
const AGENT_KEYS = { name: 0, version: 0, model_name: 0, tool_definitions: 5, extra: 0 };
const STEP_KEYS = {
  step_id: 0,
  timestamp: 0,
  source: 0,
  message: 0,
  model_name: 0,
  reasoning_effort: 0,
  reasoning_content: 0,
  tool_calls: 0,
  observation: 0,
  metrics: 0,
  llm_call_count: 7,
  is_copied_context: 5,
  extra: 0,
};
const TOOL_CALL_KEYS = { tool_call_id: 0, function_name: 0, arguments: 0, extra: 7 };
const OBSERVATION_KEYS = { results: 0 };
const RESULT_KEYS = { source_call_id: 0, content: 0, subagent_trajectory_ref: 0, extra: 7 };
const REF_KEYS = { session_id: 0, trajectory_id: 7, trajectory_path: 0, extra: 0 };
const METRICS_KEYS = {
  prompt_tokens: 0,
  completion_tokens: 0,
  cached_tokens: 0,
  cost_usd: 0,
  prompt_token_ids: 4,
  completion_token_ids: 3,
  logprobs: 0,
  extra: 0,
};
const FINAL_METRICS_KEYS = {
  total_prompt_tokens: 0,
  total_completion_tokens: 0,
  total_cached_tokens: 0,
  total_cost_usd: 0,
  total_steps: 0,
  extra: 0,
};
/** Fields only an agent step may carry (an LLM produced them). */
const AGENT_ONLY = ['model_name', 'reasoning_effort', 'reasoning_content', 'tool_calls', 'metrics'] as const;
const IMAGE_TYPES = new Set(['image/jpeg', 'image/png', 'image/gif', 'image/webp']);
const AUDIO_TYPES = new Set(['audio/wav', 'audio/mpeg', 'audio/mp4', 'audio/aac', 'audio/ogg', 'audio/flac', 'audio/webm', 'audio/aiff']);
/** ISO 8601 date-time; a `Z` or an offset, or none (Python's fromisoformat accepts both). */
const ISO_8601 = /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/;

type Json = Record<string, unknown>;

class Checker {
  readonly errors: AtifProblem[] = [];
  readonly warnings: AtifProblem[] = [];
  constructor(readonly minor: number) {}

  error(path: string, message: string): void {
    this.errors.push({ path, message });
  }

  /** Unknown keys are errors up to 1.7 (closed objects) and warnings in 1.8 (kept under `extra`). */
  keys(value: Json, path: string, allowed: Record<string, number>): void {
    for (const key of Object.keys(value)) {
      const since = allowed[key];
      const at = join(path, key);
      if (since === undefined) {
        if (this.minor > ATIF_STRICT_MINOR) this.warnings.push({ path: at, message: 'unknown key, kept under extra' });
        else this.error(at, 'unknown key (ATIF objects are closed: custom data goes under extra)');
      } else if (since > this.minor) {
        this.error(at, `not in ATIF-v1.${this.minor} (added in ATIF-v1.${since})`);
      }
    }
  }

  required(value: Json, path: string, key: string): boolean {
    if (value[key] === undefined) {
      this.error(join(path, key), 'required');
      return false;
    }
    return true;
  }

  string(value: Json, path: string, key: string, required = false): void {
    if (value[key] === undefined) {
      if (required) this.error(join(path, key), 'required');
      return;
    }
    if (typeof value[key] !== 'string') this.error(join(path, key), 'must be a string');
  }

  object(value: Json, path: string, key: string): Json | undefined {
    const field = value[key];
    if (field === undefined) return undefined;
    if (!isObject(field)) {
      this.error(join(path, key), 'must be an object');
      return undefined;
    }
    return field;
  }

  number(value: Json, path: string, key: string, options: { integer?: boolean; min?: number } = {}): void {
    const field = value[key];
    if (field === undefined) return;
    const at = join(path, key);
    if (typeof field !== 'number' || !Number.isFinite(field)) return this.error(at, 'must be a number');
    if (options.integer && !Number.isInteger(field)) this.error(at, 'must be an integer');
    if (options.min !== undefined && field < options.min) this.error(at, `must be ≥ ${options.min}`);
  }

  integers(value: Json, path: string, key: string): void {
    const field = value[key];
    if (field === undefined) return;
    if (!Array.isArray(field) || !field.every((item) => Number.isInteger(item)))
      this.error(join(path, key), 'must be an array of integers');
  }
}

function join(path: string, key: string | number): string {
  if (typeof key === 'number') return `${path}[${key}]`;
  return path === '' ? key : `${path}.${key}`;
}

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A message or result content: a string, or (1.6 on) an array of content parts. */
function checkContent(c: Checker, value: unknown, path: string, allowNull: boolean): boolean {
  if (typeof value === 'string' || (allowNull && value === null)) return false;
  if (!Array.isArray(value) || c.minor < 6) {
    c.error(path, c.minor < 6 ? 'must be a string' : 'must be a string or an array of content parts');
    return false;
  }
  let audio = false;
  value.forEach((part, i) => {
    if (checkPart(c, part, join(path, i))) audio = true;
  });
  return audio;
}

/** Checks one content part; true when it is an audio part. */
function checkPart(c: Checker, part: unknown, path: string): boolean {
  if (!isObject(part)) {
    c.error(path, 'must be a content part object');
    return false;
  }
  c.keys(part, path, { type: 6, text: 6, source: 6 });
  if (part.text !== undefined && part.source !== undefined) c.error(path, 'a content part holds text or source, never both');
  if (part.type === 'text') {
    if (typeof part.text !== 'string') c.error(join(path, 'text'), 'required string for a text part');
    return false;
  }
  const media = part.type === 'image' ? IMAGE_TYPES : part.type === 'audio' ? AUDIO_TYPES : undefined;
  if (!media) {
    c.error(join(path, 'type'), c.minor < 8 ? 'must be "text" or "image"' : 'must be "text", "image" or "audio"');
    return false;
  }
  const source = part.source;
  if (!isObject(source)) {
    c.error(join(path, 'source'), `required object for an ${part.type} part`);
    return part.type === 'audio';
  }
  const at = join(path, 'source');
  c.keys(source, at, part.type === 'audio' ? { media_type: 8, path: 8, duration_sec: 8 } : { media_type: 6, path: 6 });
  if (typeof source.media_type !== 'string' || !media.has(source.media_type))
    c.error(join(at, 'media_type'), `must be one of ${[...media].join(', ')}`);
  c.string(source, at, 'path', true);
  if (part.type === 'audio') c.number(source, at, 'duration_sec', { min: 0 });
  return part.type === 'audio';
}

function checkRef(c: Checker, ref: unknown, path: string): void {
  if (!isObject(ref)) return c.error(path, 'must be an object');
  c.keys(ref, path, REF_KEYS);
  for (const key of ['session_id', 'trajectory_id', 'trajectory_path']) c.string(ref, path, key);
  c.object(ref, path, 'extra');
  if (c.minor >= 7) {
    if (ref.trajectory_id === undefined && ref.trajectory_path === undefined)
      c.error(path, 'a subagent ref needs trajectory_id or trajectory_path (session_id alone does not resolve)');
  } else if (ref.session_id === undefined) {
    c.error(join(path, 'session_id'), 'required');
  }
}

function checkMetrics(c: Checker, metrics: Json, path: string): void {
  c.keys(metrics, path, METRICS_KEYS);
  for (const key of ['prompt_tokens', 'completion_tokens', 'cached_tokens']) c.number(metrics, path, key, { integer: true, min: 0 });
  c.number(metrics, path, 'cost_usd', { min: 0 });
  c.integers(metrics, path, 'prompt_token_ids');
  c.integers(metrics, path, 'completion_token_ids');
  if (metrics.logprobs !== undefined && (!Array.isArray(metrics.logprobs) || !metrics.logprobs.every((p) => typeof p === 'number')))
    c.error(join(path, 'logprobs'), 'must be an array of numbers');
  c.object(metrics, path, 'extra');
}

/** Checks one step; true when its content holds an audio part. */
function checkStep(c: Checker, step: unknown, index: number, path: string): boolean {
  if (!isObject(step)) {
    c.error(path, 'must be an object');
    return false;
  }
  c.keys(step, path, STEP_KEYS);
  if (c.required(step, path, 'step_id') && step.step_id !== index + 1)
    c.error(join(path, 'step_id'), `must be ${index + 1} (step ids run 1…N in order)`);
  if (step.timestamp !== undefined && (typeof step.timestamp !== 'string' || !ISO_8601.test(step.timestamp)))
    c.error(join(path, 'timestamp'), 'must be an ISO 8601 date-time');
  const source = step.source;
  if (c.required(step, path, 'source') && source !== 'system' && source !== 'user' && source !== 'agent')
    c.error(join(path, 'source'), 'must be "system", "user" or "agent"');
  let audio = false;
  if (c.required(step, path, 'message')) audio = checkContent(c, step.message, join(path, 'message'), false);
  if (source !== 'agent' && source !== undefined) {
    for (const key of AGENT_ONLY) if (step[key] !== undefined) c.error(join(path, key), `only agent steps carry ${key}`);
  }
  if (source === 'system' && step.observation !== undefined && c.minor < 2)
    c.error(join(path, 'observation'), 'system steps carry an observation from ATIF-v1.2 on');
  c.string(step, path, 'model_name');
  if (step.reasoning_effort !== undefined && typeof step.reasoning_effort !== 'string' && typeof step.reasoning_effort !== 'number')
    c.error(join(path, 'reasoning_effort'), 'must be a string or a number');
  c.string(step, path, 'reasoning_content');
  c.number(step, path, 'llm_call_count', { integer: true, min: 0 });
  if (step.llm_call_count === 0) {
    for (const key of ['metrics', 'reasoning_content'])
      if (step[key] !== undefined) c.error(join(path, key), 'absent when llm_call_count is 0 (no LLM call made this step)');
  }
  if (step.is_copied_context !== undefined && typeof step.is_copied_context !== 'boolean')
    c.error(join(path, 'is_copied_context'), 'must be a boolean');
  c.object(step, path, 'extra');

  const callIds = new Set<string>();
  if (step.tool_calls !== undefined) {
    if (!Array.isArray(step.tool_calls)) c.error(join(path, 'tool_calls'), 'must be an array');
    else step.tool_calls.forEach((call, i) => checkToolCall(c, call, join(join(path, 'tool_calls'), i), callIds));
  }
  const observation = c.object(step, path, 'observation');
  if (observation) {
    const at = join(path, 'observation');
    c.keys(observation, at, OBSERVATION_KEYS);
    if (!Array.isArray(observation.results)) c.error(join(at, 'results'), 'required array');
    else
      observation.results.forEach((result, i) => {
        if (checkResult(c, result, join(join(at, 'results'), i), callIds)) audio = true;
      });
  }
  const metrics = c.object(step, path, 'metrics');
  if (metrics) checkMetrics(c, metrics, join(path, 'metrics'));
  return audio;
}

function checkToolCall(c: Checker, call: unknown, path: string, callIds: Set<string>): void {
  if (!isObject(call)) return c.error(path, 'must be an object');
  c.keys(call, path, TOOL_CALL_KEYS);
  c.string(call, path, 'tool_call_id', true);
  c.string(call, path, 'function_name', true);
  if (typeof call.tool_call_id === 'string') callIds.add(call.tool_call_id);
  if (c.required(call, path, 'arguments') && !isObject(call.arguments))
    c.error(join(path, 'arguments'), 'must be a JSON object (parsed arguments, not a string)');
  c.object(call, path, 'extra');
}

function checkResult(c: Checker, result: unknown, path: string, callIds: Set<string>): boolean {
  if (!isObject(result)) {
    c.error(path, 'must be an object');
    return false;
  }
  c.keys(result, path, RESULT_KEYS);
  c.string(result, path, 'source_call_id');
  if (typeof result.source_call_id === 'string' && !callIds.has(result.source_call_id))
    c.error(join(path, 'source_call_id'), `"${result.source_call_id}" matches no tool_call_id of this step`);
  const audio = result.content === undefined ? false : checkContent(c, result.content, join(path, 'content'), true);
  if (result.subagent_trajectory_ref !== undefined) {
    const at = join(path, 'subagent_trajectory_ref');
    if (!Array.isArray(result.subagent_trajectory_ref)) c.error(at, 'must be an array');
    else result.subagent_trajectory_ref.forEach((ref, i) => checkRef(c, ref, join(at, i)));
  }
  c.object(result, path, 'extra');
  return audio;
}

function checkTrajectory(value: unknown, path: string, c: Checker, embedded: boolean): void {
  if (!isObject(value)) return c.error(path, 'must be an object');
  const minor = atifMinor(value.schema_version);
  if (c.required(value, path, 'schema_version') && minor === undefined)
    c.error(
      join(path, 'schema_version'),
      `unknown version ${JSON.stringify(value.schema_version)}; known: ATIF-v1.0 … ATIF-v1.${ATIF_NEWEST_MINOR}`,
    );
  // An embedded child is checked by its own version's rules.
  const own = minor === undefined ? c : minor === c.minor ? c : new Checker(minor);
  own.keys(value, path, ROOT_KEYS);
  own.string(value, path, 'session_id', own.minor <= 6);
  own.string(value, path, 'trajectory_id', embedded);
  own.string(value, path, 'notes');
  own.string(value, path, 'continued_trajectory_ref');
  own.object(value, path, 'extra');
  const agent = own.object(value, path, 'agent');
  if (!agent) own.required(value, path, 'agent');
  else {
    const at = join(path, 'agent');
    own.keys(agent, at, AGENT_KEYS);
    own.string(agent, at, 'name', true);
    own.string(agent, at, 'version', true);
    own.string(agent, at, 'model_name');
    own.object(agent, at, 'extra');
    if (agent.tool_definitions !== undefined && (!Array.isArray(agent.tool_definitions) || !agent.tool_definitions.every(isObject)))
      own.error(join(at, 'tool_definitions'), 'must be an array of objects');
  }
  let audio = false;
  if (!Array.isArray(value.steps)) own.error(join(path, 'steps'), 'required array');
  else if (value.steps.length === 0) own.error(join(path, 'steps'), 'must hold at least one step');
  else
    value.steps.forEach((step, i) => {
      if (checkStep(own, step, i, join(join(path, 'steps'), i))) audio = true;
    });
  if (audio && own.minor < 8) own.error(join(path, 'schema_version'), 'a document with audio content must say ATIF-v1.8');
  const final = own.object(value, path, 'final_metrics');
  if (final) {
    const at = join(path, 'final_metrics');
    own.keys(final, at, FINAL_METRICS_KEYS);
    for (const key of ['total_prompt_tokens', 'total_completion_tokens', 'total_cached_tokens'])
      own.number(final, at, key, { integer: true, min: 0 });
    own.number(final, at, 'total_cost_usd', { min: 0 });
    own.number(final, at, 'total_steps', { integer: true, min: 0 });
    own.object(final, at, 'extra');
  }
  if (value.subagent_trajectories !== undefined) {
    const at = join(path, 'subagent_trajectories');
    if (!Array.isArray(value.subagent_trajectories)) own.error(at, 'must be an array');
    else {
      const ids = new Set<string>();
      value.subagent_trajectories.forEach((child, i) => {
        checkTrajectory(child, join(at, i), own, true);
        const id = isObject(child) ? child.trajectory_id : undefined;
        if (typeof id === 'string') {
          if (ids.has(id)) own.error(join(join(at, i), 'trajectory_id'), `duplicate subagent trajectory_id "${id}"`);
          ids.add(id);
        }
      });
    }
  }
  if (own !== c) {
    c.errors.push(...own.errors);
    c.warnings.push(...own.warnings);
  }
}

/**
 * Validates an ATIF document: ATIF-v1.0 … v1.7 by their closed schemas, ATIF-v1.8 with unknown
 * keys as warnings. Image paths are not checked against the disk (a document read from a stream
 * has no folder); that is the one rule of the format's file validation left out.
 */
export function validateAtif(value: unknown): AtifValidation {
  const minor = isObject(value) ? atifMinor(value.schema_version) : undefined;
  const checker = new Checker(minor ?? ATIF_STRICT_MINOR);
  checkTrajectory(value, '', checker, false);
  return {
    valid: checker.errors.length === 0,
    ...(minor !== undefined ? { version: `ATIF-v1.${minor}` } : {}),
    errors: checker.errors,
    warnings: checker.warnings,
  };
}
