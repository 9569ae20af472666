import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { mapOpenHandsExit, openHandsExitRaw } from '../../src/formats/map-openhands-exit.js';
import { importOpenHands } from '../../src/formats/openhands.js';
import { describeRealData } from '../support/shared-data.js';
import { ownFixture, realTrajectory } from './fixture-path.js';

describe('openhands importer', () => {
  it('reads an output.jsonl record: events → messages, patch from test_result.git_patch', async () => {
    const file = ownFixture('openhands', 'acme__gadgets-201.output.jsonl');
    const { items, issues } = await importOpenHands(file);
    expect(issues).toEqual([]);
    const trajectory = items[0]!;
    const raw = JSON.parse(readFileSync(file, 'utf8')) as { test_result: { git_patch: string } };
    expect(trajectory.id).toBe('acme/coder-chat/acme__gadgets-201');
    expect(trajectory.patch).toBe(raw.test_result.git_patch);
    expect(trajectory.patch.startsWith('diff --git a/gadgets/units.py')).toBe(true);
    const count = (role: string): number => trajectory.messages.filter((m) => m.role === role).length;
    expect([count('system'), count('user'), count('assistant'), count('tool')]).toEqual([1, 2, 4, 4]);
    expect(trajectory.messages[0]!.content.startsWith('You are OpenHands agent')).toBe(true);
    expect(trajectory.messages[1]!.content.startsWith('<uploaded_files>\n/workspace/acme__gadgets__0.3')).toBe(true);
    const firstCall = trajectory.messages[2]!;
    expect(firstCall.role).toBe('assistant');
    expect(firstCall.content).toBe('Start by listing the repository.');
    expect(firstCall.tool_calls).toEqual([
      {
        id: 'toolu_01',
        type: 'function',
        function: { name: 'execute_bash', arguments: '{"command": "ls /workspace/acme__gadgets__0.3"}' },
      },
    ]);
    expect(trajectory.messages[3]).toMatchObject({
      role: 'tool',
      tool_call_id: 'toolu_01',
      name: 'execute_bash',
      meta: { observation: true, exit_code: 0 },
    });
    // two actions from one model response: one assistant turn with both calls, then both observations
    expect(trajectory.messages[4]!.tool_calls!.map((call) => call.id)).toEqual(['toolu_02', 'toolu_03']);
    expect(trajectory.messages[5]!.meta).toEqual({ observation: true, observation_type: 'read' });
    expect(trajectory.messages[6]!.meta).toEqual({ observation: true, observation_type: 'run', exit_code: 1 });
    const error = trajectory.messages.find((m) => m.meta?.observation_type === 'error')!;
    expect(error.role).toBe('user');
    expect(error.content).toBe("Parameter 'command' is expected to be one of ['view', 'create', 'str_replace', 'insert', 'undo_edit'].");
    // a call recorded without its model response is rebuilt from the action's args and thought
    expect(trajectory.messages[8]).toMatchObject({
      role: 'assistant',
      content: 'Use the exact factor.',
      meta: { action: 'edit', reconstructed: true },
    });
    expect(JSON.parse(trajectory.messages[8]!.tool_calls![0]!.function.arguments)).toEqual({
      path: '/workspace/acme__gadgets__0.3/gadgets/units.py',
      command: 'str_replace',
      old_str: 'return feet * 0.3',
      new_str: 'return feet * 0.3048',
    });
    expect(trajectory.messages.at(-1)!.tool_calls![0]!.function.name).toBe('finish');
    expect(trajectory.exit).toBe('submitted');
    expect(trajectory.exit_raw).toBe('finish');
    expect(trajectory.meta.skipped_events).toEqual({ recall: 2, agent_state_changed: 1 });
    expect(trajectory.meta).toMatchObject({
      agent_class: 'CodeActAgent',
      max_iterations: 30,
      repo: 'acme/gadgets',
      base_commit: '1a2b3c4d5e6f70819a2b3c4d5e6f70819a2b5e6f',
    });
    expect(trajectory.usage).toEqual({ prompt_tokens: 12000, completion_tokens: 300, calls: 5, cost: 0 });
  });

  it("keeps the system event's tool definitions in meta.tools (the critic's chat template is given them)", async () => {
    const file = ownFixture('openhands', 'acme__gadgets-201.output.jsonl');
    const raw = JSON.parse(readFileSync(file, 'utf8')) as { history: Array<{ action?: string; args?: { tools?: unknown[] } }> };
    const { items } = await importOpenHands(file);
    expect(items[0]!.meta.tools).toEqual(raw.history.find((event) => event.action === 'system')!.args!.tools);
    expect((items[0]!.meta.tools as unknown[]).length).toBe(3);
  });

  it('reads a bare event list (replay trajectory)', async () => {
    const { items } = await importOpenHands(ownFixture('openhands', 'hello.trajectory.json'));
    const trajectory = items[0]!;
    expect(trajectory.id).toBe('openhands/hello');
    expect(trajectory.patch).toBe('');
    expect(trajectory.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    expect(trajectory.messages[0]!.content).toBe('Create hello.py that prints hello, then finish.');
    expect(trajectory.messages[1]!.tool_calls![0]!.id).toBe('toolu_h1');
    expect(trajectory.messages[2]!.tool_call_id).toBe('toolu_h1');
    expect(trajectory.messages[3]!.tool_calls![0]!.function.name).toBe('finish');
    expect(trajectory.exit).toBe('submitted');
  });

  it('maps how a run ended', () => {
    expect(mapOpenHandsExit(openHandsExitRaw(null, 'finish', undefined))).toBe('submitted');
    expect(mapOpenHandsExit(openHandsExitRaw('RuntimeError: Agent reached maximum iteration in headless mode', 'run', undefined))).toBe(
      'step_limit',
    );
    expect(mapOpenHandsExit(openHandsExitRaw('ContextWindowExceededError: too long', 'run', undefined))).toBe('token_limit');
    expect(mapOpenHandsExit(openHandsExitRaw('Runtime died', 'finish', undefined))).toBe('error');
    expect(mapOpenHandsExit(openHandsExitRaw(undefined, 'run', 'stopped'))).toBe('cancelled');
    expect(mapOpenHandsExit(openHandsExitRaw(undefined, 'run', undefined))).toBe('unknown');
  });
});

describeRealData('openhands importer on public trajectories', 'trajectories', () => {
  it('reads an output.jsonl record: events → messages, patch from test_result.git_patch', async () => {
    const file = realTrajectory('openhands', 'ponylang__ponyc-4593.output.jsonl');
    const { items, issues } = await importOpenHands(file);
    expect(issues).toEqual([]);
    const trajectory = items[0]!;
    const raw = JSON.parse(readFileSync(file, 'utf8')) as { test_result: { git_patch: string } };
    expect(trajectory.id).toBe('openai/openrouter-llama-4-maverick/ponylang__ponyc-4593');
    expect(trajectory.patch).toBe(raw.test_result.git_patch);
    expect(trajectory.patch.startsWith('diff --git a/packages/cli/command_parser.pony')).toBe(true);
    const count = (role: string): number => trajectory.messages.filter((m) => m.role === role).length;
    expect([count('system'), count('user'), count('assistant'), count('tool')]).toEqual([1, 2, 33, 32]);
    expect(trajectory.messages[0]!.content.startsWith('You are OpenHands agent')).toBe(true);
    expect(trajectory.messages[1]!.content.startsWith('<uploaded_files>\n/workspace/ponylang__ponyc__0.1')).toBe(true);
    const firstCall = trajectory.messages[2]!;
    expect(firstCall.role).toBe('assistant');
    expect(firstCall.content.startsWith('The task involves exploring the repository')).toBe(true);
    expect(firstCall.tool_calls).toEqual([
      {
        id: 'toolu_01',
        type: 'function',
        function: { name: 'execute_bash', arguments: '{"command": "ls /workspace/ponylang__ponyc__0.1"}' },
      },
    ]);
    expect(trajectory.messages[3]).toMatchObject({
      role: 'tool',
      tool_call_id: 'toolu_01',
      name: 'execute_bash',
      meta: { observation: true, exit_code: 0 },
    });
    expect(trajectory.messages[5]!.meta).toEqual({ observation: true, observation_type: 'run', exit_code: 2 });
    const error = trajectory.messages.find((m) => m.meta?.observation_type === 'error')!;
    expect(error.role).toBe('user');
    expect(error.content).toBe("Parameter 'command' is expected to be one of ['view', 'create', 'str_replace', 'insert', 'undo_edit'].");
    expect(trajectory.messages.at(-1)!.tool_calls![0]!.function.name).toBe('finish');
    expect(trajectory.exit).toBe('submitted');
    expect(trajectory.exit_raw).toBe('finish');
    expect(trajectory.meta.skipped_events).toEqual({ recall: 2 });
    expect(trajectory.meta).toMatchObject({ agent_class: 'CodeActAgent', max_iterations: 50, repo: 'ponylang/ponyc' });
    expect(trajectory.usage).toEqual({ prompt_tokens: 410169, completion_tokens: 5156, calls: 34, cost: 0 });
  });

  it('reads a bare event list (replay trajectory)', async () => {
    const { items } = await importOpenHands(realTrajectory('openhands', 'basic.trajectory.json'));
    const trajectory = items[0]!;
    expect(trajectory.id).toBe('openhands/basic');
    expect(trajectory.patch).toBe('');
    expect(trajectory.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    expect(trajectory.messages[0]!.content).toBe(
      'Please create a simple 2048 game. No need to run it. Please finish the interaction after your finish coding.',
    );
    expect(trajectory.messages[1]!.tool_calls![0]!.id).toBe('toolu_017nBp7UfiGqyrA7j77HgtFP');
    expect(trajectory.messages[2]!.tool_call_id).toBe('toolu_017nBp7UfiGqyrA7j77HgtFP');
    expect(trajectory.messages[3]!.tool_calls![0]!.function.name).toBe('finish');
    expect(trajectory.exit).toBe('submitted');
  });
});
