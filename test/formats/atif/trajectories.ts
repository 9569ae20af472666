/** Trajectories as winnower's producers write them (src/rollout/agent/agent-loop.ts, src/rollout/harness/harness-trajectory.ts). */
import { Trajectory } from '../../../src/types/index.js';

const PATCH = 'diff --git a/stats.py b/stats.py\n--- a/stats.py\n+++ b/stats.py\n@@ -1 +1 @@\n-x\n+y\n';

/** The built-in agent in tools mode: tool calls answered by tool messages, a format error, usage and config. */
export function toolsModeRollout(): Trajectory {
  return Trajectory.parse({
    id: 'job1/0',
    instance_id: 'fix-median',
    source: 'openai:qwen3-coder',
    messages: [
      { role: 'system', content: 'You are a careful engineer.' },
      { role: 'user', content: 'Fix median() in /app/stats.py.' },
      {
        role: 'assistant',
        content: 'Look first.',
        reasoning: 'The even branch.',
        tool_calls: [
          { id: 'call_1', type: 'function', function: { name: 'bash', arguments: '{"command":"cat stats.py"}' } },
          { id: 'call_2', type: 'function', function: { name: 'bash', arguments: '{ "command": "python -m pytest -q" }' } },
        ],
      },
      {
        role: 'tool',
        tool_call_id: 'call_1',
        name: 'bash',
        content: 'def median(xs): ...',
        meta: { exit_code: 0, timed_out: false, truncated: false, duration_ms: 12, observation: true },
      },
      {
        role: 'tool',
        tool_call_id: 'call_2',
        name: 'bash',
        content: '1 failed, 2 passed',
        meta: { exit_code: 1, timed_out: false, truncated: false, duration_ms: 800, observation: true },
      },
      {
        role: 'assistant',
        content: '',
        tool_calls: [{ id: 'call_3', type: 'function', function: { name: 'bash', arguments: 'not json' } }],
      },
      { role: 'tool', tool_call_id: 'call_3', name: 'bash', content: 'format error: arguments are not JSON' },
      {
        role: 'assistant',
        content: 'Submitting.',
        tool_calls: [{ id: 'call_4', type: 'function', function: { name: 'bash', arguments: '{"command":"echo SUBMIT"}' } }],
      },
      { role: 'tool', tool_call_id: 'call_4', name: 'bash', content: 'SUBMIT', meta: { exit_code: 0, observation: true } },
    ],
    patch: PATCH,
    exit: 'submitted',
    exit_raw: 'submitted',
    usage: { prompt_tokens: 3000, completion_tokens: 120, calls: 3 },
    meta: {
      agent: 'default',
      policy_mode: 'tools',
      config: { agent: 'default', policy_mode: 'tools', model: 'qwen3-coder' },
      seed: 7,
      steps: 3,
      started_at: '2026-12-02T10:00:00.000Z',
      duration_ms: 4000,
    },
  });
}

/** The built-in agent in text mode: observations are user messages marked `meta.observation`, plus a format-error nudge. */
export function textModeRollout(): Trajectory {
  return Trajectory.parse({
    id: 'job1/1',
    instance_id: 'fix-median',
    source: 'replay:correct-fix',
    messages: [
      { role: 'system', content: 'You are a careful engineer.' },
      { role: 'user', content: 'Fix median().' },
      { role: 'assistant', content: 'Run the tests.\n```bash\npython -m pytest -q\n```' },
      { role: 'user', content: '<returncode>1</returncode>\n1 failed', meta: { exit_code: 1, observation: true, duration_ms: 5 } },
      { role: 'assistant', content: 'I think it is fine.' },
      { role: 'user', content: 'Please give exactly one bash block.', meta: { format_error: true } },
      { role: 'assistant', content: '```bash\necho SUBMIT\n```' },
      { role: 'user', content: '<returncode>0</returncode>\nSUBMIT', meta: { exit_code: 0, observation: true } },
    ],
    patch: PATCH,
    exit: 'submitted',
    usage: { prompt_tokens: 100, completion_tokens: 20, calls: 3 },
    meta: { agent: 'default', policy_mode: 'text', seed: 1 },
  });
}

/** A harness rollout through the recording proxy: the answer carries its exchange and usage, meta the harness. */
export function harnessRollout(): Trajectory {
  return Trajectory.parse({
    id: 'job2/0',
    instance_id: 'fix-median',
    source: 'openai:qwen3-coder',
    messages: [
      { role: 'system', content: 'You are Claude Code.' },
      { role: 'user', content: 'Fix median().' },
      {
        role: 'assistant',
        content: '',
        tool_calls: [{ id: 'toolu_1', type: 'function', function: { name: 'Bash', arguments: '{"command":"pytest"}' } }],
      },
      { role: 'tool', tool_call_id: 'toolu_1', content: 'boom', meta: { is_error: true } },
      { role: 'tool', tool_call_id: 'toolu_stale', content: 'a result for a call of an earlier turn' },
      { role: 'assistant', content: 'Done.', meta: { exchange: 3, usage: { prompt_tokens: 900, completion_tokens: 30 } } },
    ],
    patch: PATCH,
    exit: 'submitted',
    exit_raw: 'exit code 0',
    usage: { prompt_tokens: 2400, completion_tokens: 90, calls: 4 },
    meta: { agent: 'harness:claude-code', harness: 'claude-code', harness_version: '2.1.222', protocol: 'anthropic', exchanges: [] },
  });
}

/** A SWE-bench predictions row: a patch and no messages. */
export function patchOnlyCandidate(): Trajectory {
  return Trajectory.parse({
    id: 'gpt/fix-median',
    instance_id: 'fix-median',
    source: 'gpt',
    patch: PATCH,
    meta: { importer: 'swebench-predictions' },
  });
}
