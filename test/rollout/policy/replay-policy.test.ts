/** Replaying a recorded trajectory's assistant turns, alone and through the agent loop in a real sandbox. */
import { readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadAgentConfig } from '../../../src/rollout/agent/agent-config.js';
import { runAgent } from '../../../src/rollout/agent/agent-loop.js';
import { createReplayPolicy } from '../../../src/rollout/policy/replay-policy.js';
import { prepareDemoRepo } from '../../../src/cli/demo-repo.js';
import { WinnowerError } from '../../../src/errors.js';
import { createLocalProvider } from '../../../src/sandbox/providers/local/provider.js';
import { Trajectory, type TrajectoryInput } from '../../../src/types/trajectory.js';
import { DEMO_DIR, hasBubblewrap } from '../../solve/helpers.js';
import { bashCall } from '../scripted-policy.js';

const recording = (messages: TrajectoryInput['messages'], id = 'rec-1'): Trajectory =>
  Trajectory.parse({ id, instance_id: 'i-1', source: 'agent-x', messages });

async function errorOf(promise: Promise<unknown>): Promise<WinnowerError> {
  const outcome = await promise.then(
    () => undefined,
    (error: unknown) => error,
  );
  expect(WinnowerError.isInstance(outcome), `expected a WinnowerError, got ${String(outcome)}`).toBe(true);
  return outcome as WinnowerError;
}

describe('createReplayPolicy', () => {
  const toolsRecording = recording([
    { role: 'system', content: 'old system prompt' },
    { role: 'user', content: 'old issue' },
    {
      role: 'assistant',
      content: 'first',
      tool_calls: [bashCall('c0', 'ls')],
      meta: { usage: { prompt_tokens: 11, completion_tokens: 3 } },
    },
    { role: 'tool', tool_call_id: 'c0', name: 'bash', content: 'old output' },
    { role: 'assistant', content: 'second', reasoning: 'think', tool_calls: [bashCall('c1', 'cat a.py')] },
    { role: 'tool', tool_call_id: 'c1', name: 'bash', content: 'old output 2' },
    { role: 'assistant', content: 'third, prose only' },
  ]);

  it('replays the assistant turns in order, without meta, whatever it is shown', async () => {
    const policy = createReplayPolicy(toolsRecording);
    expect(policy.name).toBe('replay:agent-x');
    expect(policy.mode).toBe('tools');
    const first = await policy.next({ messages: [] });
    expect(first).toEqual({
      message: { role: 'assistant', content: 'first', tool_calls: [bashCall('c0', 'ls')] },
      usage: { prompt_tokens: 11, completion_tokens: 3 },
      finishReason: 'tool_calls',
    });
    const second = await policy.next({ messages: [{ role: 'user', content: 'something new' }] });
    expect(second).toEqual({
      message: { role: 'assistant', content: 'second', reasoning: 'think', tool_calls: [bashCall('c1', 'cat a.py')] },
      usage: { prompt_tokens: 0, completion_tokens: 0 },
      finishReason: 'tool_calls',
    });
    const third = await policy.next({ messages: [] });
    expect(third.message).toEqual({ role: 'assistant', content: 'third, prose only' });
    expect(third.finishReason).toBe('stop');
  });

  it('fails with WNW_ERR_POLICY_REPLAY once the turns run out', async () => {
    const policy = createReplayPolicy(toolsRecording);
    for (let turn = 0; turn < 3; turn += 1) await policy.next({ messages: [] });
    const error = await errorOf(policy.next({ messages: [] }));
    expect(error.code).toBe('WNW_ERR_POLICY_REPLAY');
    expect(error.message).toBe('recording rec-1 ended after 3 turns without a submission');
    expect(error.details).toEqual({ trajectory: 'rec-1' });
  });

  it('detects text mode when no turn calls a tool', async () => {
    const policy = createReplayPolicy(recording([{ role: 'assistant', content: 'Look:\n```bash\nls\n```' }]), 'my-replay');
    expect(policy.mode).toBe('text');
    expect(policy.name).toBe('my-replay');
    expect((await policy.next({ messages: [] })).message.content).toBe('Look:\n```bash\nls\n```');
  });

  it('counts a recording as tools mode when any turn calls a tool', () => {
    const policy = createReplayPolicy(
      recording([
        { role: 'assistant', content: 'thinking' },
        { role: 'assistant', content: '', tool_calls: [bashCall('c', 'ls')] },
      ]),
    );
    expect(policy.mode).toBe('tools');
  });

  it('refuses a recording without assistant turns', () => {
    for (const messages of [[], [{ role: 'user' as const, content: 'only a question' }]]) {
      let caught: unknown;
      try {
        createReplayPolicy(recording(messages, 'empty-rec'));
      } catch (error) {
        caught = error;
      }
      expect(WinnowerError.isInstance(caught)).toBe(true);
      expect((caught as WinnowerError).code).toBe('WNW_ERR_POLICY_REPLAY');
      expect((caught as WinnowerError).details).toEqual({ trajectory: 'empty-rec' });
    }
  });

  it('honours an aborted signal', async () => {
    const policy = createReplayPolicy(toolsRecording);
    const outcome = await policy.next({ messages: [], signal: AbortSignal.abort(new Error('stop')) }).catch((error: unknown) => error);
    expect((outcome as Error).message).toBe('stop');
    // The turn was not consumed.
    expect((await policy.next({ messages: [] })).message.content).toBe('first');
  });
});

const bwrap = hasBubblewrap();

describe.skipIf(!bwrap)(
  `replaying the demo's correct fix in a local sandbox${bwrap ? '' : ' (skipped: bubblewrap is not installed)'}`,
  () => {
    it('re-runs the commands for real and yields the fix as the patch', async () => {
      const correct = Trajectory.parse(JSON.parse(readFileSync(join(DEMO_DIR, 'trajectories', 'correct-fix.json'), 'utf8')));
      const task = JSON.parse(readFileSync(join(DEMO_DIR, 'task.json'), 'utf8')) as { instance_id: string; problem_statement: string };
      const repo = prepareDemoRepo(join(DEMO_DIR, 'repo'));
      const provider = createLocalProvider();
      try {
        const sandbox = await provider.create({ repo: { path: repo } });
        try {
          const trajectory = await runAgent({
            policy: createReplayPolicy(correct),
            sandbox,
            task: {
              instance_id: task.instance_id,
              problem_statement: task.problem_statement,
              fail_to_pass: [],
              pass_to_pass: [],
              meta: {},
            },
            config: loadAgentConfig('default', { time_limit_s: 60, command_timeout_s: 30 }),
            trajectoryId: 'replay/0',
          });
          expect(trajectory.exit).toBe('submitted');
          expect(trajectory.source).toBe(`replay:${correct.source}`);
          expect(trajectory.patch).toContain('(\\d+)([hms])');
          expect(trajectory.patch).toContain('-_PART = re.compile(r"(\\d)([hms])")');
          expect(trajectory.patch).toBe(await sandbox.diff());
          const turns = correct.messages.filter((message) => message.role === 'assistant').length;
          expect(trajectory.meta.steps).toBe(turns);
          // Fresh observations: the reproduction fails before the fix, the check prints 5400 7200 90 after it.
          const observations = trajectory.messages.filter((message) => message.role === 'tool');
          expect(observations).toHaveLength(turns);
          expect(observations[1]!.meta?.exit_code).toBe(1);
          expect(observations[1]!.content).toContain("ValueError: malformed duration: '1h30m'");
          expect(observations[3]!.meta?.exit_code).toBe(0);
          expect(observations[3]!.content).toContain('5400 7200 90');
          expect(observations[5]!.content).toContain('COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT');
        } finally {
          await sandbox.close();
        }
      } finally {
        await provider.close();
        rmSync(dirname(repo), { recursive: true, force: true });
      }
    }, 60_000);
  },
);
