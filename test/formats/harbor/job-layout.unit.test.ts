/**
 * Harbor's trial layout as `winnower run` writes it (issue 32): the trial's result.json, its
 * agent/trajectory.json as ATIF-v1.7 under the facts' rules, its verifier/ files, and the job's
 * result.json with counts and reward statistics.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkedAtif } from '../../../src/formats/atif/index.js';
import { trialName, writeJobResult, writeTrial, type TrialRecord } from '../../../src/formats/harbor/job-layout.js';
import type { Trajectory, VerifyResult } from '../../../src/types/index.js';
import { writeExampleTask } from './example-task.js';
import { tempDir } from '../../support/temp-dir.js';

const trajectory: Trajectory = {
  format: 'winnower-trajectory-1',
  id: 'job-1/0',
  instance_id: 'winnower/fix-median',
  source: 'replay',
  messages: [
    { role: 'system', content: 'You are a careful engineer.' },
    { role: 'user', content: 'Fix median().' },
    {
      role: 'assistant',
      content: '',
      reasoning: 'Look first.',
      tool_calls: [
        { id: 'call_1', type: 'function', function: { name: 'bash', arguments: '{"cmd": "cat stats.py"}' } },
        { id: 'call_2', type: 'function', function: { name: 'bash', arguments: 'not json' } },
      ],
    },
    { role: 'tool', tool_call_id: 'call_1', content: 'def median(xs): ...' },
    { role: 'tool', tool_call_id: 'call_9', content: 'stray' },
    { role: 'assistant', content: 'Fixed.' },
  ],
  patch: 'diff --git a/stats.py b/stats.py\n',
  exit: 'submitted',
  usage: { prompt_tokens: 100, completion_tokens: 20, calls: 2 },
  meta: {},
};

const AGENT_ONLY = ['model_name', 'reasoning_effort', 'reasoning_content', 'tool_calls', 'metrics'];
const STEP_KEYS = new Set([
  'step_id',
  'timestamp',
  'source',
  'message',
  'observation',
  'llm_call_count',
  'is_copied_context',
  'extra',
  ...AGENT_ONLY,
]);
const ROOT_KEYS = new Set([
  'schema_version',
  'session_id',
  'trajectory_id',
  'agent',
  'steps',
  'notes',
  'final_metrics',
  'continued_trajectory_ref',
  'extra',
  'subagent_trajectories',
]);

/** The facts' validation rules that this writer could break: closed keys, step ids, calls and results in one step, agent-only fields. */
function atifProblems(document: Record<string, unknown>): string[] {
  const problems: string[] = [];
  for (const key of Object.keys(document)) if (!ROOT_KEYS.has(key)) problems.push(`root key ${key}`);
  if (document.schema_version !== 'ATIF-v1.7') problems.push('schema_version');
  const steps = document.steps as Array<Record<string, unknown>>;
  if (!Array.isArray(steps) || steps.length === 0) problems.push('no steps');
  steps.forEach((step, index) => {
    if (step.step_id !== index + 1) problems.push(`step ${index} id ${String(step.step_id)}`);
    for (const key of Object.keys(step)) if (!STEP_KEYS.has(key)) problems.push(`step ${index} key ${key}`);
    if (step.source !== 'agent')
      for (const key of AGENT_ONLY) if (key in step) problems.push(`step ${index} ${key} on a ${String(step.source)} step`);
    const ids = new Set(((step.tool_calls as Array<Record<string, unknown>>) ?? []).map((call) => call.tool_call_id));
    for (const call of (step.tool_calls as Array<Record<string, unknown>>) ?? [])
      if (typeof call.arguments !== 'object' || call.arguments === null || Array.isArray(call.arguments))
        problems.push(`step ${index} arguments`);
    for (const result of (step.observation as { results: Array<Record<string, unknown>> } | undefined)?.results ?? [])
      if (result.source_call_id !== undefined && !ids.has(result.source_call_id))
        problems.push(`step ${index} source_call_id ${String(result.source_call_id)}`);
  });
  return problems;
}

const verify = (reward: number | null, status: VerifyResult['status']): VerifyResult => ({
  trajectory_id: 'job-1/0',
  instance_id: 'winnower/fix-median',
  status,
  applied: true,
  tests: {},
  fail_to_pass: { passed: 0, failed: 0, missing: 0 },
  pass_to_pass: { passed: 0, failed: 0, missing: 0 },
  resolved: reward === 1,
  parser: 'harbor-reward',
  exit_code: 0,
  other_failed: [],
  other_failed_count: 0,
  timed_out: false,
  duration_ms: 5,
  log_tail: 'tests ran\n',
  ...(reward === null
    ? { error: 'the verifier could not be graded: reward.txt does not hold one number' }
    : { reward: { file: 'reward.json', rewards: { reward }, value: reward, threshold: 1 } }),
});

describe('ATIF trajectory of a winnower candidate', () => {
  it('passes the rules: tool results on the calling step, arguments as objects, raw arguments kept, stray ids in extra', () => {
    const document = checkedAtif(trajectory) as unknown as Record<string, any>;
    expect(atifProblems(document)).toEqual([]);
    const steps = document.steps as Array<Record<string, unknown>>;
    expect(steps.map((step) => step.source)).toEqual(['system', 'user', 'agent', 'agent']);
    expect(steps[2]!.tool_calls).toEqual([
      // The exporter keeps the arguments' own text too, so a re-import gives them back byte for byte.
      {
        tool_call_id: 'call_1',
        function_name: 'bash',
        arguments: { cmd: 'cat stats.py' },
        extra: { raw_arguments: '{"cmd": "cat stats.py"}' },
      },
      { tool_call_id: 'call_2', function_name: 'bash', arguments: {}, extra: { raw_arguments: 'not json' } },
    ]);
    expect(steps[2]!.observation).toEqual({
      results: [
        { source_call_id: 'call_1', content: 'def median(xs): ...' },
        { content: 'stray', extra: { winnower: { tool_call_id: 'call_9' } } },
      ],
    });
    expect(document.final_metrics).toMatchObject({ total_prompt_tokens: 100, total_completion_tokens: 20, total_steps: 4 });
    expect(document.extra).toMatchObject({ instance_id: 'winnower/fix-median', exit: 'submitted' });
  });

  it('gives a patch-only candidate one step, as ATIF needs', () => {
    const document = checkedAtif({ ...trajectory, messages: [] }) as unknown as Record<string, any>;
    expect(atifProblems(document)).toEqual([]);
    expect(document.steps).toHaveLength(1);
  });
});

describe('trial and job layout', () => {
  it("writes each trial's result.json, trajectory and verifier files, and the job's counts", () => {
    const jobDir = tempDir('harbor-job-');
    const taskDir = writeExampleTask();
    const record = (index: number, reward: number | null, status: VerifyResult['status']): TrialRecord => ({
      jobId: 'job-1',
      index,
      task: { name: 'winnower/fix-median', dir: taskDir },
      agent: { name: 'winnower', version: '0.1.0' },
      trajectory: { ...trajectory, id: `job-1/${index}` },
      verify: verify(reward, status),
      error: null,
      startedAt: '2026-12-02T14:00:00.000Z',
      finishedAt: '2026-12-02T14:01:00.000Z',
    });
    const solved = writeTrial(jobDir, record(0, 1, 'resolved'));
    writeTrial(jobDir, record(1, 0, 'unresolved'));
    const broken = writeTrial(jobDir, record(2, null, 'error'));
    expect(solved).toBe(join(jobDir, trialName('winnower/fix-median', 'job-1', 0)));
    expect(trialName('winnower/fix-median', 'job-1', 0)).toMatch(/^winnower-fix-median__[0-9a-f]{7}$/);
    const result = JSON.parse(readFileSync(join(solved, 'result.json'), 'utf8'));
    expect(result).toMatchObject({
      id: 'job-1/0',
      task_name: 'winnower/fix-median',
      task_id: { path: taskDir },
      agent_info: { name: 'winnower', version: '0.1.0' },
      agent_result: { n_input_tokens: 100, n_output_tokens: 20 },
      verifier_result: { rewards: { reward: 1 } },
      exception_info: null,
    });
    expect(atifProblems(JSON.parse(readFileSync(join(solved, 'agent', 'trajectory.json'), 'utf8')))).toEqual([]);
    expect(JSON.parse(readFileSync(join(solved, 'verifier', 'reward.json'), 'utf8'))).toEqual({ reward: 1 });
    expect(readFileSync(join(solved, 'verifier', 'test-stdout.txt'), 'utf8')).toBe('tests ran\n');
    const failed = JSON.parse(readFileSync(join(broken, 'result.json'), 'utf8'));
    expect(failed.verifier_result).toBeNull();
    expect(failed.exception_info).toMatchObject({
      exception_type: 'verify:error',
      exception_message: expect.stringContaining('could not be graded'),
    });
    expect(existsSync(join(broken, 'verifier', 'reward.json'))).toBe(false);

    writeJobResult(jobDir, {
      id: 'run-1',
      startedAt: '2026-12-02T14:00:00.000Z',
      finishedAt: '2026-12-02T14:02:00.000Z',
      evalKey: 'winnower__replay__adhoc',
    });
    const jobResult = JSON.parse(readFileSync(join(jobDir, 'result.json'), 'utf8'));
    expect(jobResult).toMatchObject({ id: 'run-1', n_total_trials: 3, stats: { n_completed_trials: 2, n_errored_trials: 1 } });
    const evals = jobResult.stats.evals['winnower__replay__adhoc'];
    expect(evals.reward_stats.reward['1']).toEqual([trialName('winnower/fix-median', 'job-1', 0)]);
    expect(evals.reward_stats.reward['0']).toHaveLength(1);
    expect(Object.keys(evals.exception_stats)).toEqual(['verify:error']);
  });
});
