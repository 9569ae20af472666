import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkedAtif, fromAtif, toAtif, validateAtif } from '../../../src/formats/atif/index.js';
import { detectFormat, importTrajectories } from '../../../src/formats/index.js';
import { harnessRollout, patchOnlyCandidate, textModeRollout, toolsModeRollout } from './trajectories.js';
import { tempDir } from '../../support/temp-dir.js';

const producers = {
  'tools mode': toolsModeRollout,
  'text mode': textModeRollout,
  harness: harnessRollout,
  'patch only': patchOnlyCandidate,
};

describe('toAtif', () => {
  it.each(Object.entries(producers))('writes a valid ATIF-v1.7 document for a %s trajectory', (_name, make) => {
    const document = toAtif(make());
    expect(document.schema_version).toBe('ATIF-v1.7');
    expect(validateAtif(JSON.parse(JSON.stringify(document)))).toMatchObject({ valid: true, errors: [], warnings: [] });
    document.steps.forEach((step, index) => expect(step.step_id).toBe(index + 1));
  });

  it('puts tool results in the calling step, never in steps of their own', () => {
    const document = toAtif(toolsModeRollout());
    expect(document.steps.map((step) => step.source)).toEqual(['system', 'user', 'agent', 'agent', 'agent']);
    const results = document.steps[2]!.observation!.results;
    expect(results.map((result) => result.source_call_id)).toEqual(['call_1', 'call_2']);
    expect(results[1]!.extra).toMatchObject({ exit_code: 1 });
    expect(document.final_metrics).toEqual({
      total_prompt_tokens: 3000,
      total_completion_tokens: 120,
      total_steps: 5,
      extra: { llm_calls: 3 },
    });
    expect(document.agent).toMatchObject({ name: 'winnower', model_name: 'qwen3-coder' });
    expect(document.extra).toMatchObject({ instance_id: 'fix-median', exit: 'submitted', source: 'openai:qwen3-coder' });
  });

  it('writes arguments as objects, keeping a string that is not one (or not in canonical form) in extra.raw_arguments', () => {
    const [first, second] = toAtif(toolsModeRollout()).steps[2]!.tool_calls!;
    expect(first).toEqual({ tool_call_id: 'call_1', function_name: 'bash', arguments: { command: 'cat stats.py' } });
    expect(second).toMatchObject({
      arguments: { command: 'python -m pytest -q' },
      extra: { raw_arguments: '{ "command": "python -m pytest -q" }' },
    });
    expect(toAtif(toolsModeRollout()).steps[3]!.tool_calls![0]).toMatchObject({ arguments: {}, extra: { raw_arguments: 'not json' } });
  });

  it('makes text-mode observations results of the step before; a format nudge stays a user step', () => {
    const document = toAtif(textModeRollout());
    expect(document.steps.map((step) => step.source)).toEqual(['system', 'user', 'agent', 'agent', 'user', 'agent']);
    expect(document.steps[2]!.observation!.results).toHaveLength(1);
    expect(document.steps[2]!.observation!.results[0]!.source_call_id).toBeUndefined();
  });

  it('carries metrics only on agent steps, from the call the message recorded; an unmatched result id stays in extra', () => {
    const document = toAtif(harnessRollout());
    expect(document.agent).toMatchObject({ name: 'claude-code', version: '2.1.222' });
    expect(document.steps[3]!.metrics).toEqual({ prompt_tokens: 900, completion_tokens: 30 });
    for (const step of document.steps) if (step.source !== 'agent') expect(step.metrics).toBeUndefined();
    const [, stale] = document.steps[2]!.observation!.results;
    expect(stale!.source_call_id).toBeUndefined();
    expect(stale!.extra).toEqual({ winnower: { tool_call_id: 'toolu_stale' } });
  });

  it('gives a patch-only candidate its one required step as an empty placeholder, and says so', () => {
    const document = toAtif(patchOnlyCandidate());
    expect(document.steps).toEqual([{ step_id: 1, source: 'system', message: '', extra: { winnower: { placeholder: true } } }]);
    expect(document.notes).toMatch(/patch-only/);
  });
});

describe('toAtif then fromAtif', () => {
  it.each(Object.entries(producers))('gives the %s trajectory back unchanged: same messages, patch, exit, usage, meta', (_name, make) => {
    const trajectory = make();
    const back = fromAtif(JSON.parse(JSON.stringify(toAtif(trajectory))));
    expect(back.warnings).toEqual([]);
    expect(back.trajectory.messages).toEqual(trajectory.messages);
    expect(back.trajectory).toEqual(trajectory);
  });

  it('reads a written file back through detection and the importers', async () => {
    const dir = tempDir('atif-');
    const file = join(dir, 'candidate.json');
    writeFileSync(file, JSON.stringify(toAtif(toolsModeRollout()), null, 2));
    const jsonl = join(dir, 'candidates.jsonl');
    writeFileSync(jsonl, [textModeRollout(), harnessRollout()].map((t) => `${JSON.stringify(toAtif(t))}\n`).join(''));
    expect(await detectFormat(file)).toBe('atif');
    expect(await detectFormat(jsonl)).toBe('atif');
    const imported = await importTrajectories([file, jsonl]);
    expect(imported.issues).toEqual([]);
    expect(imported.items).toEqual([toolsModeRollout(), textModeRollout(), harnessRollout()]);
    const forced = await importTrajectories(file, { format: 'atif', source: 'run-b' });
    expect(forced.items[0]).toMatchObject({ id: 'run-b/fix-median', source: 'run-b' });
  });
});

describe('checkedAtif', () => {
  it('hands out what validates, and refuses with the path what would not', () => {
    expect(checkedAtif(toolsModeRollout())).toEqual(JSON.parse(JSON.stringify(toAtif(toolsModeRollout()))));
    // A stored trajectory that skipped its schema (a call without an id) cannot become a valid document.
    const broken = toolsModeRollout();
    (broken.messages[2]!.tool_calls![0] as { id?: string }).id = undefined;
    expect(() => checkedAtif(broken)).toThrow(
      /the ATIF written for job1\/0 is not valid: steps\[2\]\.tool_calls\[0\]\.tool_call_id: required/,
    );
  });
});
