import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { WinnowerError } from '../../../src/errors.js';
import { atifUnknownWarning, fromAtif } from '../../../src/formats/atif/index.js';
import { importTrajectories } from '../../../src/formats/index.js';
import { exampleAtif } from './example.js';
import { tempDir } from '../../support/temp-dir.js';

/** The example held to an older version: what that version lacks removed. */
function asVersion(minor: number) {
  const document = exampleAtif();
  document.schema_version = `ATIF-v1.${minor}`;
  if (minor < 7) {
    for (const step of document.steps) delete step.llm_call_count;
    delete document.steps[2].observation.results[1].extra;
  }
  if (minor < 5) delete document.agent.tool_definitions;
  if (minor < 1) delete document.extra;
  return document;
}

describe('fromAtif', () => {
  it.each([0, 1, 2, 3, 4, 5, 6, 7])('reads ATIF-v1.%i', (minor) => {
    const { trajectory, warnings } = fromAtif(asVersion(minor), { instanceId: 'fix-median' });
    expect(warnings).toEqual([]);
    expect(trajectory.messages.map((message) => message.role)).toEqual(['system', 'user', 'assistant', 'tool', 'tool', 'assistant']);
    expect(trajectory).toMatchObject({
      instance_id: 'fix-median',
      source: 'winnower-agent:qwen3-coder',
      id: 'winnower-agent:qwen3-coder/fix-median',
    });
    expect(trajectory.meta).toMatchObject({
      importer: 'atif',
      atif_version: `ATIF-v1.${minor}`,
      session_id: 'run-7f3a',
      agent: 'winnower-agent',
    });
  });

  it('maps an agent step to an assistant message and its results to tool messages, keeping what has no field in meta', () => {
    const { trajectory } = fromAtif(exampleAtif());
    const [, user, assistant, first, second, last] = trajectory.messages;
    expect(user!.meta).toEqual({ timestamp: '2026-09-01T12:00:00Z' });
    expect(assistant).toMatchObject({
      role: 'assistant',
      content: '',
      reasoning: 'Look at the code first.',
      tool_calls: [
        { id: 'call_1', type: 'function', function: { name: 'bash', arguments: '{"cmd":"cat /app/stats.py"}' } },
        { id: 'call_2', type: 'function', function: { name: 'bash', arguments: '{"cmd":"python -m pytest -q"}' } },
      ],
      meta: { metrics: { prompt_tokens: 812, completion_tokens: 64, cached_tokens: 512 } },
    });
    expect(first).toEqual({ role: 'tool', tool_call_id: 'call_1', name: 'bash', content: 'def median(xs): ...' });
    expect(second).toMatchObject({ tool_call_id: 'call_2', meta: { atif: { extra: { exit_code: 1 } } } });
    expect(last).toMatchObject({
      role: 'assistant',
      content: 'Fixed the even-length branch; all tests pass.',
      meta: { atif_extra: { finish_reason: 'stop' } },
    });
    expect(trajectory).toMatchObject({ exit: 'submitted', patch: '', usage: { prompt_tokens: 1802, completion_tokens: 85, calls: 2 } });
    expect(trajectory.meta.tools).toEqual(exampleAtif().agent.tool_definitions);
  });

  it('joins results without a call into one user observation, flattens content parts, and keeps raw arguments', () => {
    const document = exampleAtif();
    document.steps[3].observation = {
      results: [
        { content: 'screen 1' },
        {
          content: [
            { type: 'text', text: 'screen 2' },
            { type: 'image', source: { media_type: 'image/png', path: 'images/s.png' } },
          ],
        },
      ],
    };
    document.steps[2].tool_calls[0].extra = { raw_arguments: '{"cmd": "cat /app/stats.py"}' };
    document.steps[1].is_copied_context = true;
    const { trajectory } = fromAtif(document);
    expect(trajectory.messages.at(-1)).toEqual({
      role: 'user',
      content: 'screen 1\nscreen 2\n[image: images/s.png]',
      meta: { observation: true },
    });
    expect(trajectory.messages[2]!.tool_calls![0]!.function.arguments).toBe('{"cmd": "cat /app/stats.py"}');
    expect(trajectory.messages[1]!.meta).toMatchObject({ is_copied_context: true });
  });

  it('sums step metrics when there are no final metrics, and names the source after the run when asked', () => {
    const document = exampleAtif();
    delete document.final_metrics;
    const { trajectory } = fromAtif(document, { source: 'run-b' });
    expect(trajectory.usage).toEqual({ prompt_tokens: 1802, completion_tokens: 85, calls: 2 });
    expect(trajectory).toMatchObject({ source: 'run-b', id: 'run-b/fix-median' });
  });

  it('reads ATIF-v1.8, keeps the keys it does not know in meta.atif_unknown, and says so', () => {
    const document = exampleAtif();
    document.schema_version = 'ATIF-v1.8';
    document.steps[3].sentiment = { tone: 'calm' };
    document.steps[1].message = [{ type: 'audio', source: { media_type: 'audio/wav', path: 'ask.wav' } }];
    const { trajectory, warnings } = fromAtif(document);
    expect(warnings).toEqual([{ path: 'steps[3].sentiment', message: 'unknown key, kept under extra' }]);
    expect(trajectory.meta.atif_unknown).toEqual({ 'steps[3].sentiment': { tone: 'calm' } });
    expect(trajectory.messages[1]!.content).toBe('[audio: ask.wav]');
    expect(atifUnknownWarning([trajectory])?.message).toMatch(/1 ATIF-v1\.8 candidate\(s\).*steps\[3\]\.sentiment/);
    expect(atifUnknownWarning([fromAtif(exampleAtif()).trajectory])).toBeUndefined();
  });

  it('refuses an invalid document naming the first bad field and the count, and one that names no task', () => {
    const document = exampleAtif();
    document.steps[0].step_id = 3;
    document.steps[2].tool_calls[0].arguments = 'ls';
    const error = (() => {
      try {
        fromAtif(document);
      } catch (caught) {
        return caught;
      }
    })();
    expect(WinnowerError.isInstance(error) && error.details.field).toBe('steps[0].step_id');
    expect((error as Error).message).toMatch(/must be 1 .*and 1 more/);
    const anonymous = exampleAtif();
    delete anonymous.extra;
    expect(() => fromAtif(anonymous)).toThrow(/instance id/);
  });
});

describe('importAtif', () => {
  it("names a Harbor trial's trajectory after the trial's task", async () => {
    const trial = join(tempDir('atif-trial-'), 'fix-median__AbC1234');
    mkdirSync(join(trial, 'agent'), { recursive: true });
    const document = exampleAtif();
    delete document.extra;
    writeFileSync(join(trial, 'agent', 'trajectory.json'), JSON.stringify(document));
    writeFileSync(join(trial, 'result.json'), JSON.stringify({ task_name: 'winnower/fix-median', trial_name: 'fix-median__AbC1234' }));
    const { items, issues } = await importTrajectories(join(trial, 'agent', 'trajectory.json'));
    expect(issues).toEqual([]);
    expect(items[0]!.instance_id).toBe('winnower/fix-median');
  });

  it('reports a bad document as an issue with its file and field, and goes on under skip', async () => {
    const dir = tempDir('atif-bad-');
    const bad = exampleAtif();
    bad.steps[1].metrics = { prompt_tokens: 3 };
    writeFileSync(join(dir, 'runs.jsonl'), `${JSON.stringify(bad)}\n${JSON.stringify(exampleAtif())}\n`);
    const { items, issues } = await importTrajectories(join(dir, 'runs.jsonl'), { onInvalid: 'skip' });
    expect(items).toHaveLength(1);
    expect(issues).toEqual([expect.objectContaining({ line: 1, field: 'steps[1].metrics', code: 'WNW_ERR_INPUT_INVALID' })]);
  });

  it('appends the continuation segments a trajectory names, and refuses a missing one or one outside its folder', async () => {
    const dir = tempDir('atif-cont-');
    const first = exampleAtif();
    first.continued_trajectory_ref = 'trajectory.cont-1.json';
    const second = exampleAtif();
    second.steps = [{ step_id: 1, source: 'agent', message: 'Continuing after the summary.', llm_call_count: 1 }];
    second.final_metrics = { total_prompt_tokens: 100, total_completion_tokens: 10, total_steps: 1 };
    writeFileSync(join(dir, 'trajectory.json'), JSON.stringify(first, null, 2));
    writeFileSync(join(dir, 'trajectory.cont-1.json'), JSON.stringify(second, null, 2));
    const { items } = await importTrajectories(join(dir, 'trajectory.json'), { format: 'atif' });
    expect(items).toHaveLength(1);
    const whole = items[0]!;
    expect(whole.messages).toHaveLength(7);
    expect(whole.messages.at(-1)!.content).toBe('Continuing after the summary.');
    expect(whole.usage).toEqual({ prompt_tokens: 1902, completion_tokens: 95, calls: 3 });
    expect(whole.meta.continued_segments).toEqual(['trajectory.cont-1.json']);

    for (const ref of ['trajectory.cont-9.json', '../elsewhere.json', 'https://example.com/t.json']) {
      first.continued_trajectory_ref = ref;
      writeFileSync(join(dir, 'trajectory.json'), JSON.stringify(first, null, 2));
      const result = await importTrajectories(join(dir, 'trajectory.json'), { onInvalid: 'skip' });
      expect(result.items).toEqual([]);
      expect(result.issues).toEqual([
        expect.objectContaining({ field: 'continued_trajectory_ref', message: expect.stringContaining(ref) }),
      ]);
    }
  });
});
