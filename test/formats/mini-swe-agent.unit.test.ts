import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { mapMiniSweAgentExit } from '../../src/formats/map-mini-swe-agent-exit.js';
import { importMiniSweAgent } from '../../src/formats/mini-swe-agent.js';
import type { Trajectory } from '../../src/types/trajectory.js';
import { describeRealData } from '../support/shared-data.js';
import { ownFixture, realTrajectory, tempFile } from './fixture-path.js';

async function one(file: string): Promise<{ trajectory: Trajectory; raw: { info: { submission: string } } }> {
  const { items, issues } = await importMiniSweAgent(file);
  expect(issues).toEqual([]);
  expect(items).toHaveLength(1);
  return { trajectory: items[0]!, raw: JSON.parse(readFileSync(file, 'utf8')) as { info: { submission: string } } };
}

function roles(trajectory: Trajectory): Record<string, number> {
  const out: Record<string, number> = {};
  for (const message of trajectory.messages) out[message.role] = (out[message.role] ?? 0) + 1;
  return out;
}

describe('mini-swe-agent importer', () => {
  it('reads a v1 text run: bash actions, <returncode> observations kept as user messages', async () => {
    const { trajectory, raw } = await one(ownFixture('mini-swe-agent', 'text', 'acme__widgets-101.traj.json'));
    expect(trajectory.id).toBe('acme/coder-large/acme__widgets-101');
    expect(trajectory.instance_id).toBe('acme__widgets-101');
    expect(trajectory.exit).toBe('submitted');
    expect(trajectory.exit_raw).toBe('Submitted');
    expect(trajectory.patch).toBe(raw.info.submission);
    expect(trajectory.patch.startsWith('diff --git a/widgets/core.py')).toBe(true);
    expect(trajectory.messages).toHaveLength(10);
    expect(roles(trajectory)).toEqual({ system: 1, user: 5, assistant: 4 });
    const [system, task, firstAction, firstObservation] = trajectory.messages;
    expect(system!.role).toBe('system');
    expect(task!.meta).toBeUndefined();
    expect(firstAction!.meta?.action).toBe('grep -rn "def resize" widgets');
    expect(firstObservation).toEqual({
      role: 'user',
      content: '<returncode>0</returncode>\n<output>\nwidgets/core.py:19:    def resize(self, factor):\n</output>',
      meta: { observation: true, exit_code: 0 },
    });
    const observations = trajectory.messages.filter((m) => m.meta?.observation === true);
    expect(observations).toHaveLength(4);
    // a long output is cut into head, elided count and tail; its return code still reads
    expect(observations[1]!.content).toContain('<elided_chars>\n1840 characters elided\n</elided_chars>');
    expect(observations[1]!.meta?.exit_code).toBe(0);
    // the last observation is the output of the submit command (the diff): no <returncode>
    expect(observations.at(-1)!.content).toBe(raw.info.submission);
    expect(observations.at(-1)!.meta?.exit_code).toBeUndefined();
    expect(trajectory.usage).toEqual({ prompt_tokens: 5400, completion_tokens: 150, calls: 4, cost: 0.0123 });
    expect(trajectory.meta).toMatchObject({
      agent: 'mini-swe-agent',
      trajectory_format: 'mini-swe-agent-1',
      agent_version: '1.15.0',
      model: 'acme/coder-large',
    });
  });

  it('reads a v1 run that hit the step limit: no patch, a turn without an action, its format-error reply an observation', async () => {
    const { trajectory } = await one(ownFixture('mini-swe-agent', 'text', 'acme__gadgets-201.traj.json'));
    expect([trajectory.exit, trajectory.exit_raw, trajectory.patch]).toEqual(['step_limit', 'LimitsExceeded', '']);
    expect(trajectory.messages[3]!.meta).toEqual({ observation: true, exit_code: 2 });
    expect(trajectory.messages[4]!.meta).toBeUndefined();
    expect(trajectory.messages[5]!.meta).toEqual({ observation: true });
    expect(trajectory.usage).toEqual({ prompt_tokens: 1850, completion_tokens: 40, calls: 2, cost: 0.0031 });
  });

  it('reads a v1.1 tool-call run: tool role, tool_call_id, returncode from extra, exit message dropped', async () => {
    const { trajectory, raw } = await one(ownFixture('mini-swe-agent', 'toolcalls', 'acme__widgets-102.traj.json'));
    expect(trajectory.id).toBe('acme/coder-tools/acme__widgets-102');
    expect(trajectory.exit).toBe('submitted');
    expect(trajectory.patch).toBe(raw.info.submission);
    expect(roles(trajectory)).toEqual({ system: 1, user: 1, assistant: 3, tool: 3 });
    expect(trajectory.messages.some((m) => (m.role as string) === 'exit')).toBe(false);
    const calls = trajectory.messages.flatMap((m) => m.tool_calls ?? []);
    expect(calls).toHaveLength(3);
    expect(new Set(calls.map((c) => c.function.name))).toEqual(new Set(['bash']));
    const tool = trajectory.messages[3]!;
    expect(tool.role).toBe('tool');
    expect(tool.tool_call_id).toBe(trajectory.messages[2]!.tool_calls![0]!.id);
    expect(tool.meta).toEqual({ observation: true, exit_code: 0 });
    expect(trajectory.messages[5]!.meta).toEqual({ observation: true, exit_code: 1 });
    // the submit output carries no <returncode>: the code comes from extra.returncode
    expect(trajectory.messages[7]!.content).toBe(raw.info.submission);
    expect(trajectory.messages[7]!.meta).toEqual({ observation: true, exit_code: 0 });
    expect(trajectory.messages[2]!.meta).toEqual({ action: 'cat widgets/split.py', cost: 0.001 });
    expect(trajectory.messages.at(-2)!.tool_calls![0]!.function.arguments).toContain('COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT');
    expect(trajectory.meta.exit_message).toBeUndefined();
    expect(trajectory.usage).toEqual({ prompt_tokens: 3300, completion_tokens: 105, calls: 3, cost: 0.004 });
  });

  it('maps an error exit and keeps reasoning_content as reasoning', async () => {
    const { trajectory } = await one(ownFixture('mini-swe-agent', 'toolcalls', 'acme__tools-301.traj.json'));
    expect(trajectory.exit).toBe('error');
    expect(trajectory.exit_raw).toBe('InternalServerError');
    expect(trajectory.patch).toBe('');
    expect(trajectory.meta.exception).toMatch(/^litellm\.InternalServerError/);
    expect(trajectory.meta.exit_message).toBeUndefined(); // the exit message is the exception text
    expect(roles(trajectory)).toEqual({ system: 1, user: 1, assistant: 2, tool: 2 });
    const first = trajectory.messages[2]!;
    expect(first.content).toBe('');
    expect(first.reasoning).toBe("I'll start by listing the repository to find the plugin module.");
    expect(first.tool_calls).toEqual([
      { id: 'call_b1', type: 'function', function: { name: 'bash', arguments: '{"command": "ls -la /testbed"}' } },
    ]);
    expect(trajectory.usage?.calls).toBe(3);
  });

  it('reads bare message arrays (v1 and v2 sentinels): submitted when the last action echoed the sentinel', async () => {
    for (const name of ['v1_count_lines', 'v2_count_lines']) {
      const file = ownFixture('mini-swe-agent', 'messages', `${name}.traj.json`);
      const { items } = await importMiniSweAgent(file, { source: 'golden' });
      const trajectory = items[0]!;
      const raw = JSON.parse(readFileSync(file, 'utf8')) as Array<{ content: string }>;
      expect(trajectory.id).toBe(`golden/${name}`);
      expect(trajectory.messages).toHaveLength(12);
      expect(trajectory.exit).toBe('submitted');
      expect(trajectory.meta.exit_inferred).toBe(true);
      expect(trajectory.patch).toBe(raw.at(-1)!.content);
      expect(trajectory.patch.startsWith('diff --git a/count.py')).toBe(true);
      const codes = trajectory.messages.filter((m) => m.meta?.observation).map((m) => m.meta?.exit_code ?? null);
      expect(codes).toEqual([0, 1, 0, 0, null]);
      expect(trajectory.messages[2]!.meta?.action).toBe('cat count.py');
    }
  });

  it('gives a bare message array that never submitted no patch and an unknown exit', async () => {
    const raw = JSON.parse(readFileSync(ownFixture('mini-swe-agent', 'messages', 'v2_count_lines.traj.json'), 'utf8')) as unknown[];
    const { items } = await importMiniSweAgent(tempFile('cut.traj.json', JSON.stringify(raw.slice(0, 6))));
    expect([items[0]!.exit, items[0]!.patch, items[0]!.exit_raw]).toEqual(['unknown', '', undefined]);
  });

  it('maps every exit status through one switch', () => {
    expect(mapMiniSweAgentExit('Submitted')).toBe('submitted');
    expect(mapMiniSweAgentExit('LimitsExceeded')).toBe('step_limit');
    expect(mapMiniSweAgentExit('TimeExceeded')).toBe('timeout');
    expect(mapMiniSweAgentExit('ContextWindowExceededError')).toBe('token_limit');
    expect(mapMiniSweAgentExit('UserInterruption')).toBe('cancelled');
    expect(mapMiniSweAgentExit('InternalServerError')).toBe('error');
    expect(mapMiniSweAgentExit('FormatError')).toBe('error');
    expect(mapMiniSweAgentExit(undefined)).toBe('unknown');
    expect(mapMiniSweAgentExit('')).toBe('unknown');
  });
});

describeRealData('mini-swe-agent importer on public trajectories', 'trajectories', () => {
  const real = async (...parts: string[]) => one(realTrajectory(...parts));

  it('reads a v1 text run: bash actions, <returncode> observations kept as user messages', async () => {
    const { trajectory, raw } = await real('mini-swe-agent-1_text', 'django__django-10999.traj.json');
    expect(trajectory.id).toBe('google/gemini-3-pro-preview/django__django-10999');
    expect(trajectory.instance_id).toBe('django__django-10999');
    expect(trajectory.exit).toBe('submitted');
    expect(trajectory.exit_raw).toBe('Submitted');
    expect(trajectory.patch).toBe(raw.info.submission);
    expect(trajectory.patch.startsWith('diff --git a/django/utils/dateparse.py')).toBe(true);
    expect(trajectory.messages).toHaveLength(38);
    expect(roles(trajectory)).toEqual({ system: 1, user: 19, assistant: 18 });
    const [system, task, firstAction, firstObservation] = trajectory.messages;
    expect(system!.role).toBe('system');
    expect(task!.meta).toBeUndefined();
    expect(firstAction!.meta?.action).toBe('ls -R django/utils | grep dateparse');
    expect(firstObservation).toEqual({
      role: 'user',
      content: '<returncode>0</returncode>\n<output>\ndateparse.py\n</output>',
      meta: { observation: true, exit_code: 0 },
    });
    const observations = trajectory.messages.filter((m) => m.meta?.observation === true);
    expect(observations).toHaveLength(18);
    expect(observations.at(-1)!.content).toBe(raw.info.submission);
    expect(observations.at(-1)!.meta?.exit_code).toBeUndefined();
    expect(trajectory.usage).toEqual({ prompt_tokens: 115373, completion_tokens: 4833, calls: 18, cost: 0.15756699999999998 });
    expect(trajectory.meta).toMatchObject({ agent: 'mini-swe-agent', trajectory_format: 'mini-swe-agent-1', agent_version: '1.15.0' });
  });

  it('reads a v1.1 tool-call run: tool role, tool_call_id, returncode from extra, exit message dropped', async () => {
    const { trajectory, raw } = await real('mini-swe-agent-1.1_toolcalls', 'django__django-14752.traj.json');
    expect(trajectory.exit).toBe('submitted');
    expect(trajectory.patch).toBe(raw.info.submission);
    expect(roles(trajectory)).toEqual({ system: 1, user: 1, assistant: 31, tool: 30 });
    expect(trajectory.messages.some((m) => (m.role as string) === 'exit')).toBe(false);
    const calls = trajectory.messages.flatMap((m) => m.tool_calls ?? []);
    expect(calls).toHaveLength(31);
    expect(new Set(calls.map((c) => c.function.name))).toEqual(new Set(['bash']));
    const tool = trajectory.messages[3]!;
    expect(tool.role).toBe('tool');
    expect(tool.tool_call_id).toBe(trajectory.messages[2]!.tool_calls![0]!.id);
    expect(tool.meta).toEqual({ observation: true, exit_code: 0 });
    expect(trajectory.messages.at(-1)!.tool_calls![0]!.function.arguments).toContain('COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT');
    expect(trajectory.meta.exit_message).toBeUndefined();
  });

  it('maps an error exit and keeps reasoning_content as reasoning', async () => {
    const { trajectory } = await real('mini-swe-agent-1.1_toolcalls', 'pvlib__pvlib-python-1606.traj.json');
    expect(trajectory.exit).toBe('error');
    expect(trajectory.exit_raw).toBe('InternalServerError');
    expect(trajectory.patch).toBe('');
    expect(trajectory.meta.exception).toMatch(/^litellm\.InternalServerError/);
    expect(roles(trajectory)).toEqual({ system: 1, user: 1, assistant: 4, tool: 4 });
    const first = trajectory.messages[2]!;
    expect(first.content).toBe('');
    expect(first.reasoning).toMatch(/^I'll start by exploring the current directory/);
    expect(first.tool_calls).toEqual([
      { id: 'call_00_OuHuwnzky8t9nZGQvAlBm7zu', type: 'function', function: { name: 'bash', arguments: '{"command": "ls -la /testbed"}' } },
    ]);
    expect(trajectory.usage?.calls).toBe(5);
  });

  it('reads the bare message arrays of the golden test data (v1 and v2 sentinels)', async () => {
    for (const name of ['v1_github_issue', 'v2_github_issue']) {
      const file = realTrajectory('mini-swe-agent_testdata-messages', `${name}.traj.json`);
      const { items } = await importMiniSweAgent(file, { source: 'golden' });
      const trajectory = items[0]!;
      const raw = JSON.parse(readFileSync(file, 'utf8')) as Array<{ content: string }>;
      expect(trajectory.id).toBe(`golden/${name}`);
      expect(trajectory.messages).toHaveLength(22);
      expect(trajectory.exit).toBe('submitted');
      expect(trajectory.meta.exit_inferred).toBe(true);
      expect(trajectory.patch).toBe(raw.at(-1)!.content);
      expect(trajectory.patch.startsWith('diff --git a/tests/missing_colon.py')).toBe(true);
      const codes = trajectory.messages.filter((m) => m.meta?.observation).map((m) => m.meta?.exit_code ?? null);
      expect(codes).toEqual([1, 0, 0, 0, 0, 0, 0, 1, 0, null]);
      expect(trajectory.messages[2]!.meta?.action).toBe(
        'cat /Users/fuchur/Documents/24/git_sync/swe-agent-test-repo/tests/./missing_colon.py',
      );
    }
  });
});
