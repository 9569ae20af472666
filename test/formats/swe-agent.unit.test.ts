import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { mapSweAgentExit } from '../../src/formats/map-swe-agent-exit.js';
import { importSweAgent } from '../../src/formats/swe-agent.js';
import { describeRealData } from '../support/shared-data.js';
import { ownFixture, realTrajectory, tempFile } from './fixture-path.js';

describe('swe-agent importer', () => {
  it('reads a 0.x text trajectory: history roles, demo flagged, thought/action in meta', async () => {
    const file = ownFixture('swe-agent', 'acme__widgets-102.traj');
    const { items, issues } = await importSweAgent(file);
    expect(issues).toEqual([]);
    const trajectory = items[0]!;
    const raw = JSON.parse(readFileSync(file, 'utf8')) as { info: { submission: string } };
    expect(trajectory.id).toBe('swe-agent/acme__widgets-102');
    expect(trajectory.patch).toBe(raw.info.submission);
    expect(trajectory.patch.startsWith('\ndiff --git a/widgets/split.py')).toBe(true);
    expect(trajectory.exit).toBe('submitted');
    expect(trajectory.exit_raw).toBe('submitted');
    expect(trajectory.messages).toHaveLength(8);
    expect(trajectory.messages[1]!.meta).toEqual({ is_demo: true });
    const actions = trajectory.messages.filter((m) => m.role === 'assistant').map((m) => m.meta?.action);
    expect(actions).toEqual([
      'open widgets/split.py\n',
      'edit 3:3\n    return [part.strip() for part in parts if part]\nend_of_edit\n',
      'submit\n',
    ]);
    expect(trajectory.messages[3]!.meta?.thought).toBe('Let me open the module the issue names.\n');
    // 2 observations: the final `submit` turn ends the history without one
    expect(trajectory.messages.filter((m) => m.meta?.observation)).toHaveLength(2);
    expect(trajectory.messages[4]!.content.endsWith('(Current directory: /acme__widgets)\nbash-$')).toBe(true);
    expect(trajectory.messages.at(-1)!.role).toBe('assistant');
    // the issue follows the demonstration (user after user): not an observation
    expect(trajectory.messages[2]!.meta?.observation).toBeUndefined();
    expect(trajectory.usage).toEqual({ prompt_tokens: 15230, completion_tokens: 210, calls: 3, cost: 0.0421 });
    expect(trajectory.meta).toMatchObject({ style: 'text', steps: 3, environment: 'swe_main' });
  });

  it('reads a 1.x function-calling trajectory: tool_call_ids → tool_call_id, instance id and model from replay_config', async () => {
    const file = ownFixture('swe-agent', 'acme__tools-302.function_calling.traj');
    const { items } = await importSweAgent(file);
    const trajectory = items[0]!;
    const raw = JSON.parse(readFileSync(file, 'utf8')) as { info: { submission: string } };
    expect(trajectory.id).toBe('acme/coder-tools/acme__tools-302');
    expect(trajectory.patch).toBe(raw.info.submission);
    expect(trajectory.exit).toBe('submitted');
    expect(trajectory.messages.map((m) => m.role).slice(0, 4)).toEqual(['system', 'user', 'assistant', 'tool']);
    // content parts are joined to text; \r\n is kept as recorded
    expect(trajectory.messages[1]!.content).toBe('<uploaded_files>\n/testbed\n</uploaded_files>\nload() crashes on a missing config file.');
    expect(trajectory.messages[3]!.content).toContain('1:import tomllib\r\n');
    const names = trajectory.messages.flatMap((m) => m.tool_calls ?? []).map((c) => c.function.name);
    expect(names).toEqual(['open', 'edit', 'bash', 'find_file', 'submit']);
    expect(trajectory.messages[3]!.tool_call_id).toBe('call_d1');
    expect(trajectory.messages[3]!.tool_call_id).toBe(trajectory.messages[2]!.tool_calls![0]!.id);
    // one observation answering two parallel calls: the first id, and both in meta
    expect(trajectory.messages[7]!.tool_call_id).toBe('call_d3');
    expect(trajectory.messages[7]!.meta?.tool_call_ids).toEqual(['call_d3', 'call_d4']);
    expect(trajectory.messages.at(-1)!.tool_call_id).toBe('call_submit');
    expect(trajectory.messages.filter((m) => m.role === 'tool').every((m) => m.meta?.observation === true)).toBe(true);
    expect(trajectory.meta).toMatchObject({ style: 'function_calling', model: 'acme/coder-tools', agent_version: '1.0.1', steps: 4 });
    expect(trajectory.usage).toEqual({ prompt_tokens: 0, completion_tokens: 0, calls: 0, cost: 0 });
  });

  it('reads replay_config stored as a JSON string, and names the source by option over the model', async () => {
    const raw = JSON.parse(readFileSync(ownFixture('swe-agent', 'acme__tools-302.function_calling.traj'), 'utf8')) as Record<
      string,
      unknown
    >;
    const file = tempFile('run.traj', JSON.stringify({ ...raw, replay_config: JSON.stringify(raw.replay_config) }));
    const { items } = await importSweAgent(file, { source: 'demo' });
    expect(items[0]!.id).toBe('demo/acme__tools-302');
  });

  it('maps exit statuses, autosubmissions to their limit', () => {
    expect(mapSweAgentExit('submitted')).toBe('submitted');
    expect(mapSweAgentExit('submitted (exit_cost)')).toBe('step_limit');
    expect(mapSweAgentExit('exit_context')).toBe('token_limit');
    expect(mapSweAgentExit('submitted (exit_format)')).toBe('error');
    expect(mapSweAgentExit('exit_command_timeout')).toBe('timeout');
    expect(mapSweAgentExit('exit_something_new')).toBe('error');
    expect(mapSweAgentExit(null)).toBe('unknown');
  });
});

describeRealData('swe-agent importer on public trajectories', 'trajectories', () => {
  it('reads a 0.x text trajectory: history roles, demo flagged, thought/action in meta', async () => {
    const file = realTrajectory('swe-agent-traj', 'pydicom__pydicom-1458.traj');
    const { items, issues } = await importSweAgent(file);
    expect(issues).toEqual([]);
    const trajectory = items[0]!;
    const raw = JSON.parse(readFileSync(file, 'utf8')) as { info: { submission: string } };
    expect(trajectory.id).toBe('swe-agent/pydicom__pydicom-1458');
    expect(trajectory.patch).toBe(raw.info.submission);
    expect(trajectory.patch.startsWith('\ndiff --git a/pydicom/pixel_data_handlers/numpy_handler.py')).toBe(true);
    expect(trajectory.exit).toBe('submitted');
    expect(trajectory.exit_raw).toBe('submitted');
    expect(trajectory.messages).toHaveLength(26);
    expect(trajectory.messages[1]!.meta).toEqual({ is_demo: true });
    const actions = trajectory.messages.filter((m) => m.role === 'assistant').map((m) => m.meta?.action);
    expect(actions).toHaveLength(12);
    expect(actions[0]).toBe('create reproduce_bug.py\n');
    expect(actions.at(-1)).toBe('submit\n');
    // 11 observations: the final `submit` turn ends the history without one
    expect(trajectory.messages.filter((m) => m.meta?.observation)).toHaveLength(11);
    expect(trajectory.messages.at(-1)!.role).toBe('assistant');
    expect(trajectory.messages[2]!.meta?.observation).toBeUndefined();
    expect(trajectory.usage).toEqual({ prompt_tokens: 122612, completion_tokens: 1369, calls: 12, cost: 1.26719 });
    expect(trajectory.meta).toMatchObject({ style: 'text', steps: 12, environment: 'swe_main' });
  });

  it('reads a 1.x function-calling trajectory: tool_call_ids → tool_call_id, instance id from replay_config', async () => {
    const file = realTrajectory('swe-agent-traj', 'marshmallow-code__marshmallow-1867.function_calling.traj');
    const { items } = await importSweAgent(file, { source: 'demo' });
    const trajectory = items[0]!;
    const raw = JSON.parse(readFileSync(file, 'utf8')) as { info: { submission: string } };
    expect(trajectory.id).toBe('demo/marshmallow-code__marshmallow-1867');
    expect(trajectory.patch).toBe(raw.info.submission);
    expect(trajectory.exit).toBe('submitted');
    expect(trajectory.messages.map((m) => m.role).slice(0, 4)).toEqual(['system', 'user', 'assistant', 'tool']);
    const names = trajectory.messages.flatMap((m) => m.tool_calls ?? []).map((c) => c.function.name);
    expect(names).toEqual(['create', 'insert', 'bash', 'bash', 'find_file', 'open', 'edit', 'edit', 'bash', 'bash', 'submit']);
    expect(trajectory.messages[3]!.tool_call_id).toBe('call_cyI71DYnRdoLHWwtZgIaW2wr');
    expect(trajectory.messages[3]!.tool_call_id).toBe(trajectory.messages[2]!.tool_calls![0]!.id);
    expect(trajectory.messages.at(-1)!.tool_call_id).toBe('call_submit');
    expect(trajectory.messages.filter((m) => m.role === 'tool').every((m) => m.meta?.observation === true)).toBe(true);
    expect(trajectory.meta).toMatchObject({ style: 'function_calling', model: 'gpt-4o', steps: 11 });
  });
});
