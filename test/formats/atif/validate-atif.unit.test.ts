import { describe, expect, it } from 'vitest';
import { validateAtif } from '../../../src/formats/atif/index.js';
import { exampleAtif } from './example.js';

/** The paths of a document's errors. */
function errorPaths(document: unknown): string[] {
  return validateAtif(document).errors.map((error) => error.path);
}

describe('validateAtif', () => {
  it('accepts the format example, with no warnings', () => {
    const result = validateAtif(exampleAtif());
    expect(result).toEqual({ valid: true, version: 'ATIF-v1.7', errors: [], warnings: [] });
  });

  it('accepts an observation on a user step, as Harbor does', () => {
    const document = exampleAtif();
    document.steps[1].observation = { results: [{ content: 'seen' }] };
    expect(validateAtif(document).valid).toBe(true);
  });

  // The five changes Harbor's own models reject (the sixth, ATIF-v1.8, winnower reads leniently).
  it.each([
    [
      'a source_call_id naming no call of its step',
      (d: any) => (d.steps[2].observation.results[0].source_call_id = 'call_9'),
      'steps[2].observation.results[0].source_call_id',
    ],
    ['metrics on a user step', (d: any) => (d.steps[1].metrics = { prompt_tokens: 1 }), 'steps[1].metrics'],
    ['a root key outside extra', (d: any) => (d.patch = 'diff'), 'patch'],
    ['a step id out of sequence', (d: any) => (d.steps[3].step_id = 5), 'steps[3].step_id'],
    ['arguments as a JSON string', (d: any) => (d.steps[2].tool_calls[0].arguments = '{"cmd":"ls"}'), 'steps[2].tool_calls[0].arguments'],
  ])('rejects %s', (_name, change, path) => {
    const document = exampleAtif();
    change(document);
    const result = validateAtif(document);
    expect(result.valid).toBe(false);
    expect(result.errors.map((error) => error.path)).toEqual([path]);
  });

  it.each([
    ['no steps', (d: any) => (d.steps = []), 'steps'],
    ['an unknown key on a step', (d: any) => (d.steps[0].role = 'system'), 'steps[0].role'],
    ['an agent without a version', (d: any) => delete d.agent.version, 'agent.version'],
    ['a bad source', (d: any) => (d.steps[0].source = 'assistant'), 'steps[0].source'],
    ['tool calls on a system step', (d: any) => (d.steps[0].tool_calls = []), 'steps[0].tool_calls'],
    ['reasoning on a user step', (d: any) => (d.steps[1].reasoning_content = 'hm'), 'steps[1].reasoning_content'],
    ['metrics with llm_call_count 0', (d: any) => (d.steps[3].llm_call_count = 0), 'steps[3].metrics'],
    ['a negative llm_call_count', (d: any) => (d.steps[3].llm_call_count = -1), 'steps[3].llm_call_count'],
    ['a timestamp that is not ISO 8601', (d: any) => (d.steps[1].timestamp = 'yesterday'), 'steps[1].timestamp'],
    ['a negative total_steps', (d: any) => (d.final_metrics.total_steps = -1), 'final_metrics.total_steps'],
    ['an unknown version', (d: any) => (d.schema_version = 'ATIF-v2.0'), 'schema_version'],
    [
      'a ref holding only a session_id',
      (d: any) => (d.steps[2].observation.results[0].subagent_trajectory_ref = [{ session_id: 's' }]),
      'steps[2].observation.results[0].subagent_trajectory_ref[0]',
    ],
    [
      'an image of an unknown media type',
      (d: any) => (d.steps[1].message = [{ type: 'image', source: { media_type: 'image/bmp', path: 'a.bmp' } }]),
      'steps[1].message[0].source.media_type',
    ],
    [
      'a content part with text and source',
      (d: any) => (d.steps[1].message = [{ type: 'text', text: 'a', source: { media_type: 'image/png', path: 'a.png' } }]),
      'steps[1].message[0]',
    ],
    [
      'audio in a v1.7 document',
      (d: any) => (d.steps[1].message = [{ type: 'audio', source: { media_type: 'audio/wav', path: 'a.wav' } }]),
      'schema_version',
    ],
    [
      'an embedded subagent without a trajectory_id',
      (d: any) =>
        (d.subagent_trajectories = [
          { schema_version: 'ATIF-v1.7', agent: { name: 'a', version: '1' }, steps: [{ step_id: 1, source: 'user', message: 'x' }] },
        ]),
      'subagent_trajectories[0].trajectory_id',
    ],
  ])('rejects %s', (_name, change, path) => {
    const document = exampleAtif();
    change(document);
    expect(errorPaths(document)).toContain(path);
  });

  it('holds older documents to their own version: no 1.7 fields in 1.5, a session_id up to 1.6', () => {
    const document = exampleAtif();
    document.schema_version = 'ATIF-v1.5';
    delete document.session_id;
    expect(errorPaths(document)).toEqual([
      'session_id',
      'steps[2].llm_call_count',
      'steps[2].observation.results[1].extra',
      'steps[3].llm_call_count',
    ]);
    document.schema_version = 'ATIF-v1.4';
    expect(errorPaths(document)).toContain('agent.tool_definitions');
    document.schema_version = 'ATIF-v1.0';
    document.extra = undefined;
    delete document.extra;
    expect(errorPaths(document)).not.toContain('extra');
  });

  it('collects every problem, not only the first', () => {
    const document = exampleAtif();
    document.steps[0].step_id = 9;
    document.steps[2].tool_calls[1].arguments = 'ls';
    document.agent.color = 'blue';
    expect(errorPaths(document)).toEqual(['agent.color', 'steps[0].step_id', 'steps[2].tool_calls[1].arguments']);
  });

  it('reads ATIF-v1.8 leniently: audio is known, unknown keys are warnings', () => {
    const document = exampleAtif();
    document.schema_version = 'ATIF-v1.8';
    document.steps[1].message = [{ type: 'audio', source: { media_type: 'audio/wav', path: 'ask.wav', duration_sec: 2.5 } }];
    document.steps[3].sentiment = 'calm';
    const result = validateAtif(document);
    expect(result.valid).toBe(true);
    expect(result.warnings).toEqual([{ path: 'steps[3].sentiment', message: 'unknown key, kept under extra' }]);
  });

  it('rejects what is not a document at all', () => {
    expect(validateAtif([]).valid).toBe(false);
    expect(errorPaths({})).toEqual(['schema_version', 'agent', 'steps']);
  });
});
