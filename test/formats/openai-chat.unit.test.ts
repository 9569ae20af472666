import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { importTrajectories, labelsFromTrajectories, lookupLabel } from '../../src/formats/index.js';
import { importOpenAIChat, importWinnowerTrajectories, splitSampleSuffix } from '../../src/formats/openai-chat.js';
import { describeRealData } from '../support/shared-data.js';
import { ownFixture, realTrajectory, tempFile } from './fixture-path.js';

const OWN = ownFixture('openai-chat', 'acme__widgets-101_0.json');

describe('openai-chat importer', () => {
  it('reads a SWE-Gym row: metadata at top level, null content → "", parallel tool calls, name and tool_call_id kept', async () => {
    const { items, issues } = await importOpenAIChat(OWN);
    expect(issues).toEqual([]);
    const trajectory = items[0]!;
    const raw = JSON.parse(readFileSync(OWN, 'utf8')) as { test_result: { git_patch: string } };
    expect(trajectory.instance_id).toBe('acme__widgets-101');
    expect(trajectory.meta.instance_id_raw).toBe('acme__widgets-101_0');
    expect(trajectory.meta.sample).toBe(0);
    expect(trajectory.source).toBe('acme-coder_maxiter_30_run_1');
    expect(trajectory.id).toBe('acme-coder_maxiter_30_run_1/acme__widgets-101_0');
    expect(trajectory.patch).toBe(raw.test_result.git_patch);
    expect(trajectory.meta.resolved).toBe(true);
    expect(trajectory.meta.test_result).toMatchObject({ report: { resolved: true, failed_apply_patch: false } });
    // the harness log is not kept (large, and it is no part of the candidate); the rest of test_result is
    expect((trajectory.meta.test_result as Record<string, unknown>).test_output).toBeUndefined();
    expect((trajectory.meta.test_result as Record<string, unknown>).apply_patch_output).toContain('Applied patch widgets/core.py cleanly.');
    expect(trajectory.messages).toHaveLength(11);
    expect(trajectory.messages.filter((m) => m.role === 'tool')).toHaveLength(4);
    expect(trajectory.messages[10]).toEqual({
      role: 'assistant',
      content: '',
      tool_calls: [{ id: 'call_c5', type: 'function', function: { name: 'finish', arguments: '{}' } }],
    });
    expect(trajectory.messages[2]!.tool_calls).toHaveLength(2);
    expect(trajectory.messages[8]!.content).toBe(''); // null in the row
    expect(trajectory.messages[5]).toEqual({
      role: 'assistant',
      content: 'resize truncates with int(); rounding up with math.ceil fixes the failing case.',
    });
    const names = trajectory.messages.flatMap((m) => m.tool_calls ?? []).map((c) => c.function.name);
    expect(names).toEqual(['str_replace_editor', 'execute_bash', 'str_replace_editor', 'execute_bash', 'finish']);
    const tool = trajectory.messages.find((m) => m.role === 'tool')!;
    expect(tool.name).toBe('str_replace_editor');
    expect(tool.tool_call_id).toBe('call_c1');
    expect(tool.content.startsWith('OBSERVATION:\n')).toBe(true);
    expect(trajectory.messages[0]).not.toHaveProperty('tool_calls');
    expect(trajectory.exit).toBe('submitted');
    expect(trajectory.exit_raw).toBe('tool:finish');
    expect((trajectory.meta.tools as Array<{ function: { name: string } }>).map((t) => t.function.name)).toEqual([
      'execute_bash',
      'finish',
      'str_replace_editor',
    ]);
  });

  it('reads an unresolved row that never called finish: exit unknown, sample suffix split', async () => {
    const { items } = await importOpenAIChat(ownFixture('openai-chat', 'acme__gadgets-204_3.json'));
    expect(items.map((t) => [t.id, t.instance_id, t.meta.sample, t.meta.resolved, t.exit, t.exit_raw])).toEqual([
      ['acme-coder_maxiter_30_run_1/acme__gadgets-204_3', 'acme__gadgets-204', 3, false, 'unknown', undefined],
    ]);
    expect(items[0]!.patch.startsWith('diff --git a/gadgets/core.py')).toBe(true);
  });

  it('reads the Orchard shape {messages, tools, metadata} from JSONL', async () => {
    const rows = [
      {
        messages: [
          { role: 'system', content: 'sys' },
          {
            role: 'user',
            content: [
              { type: 'text', text: 'fix ' },
              { type: 'text', text: 'it' },
            ],
          },
          {
            role: 'assistant',
            content: null,
            tool_calls: [{ id: 'c1', type: 'function', function: { name: 'bash', arguments: { command: 'ls' } } }],
          },
          { role: 'tool', tool_call_id: 'c1', content: 'a.py' },
        ],
        metadata: {
          instance_id: 'django__django-11095',
          policy: 'qwen',
          patch: 'diff --git a/a b/a\n',
          resolved: false,
          exit: 'step_limit',
        },
      },
      { messages: [{ role: 'user', content: 'x' }], metadata: { instance_id: 'django__django-11099', source: 'qwen' } },
    ];
    const file = tempFile('orchard.jsonl', rows.map((row) => JSON.stringify(row)).join('\n') + '\n');
    const { items } = await importOpenAIChat(file);
    expect(items.map((t) => t.id)).toEqual(['qwen/django__django-11095', 'qwen/django__django-11099']);
    const [first] = items;
    expect(first!.patch).toBe('diff --git a/a b/a\n');
    expect(first!.exit).toBe('step_limit');
    expect(first!.meta.resolved).toBe(false);
    expect(first!.messages[1]!.content).toBe('fix it');
    expect(first!.messages[2]!.tool_calls![0]!.function.arguments).toBe('{"command":"ls"}');
    expect(first!.messages[3]).toEqual({ role: 'tool', content: 'a.py', tool_call_id: 'c1' });
    expect(items[1]!.exit).toBe('unknown');
  });

  it('reads every field of an Orchard row from the top level as well as metadata; the top level wins when both are set', async () => {
    const patch = 'diff --git a/a b/a\n--- a/a\n+++ b/a\n@@ -1 +1 @@\n-x\n+y\n';
    const messages = [{ role: 'user', content: 'fix it' }];
    const rows = [
      // Top-level fields only, beside a metadata object that names the instance (issue 24 item 0).
      { messages, metadata: { instance_id: 'django__django-15202' }, patch, source: 'run-a', resolved: true, exit: 'submitted' },
      // Both set: top level wins, the metadata value is kept apart.
      { messages, metadata: { instance_id: 'django__django-15203', source: 'dataset', patch: 'old' }, source: 'run-a', patch, run_id: 7 },
    ];
    const { items } = await importOpenAIChat(tempFile('orchard-top.jsonl', rows.map((row) => JSON.stringify(row)).join('\n') + '\n'));
    expect(items.map((t) => [t.id, t.source, t.patch === patch, t.meta.resolved, t.exit])).toEqual([
      ['run-a/django__django-15202', 'run-a', true, true, 'submitted'],
      ['run-a/django__django-15203', 'run-a', true, undefined, 'unknown'],
    ]);
    expect(items[1]!.meta.metadata_shadowed).toEqual({ source: 'dataset', patch: 'old' });
    expect(items[1]!.meta.run_id).toBe(7);
  });

  it('takes a row id and source from the top level, and numbers rows of one instance that nothing tells apart instead of refusing the file', async () => {
    const messages = [{ role: 'user', content: 'fix it' }];
    const withIds = [1, 2].map((n) => ({
      messages,
      metadata: { instance_id: 'django__django-15202' },
      id: `row-${n}`,
      source: `run-${n}`,
      resolved: n === 1,
    }));
    const file = tempFile('orchard-ids.jsonl', withIds.map((row) => JSON.stringify(row)).join('\n') + '\n');
    const byId = await importTrajectories(file);
    expect(byId.items.map((t) => [t.id, t.source, t.meta.resolved])).toEqual([
      ['row-1', 'run-1', true],
      ['row-2', 'run-2', false],
    ]);
    // Under a source the caller names (--source-from file, NAME=PATH), row ids are prefixed with it.
    expect((await importTrajectories(file, { sourceFrom: 'file' })).items.map((t) => t.id)).toEqual([
      'orchard-ids/row-1',
      'orchard-ids/row-2',
    ]);

    const bare = [0, 1, 2].map((n) => ({ messages, metadata: { instance_id: 'django__django-15202', resolved: n === 1 } }));
    bare.push({ messages, metadata: { instance_id: 'django__django-15203', resolved: true } });
    const { items, issues } = await importTrajectories(
      tempFile('orchard-bare.jsonl', bare.map((row) => JSON.stringify(row)).join('\n') + '\n'),
    );
    expect(issues).toEqual([]);
    expect(items.map((t) => [t.id, t.source, t.meta.row_of_instance])).toEqual([
      ['openai-chat/django__django-15202', 'openai-chat', undefined],
      ['openai-chat#2/django__django-15202', 'openai-chat#2', 2],
      ['openai-chat#3/django__django-15202', 'openai-chat#3', 3],
      ['openai-chat/django__django-15203', 'openai-chat', undefined],
    ]);
    // Each numbered row keeps its own label.
    const labels = labelsFromTrajectories(items);
    expect(items.map((t) => lookupLabel(labels, t.instance_id, t.source))).toEqual([false, true, false, true]);
  });

  it('reads winnower JSONL, one Trajectory per line, and can rename the source', async () => {
    const line = {
      id: 'p/a__b-1',
      instance_id: 'a__b-1',
      source: 'p',
      messages: [{ role: 'user', content: 'hi' }],
      patch: 'd',
      exit: 'submitted',
    };
    const file = tempFile('run.jsonl', `${JSON.stringify(line)}\n${JSON.stringify({ ...line, id: 'p/a__b-2', instance_id: 'a__b-2' })}\n`);
    const { items } = await importWinnowerTrajectories(file);
    expect(items.map((t) => [t.id, t.format, t.exit])).toEqual([
      ['p/a__b-1', 'winnower-trajectory-1', 'submitted'],
      ['p/a__b-2', 'winnower-trajectory-1', 'submitted'],
    ]);
    const renamed = await importWinnowerTrajectories(file, { source: 'q' });
    expect(renamed.items[0]!.id).toBe('q/a__b-1');
  });

  it('strips only the agent-data-protocol sample suffix', () => {
    expect(splitSampleSuffix('Project-MONAI__MONAI-5686_4')).toEqual({ instanceId: 'Project-MONAI__MONAI-5686', sample: 4 });
    expect(splitSampleSuffix('django__django-11095')).toEqual({ instanceId: 'django__django-11095' });
  });
});

describeRealData('openai-chat importer on public SWE-Gym rows', 'trajectories', () => {
  const MYPY = realTrajectory('openai-chat-tools', 'python__mypy-15976_0.json');

  it('reads a SWE-Gym row: metadata at top level, null content → "", parallel tool calls, name and tool_call_id kept', async () => {
    const { items, issues } = await importOpenAIChat(MYPY);
    expect(issues).toEqual([]);
    const trajectory = items[0]!;
    const raw = JSON.parse(readFileSync(MYPY, 'utf8')) as { test_result: { git_patch: string } };
    expect(trajectory.instance_id).toBe('python__mypy-15976');
    expect(trajectory.meta.instance_id_raw).toBe('python__mypy-15976_0');
    expect(trajectory.meta.sample).toBe(0);
    expect(trajectory.source).toBe('gpt-4o-2024-08-06_maxiter_50_N_v2.1-no-hint-train-t0-run_1');
    expect(trajectory.id).toBe('gpt-4o-2024-08-06_maxiter_50_N_v2.1-no-hint-train-t0-run_1/python__mypy-15976_0');
    expect(trajectory.patch).toBe(raw.test_result.git_patch);
    expect(trajectory.meta.resolved).toBe(true);
    expect(trajectory.meta.test_result).toMatchObject({ report: { resolved: true, failed_apply_patch: false } });
    expect((trajectory.meta.test_result as Record<string, unknown>).test_output).toBeUndefined();
    expect(trajectory.messages).toHaveLength(41);
    expect(trajectory.messages.filter((m) => m.role === 'tool')).toHaveLength(20);
    expect(trajectory.messages[40]).toEqual({
      role: 'assistant',
      content: '',
      tool_calls: [{ id: 'call_EcwAiBKjBdR3vksPM0y7LVA0', type: 'function', function: { name: 'finish', arguments: '{}' } }],
    });
    expect(trajectory.messages[25]!.tool_calls).toHaveLength(4);
    const names = trajectory.messages.flatMap((m) => m.tool_calls ?? []).map((c) => c.function.name);
    expect(names.filter((n) => n === 'str_replace_editor')).toHaveLength(15);
    expect(names.filter((n) => n === 'execute_bash')).toHaveLength(5);
    const tool = trajectory.messages.find((m) => m.role === 'tool')!;
    expect(tool.name).toBe('str_replace_editor');
    expect(tool.tool_call_id).toBe('call_wmUMCvkWsBrXZdFlTSwE3sy6');
    expect(tool.content.startsWith('OBSERVATION:\n')).toBe(true);
    expect(trajectory.messages[0]).not.toHaveProperty('tool_calls');
    expect(trajectory.exit).toBe('submitted');
    expect(trajectory.exit_raw).toBe('tool:finish');
    expect((trajectory.meta.tools as Array<{ function: { name: string } }>).map((t) => t.function.name)).toEqual([
      'execute_bash',
      'finish',
      'str_replace_editor',
    ]);
  });
});
