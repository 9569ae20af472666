/**
 * The built-in agent loop, driven by a scripted policy, running its commands for real in local
 * bubblewrap sandboxes over a tiny git repository.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadAgentConfig, type AgentConfig, type AgentLimits } from '../../../src/rollout/agent/agent-config.js';
import { runAgent, type RunAgentOptions } from '../../../src/rollout/agent/agent-loop.js';
import { wnwError, WinnowerError } from '../../../src/errors.js';
import { createLocalProvider } from '../../../src/sandbox/providers/local/provider.js';
import type { Sandbox, SandboxProvider } from '../../../src/sandbox/types.js';
import type { Task, Trajectory } from '../../../src/types/index.js';
import { hasBubblewrap } from '../../solve/helpers.js';
import { bashCall, ScriptedPolicy, waitForAbort } from '../scripted-policy.js';

const SENTINEL = 'COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT';
const SUBMIT = `echo ${SENTINEL}`;
const bwrap = hasBubblewrap();

const task: Task = {
  instance_id: 'greeter-1',
  problem_statement: 'greet() says "helo" instead of "hello".',
  fail_to_pass: [],
  pass_to_pass: [],
  meta: {},
};

function makeRepo(): string {
  const root = mkdtempSync(join(tmpdir(), 'wnw-agent-loop-'));
  chmodSync(root, 0o755);
  const git = (...args: string[]) =>
    execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', '-c', 'init.defaultBranch=main', ...args], {
      cwd: root,
      stdio: 'pipe',
    });
  git('init', '-q');
  writeFileSync(join(root, 'greet.py'), 'def greet():\n    return "helo"\n');
  git('add', '-A');
  git('commit', '-qm', 'base');
  return root;
}

describe.skipIf(!bwrap)(`runAgent in a local sandbox${bwrap ? '' : ' (skipped: bubblewrap is not installed)'}`, () => {
  let repo: string;
  let provider: SandboxProvider;
  const open: Sandbox[] = [];

  beforeAll(() => {
    repo = makeRepo();
    provider = createLocalProvider();
  });

  afterEach(async () => {
    await Promise.all(open.splice(0).map((sandbox) => sandbox.close()));
  });

  afterAll(async () => {
    await provider?.close();
    if (repo) rmSync(repo, { recursive: true, force: true });
  });

  async function run(
    policy: ScriptedPolicy,
    limits: Partial<AgentLimits> = {},
    extra: Partial<RunAgentOptions> & { config?: AgentConfig } = {},
  ): Promise<{ trajectory: Trajectory; sandbox: Sandbox; ms: number }> {
    const sandbox = await provider.create({ repo: { path: repo } });
    open.push(sandbox);
    const config = extra.config ?? loadAgentConfig('default', { time_limit_s: 60, command_timeout_s: 20, ...limits });
    const started = Date.now();
    const trajectory = await runAgent({ policy, sandbox, task, config, trajectoryId: 'job/0', seed: 7, ...extra });
    return { trajectory, sandbox, ms: Date.now() - started };
  }

  const fix = `sed -i 's/helo/hello/' greet.py`;

  it('ends on the submission sentinel: exit submitted, patch = the sandbox diff', async () => {
    const policy = new ScriptedPolicy(['cat greet.py', fix, SUBMIT]);
    const { trajectory, sandbox } = await run(policy);
    expect(trajectory.exit).toBe('submitted');
    expect(trajectory.exit_raw).toBe('submitted');
    expect(trajectory.patch).toBe(await sandbox.diff());
    expect(trajectory.patch).toContain('-    return "helo"');
    expect(trajectory.patch).toContain('+    return "hello"');
    expect(trajectory).toMatchObject({ format: 'winnower-trajectory-1', id: 'job/0', instance_id: 'greeter-1', source: 'scripted' });
    expect(trajectory.usage).toEqual({ prompt_tokens: 30, completion_tokens: 15, calls: 3 });
    expect(trajectory.meta).toMatchObject({
      agent: 'bash-agent-v1',
      policy_mode: 'tools',
      config: { agent: 'bash-agent-v1', policy_mode: 'tools' },
      seed: 7,
      steps: 3,
    });
    expect(trajectory.meta.error).toBeUndefined();
    expect(policy.calls.map((call) => call.seed)).toEqual([7, 7, 7]);
    expect(trajectory.messages.map((message) => message.role)).toEqual([
      'system',
      'user',
      'assistant',
      'tool',
      'assistant',
      'tool',
      'assistant',
      'tool',
    ]);
    const first = trajectory.messages[3]!;
    expect(first).toMatchObject({
      role: 'tool',
      tool_call_id: 'call_0',
      name: 'bash',
      meta: { exit_code: 0, timed_out: false, observation: true },
    });
    expect(first.content).toBe('<returncode>0</returncode>\n<output>\ndef greet():\n    return "helo"\n\n</output>\n');
    // The policy saw the conversation so far, the observation of its previous command included.
    expect(policy.calls[1]!.messages.at(-1)!.content).toContain('return "helo"');
  });

  it('renders the prompts from the config: workdir, sentinel, issue', async () => {
    const policy = new ScriptedPolicy([SUBMIT]);
    const { trajectory, sandbox } = await run(policy);
    const [system, user] = trajectory.messages;
    expect(system!.role).toBe('system');
    expect(system!.content).toContain(`repository at ${sandbox.workdir}`);
    expect(system!.content).toContain(`run exactly: echo ${SENTINEL}`);
    expect(system!.content).not.toContain('fenced code block');
    expect(system!.content).not.toContain('{{');
    expect(user!.content).toContain(`<issue>\n${task.problem_statement}\n</issue>`);
    expect(user!.content).toContain(`repository at ${sandbox.workdir}`);
    expect(trajectory.patch).toBe('');
  });

  it('uses whatever templates and sentinel a config gives', async () => {
    const base = loadAgentConfig('default', { time_limit_s: 60 });
    const config: AgentConfig = {
      ...base,
      name: 'custom-agent',
      submit_sentinel: 'ALL_DONE_NOW',
      system_template: 'Work in {{workdir}}; finish with `echo {{submit_sentinel}}`.',
      instance_template: 'Issue: {{problem_statement}}',
      observation_template: 'rc={{exit_code}} out={{output}}',
    };
    const policy = new ScriptedPolicy([SUBMIT, 'echo ALL_DONE_NOW']);
    const { trajectory, sandbox } = await run(policy, {}, { config });
    expect(trajectory.messages[0]!.content).toBe(`Work in ${sandbox.workdir}; finish with \`echo ALL_DONE_NOW\`.`);
    expect(trajectory.messages[1]!.content).toBe(`Issue: ${task.problem_statement}`);
    // The default sentinel means nothing to this config: one more step was needed.
    expect(trajectory.messages[3]!.content).toBe(`rc=0 out=${SENTINEL}\n`);
    expect(trajectory.exit).toBe('submitted');
    expect(trajectory.meta).toMatchObject({ agent: 'custom-agent', steps: 2 });
  });

  it('fails loudly on a template placeholder without a value', async () => {
    const config: AgentConfig = { ...loadAgentConfig('default'), system_template: 'Hello {{no_such_thing}}' };
    const outcome = await run(new ScriptedPolicy([SUBMIT]), {}, { config }).catch((error: unknown) => error);
    expect(WinnowerError.isInstance(outcome)).toBe(true);
    expect((outcome as WinnowerError).code).toBe('WNW_ERR_CFG_INVALID');
    expect((outcome as WinnowerError).details).toMatchObject({ template: 'system_template', variable: 'no_such_thing' });
  });

  it('submits only when the sentinel is the first line of the output', async () => {
    const policy = new ScriptedPolicy([`echo "not yet: ${SENTINEL}"`, `echo ${SENTINEL}_LATER`, `printf '\\n  ${SENTINEL}  \\nmore\\n'`]);
    const { trajectory } = await run(policy);
    expect(trajectory.exit).toBe('submitted');
    expect(policy.calls).toHaveLength(3);
  });

  it('stops at the step limit', async () => {
    const policy = new ScriptedPolicy(['true']);
    const { trajectory } = await run(policy, { step_limit: 3 });
    expect(trajectory.exit).toBe('step_limit');
    expect(trajectory.exit_raw).toBe('step limit of 3 reached');
    expect(policy.calls).toHaveLength(3);
    expect(trajectory.meta.steps).toBe(3);
    expect(trajectory.usage?.calls).toBe(3);
  });

  it('stops at the token limit, checked before each policy call', async () => {
    const policy = new ScriptedPolicy(['true'], { usage: { prompt_tokens: 100, completion_tokens: 20 } });
    const { trajectory } = await run(policy, { token_limit: 250 });
    // 120, 240 (< 250: one more call), 360 (≥ 250: stop).
    expect(trajectory.exit).toBe('token_limit');
    expect(trajectory.exit_raw).toBe('token limit of 250 reached');
    expect(policy.calls).toHaveLength(3);
    expect(trajectory.usage).toEqual({ prompt_tokens: 300, completion_tokens: 60, calls: 3 });
  });

  it('stops at the time limit between steps, keeping the patch so far', async () => {
    const policy = new ScriptedPolicy([fix, 'sleep 0.2']);
    const { trajectory, ms } = await run(policy, { time_limit_s: 1 });
    expect(trajectory.exit).toBe('timeout');
    expect(trajectory.exit_raw).toBe('time limit of 1 s reached');
    expect(trajectory.meta.error).toBeUndefined();
    expect(trajectory.patch).toContain('+    return "hello"');
    expect(ms).toBeLessThan(4_000);
  });

  it('stops at the time limit while the policy is thinking', async () => {
    const policy = new ScriptedPolicy([fix, waitForAbort]);
    const { trajectory, ms } = await run(policy, { time_limit_s: 0.8 });
    expect(trajectory.exit).toBe('timeout');
    expect(trajectory.exit_raw).toBe('time limit of 0.8 s reached');
    expect(trajectory.meta.error).toBeUndefined();
    expect(trajectory.patch).toContain('+    return "hello"');
    expect(ms).toBeLessThan(3_000);
  });

  it('stops at the time limit while a command runs', async () => {
    const policy = new ScriptedPolicy([fix, 'sleep 30']);
    const { trajectory, ms } = await run(policy, { time_limit_s: 1, command_timeout_s: 60 });
    expect(trajectory.exit).toBe('timeout');
    expect(trajectory.exit_raw).toBe('time limit of 1 s reached');
    expect(trajectory.meta.error).toBeUndefined();
    expect(trajectory.patch).toContain('+    return "hello"');
    expect(ms).toBeLessThan(4_000);
  });

  it('charges a step for a turn without a tool call and corrects it', async () => {
    const policy = new ScriptedPolicy([{ message: { content: 'I think the bug is in greet.py.' } }, SUBMIT]);
    const { trajectory } = await run(policy);
    expect(trajectory.exit).toBe('submitted');
    expect(trajectory.meta.steps).toBe(2);
    const correction = trajectory.messages[3]!;
    expect(correction.role).toBe('user');
    expect(correction.meta).toEqual({ format_error: true });
    expect(correction.content).toContain('Your last message had no tool call.');
    expect(correction.content).toContain(`To finish, run: echo ${SENTINEL}`);
  });

  it('answers every tool call of a malformed turn, so the conversation stays valid', async () => {
    const policy = new ScriptedPolicy([
      {
        message: {
          content: '',
          tool_calls: [
            bashCall('call_x', 'ls'),
            { id: 'call_y', type: 'function', function: { name: 'python', arguments: '{"code":"1"}' } },
          ],
        },
      },
      { message: { content: '', tool_calls: [{ id: 'call_z', type: 'function', function: { name: 'bash', arguments: '{"command": ' } }] } },
      { message: { content: '', tool_calls: [{ id: 'call_w', type: 'function', function: { name: 'bash', arguments: '{"cmd":"ls"}' } }] } },
      SUBMIT,
    ]);
    const { trajectory } = await run(policy, { step_limit: 10 });
    expect(trajectory.exit).toBe('submitted');
    expect(trajectory.meta.steps).toBe(4);
    const replies = trajectory.messages.filter((message) => message.role === 'tool');
    expect(replies.map((reply) => reply.tool_call_id)).toEqual(['call_x', 'call_y', 'call_z', 'call_w', 'call_3']);
    expect(replies[0]!.content).toContain('a call to an unknown tool "python"');
    expect(replies[1]!.content).toBe(replies[0]!.content);
    expect(replies[2]!.content).toContain('tool arguments that are not valid JSON');
    expect(replies[3]!.content).toContain('a bash call without a "command" string');
    // Nothing ran for the malformed turns; no extra user message was added in tools mode.
    expect(trajectory.messages.filter((message) => message.meta?.format_error)).toHaveLength(0);
    expect(trajectory.messages.filter((message) => message.meta?.observation)).toHaveLength(1);
  });

  it('runs every bash call of a turn in order, one tool reply each', async () => {
    const policy = new ScriptedPolicy([
      { message: { content: '', tool_calls: [bashCall('call_a', 'echo one > one.txt'), bashCall('call_b', 'cat one.txt; exit 3')] } },
      SUBMIT,
    ]);
    const { trajectory } = await run(policy);
    const replies = trajectory.messages.filter((message) => message.role === 'tool');
    expect(replies[0]).toMatchObject({ tool_call_id: 'call_a', meta: { exit_code: 0 } });
    expect(replies[1]).toMatchObject({ tool_call_id: 'call_b', meta: { exit_code: 3 } });
    expect(replies[1]!.content).toBe('<returncode>3</returncode>\n<output>\none\n\n</output>\n');
    expect(trajectory.patch).toContain('+++ b/one.txt');
  });

  it('text mode: the addendum, a corrective message for two blocks, observations as user messages', async () => {
    const policy = new ScriptedPolicy(
      [
        { message: { content: 'Two things:\n```bash\nls\n```\nand\n```bash\npwd\n```' } },
        { message: { content: 'Just prose.' } },
        { message: { content: 'Python is not run:\n```python\nprint(1)\n```\n```bash\nexit 4\n```' } },
        SUBMIT,
      ],
      { mode: 'text' },
    );
    const { trajectory } = await run(policy);
    expect(trajectory.exit).toBe('submitted');
    expect(trajectory.meta).toMatchObject({ policy_mode: 'text', steps: 4 });
    expect(trajectory.messages[0]!.content).toContain('exactly one fenced code block');
    expect(trajectory.messages.some((message) => message.role === 'tool')).toBe(false);
    const [twoBlocks, noBlock] = trajectory.messages.filter((message) => message.meta?.format_error);
    expect(twoBlocks!.content).toContain('Your last message had 2 bash code blocks instead of one.');
    expect(noBlock!.content).toContain('Your last message had no bash code block.');
    const observations = trajectory.messages.filter((message) => message.meta?.observation);
    expect(observations.map((message) => message.role)).toEqual(['user', 'user']);
    expect(observations[0]!.meta).toMatchObject({ exit_code: 4 });
    expect(observations[0]!.content.startsWith('<returncode>4</returncode>')).toBe(true);
  });

  it('cuts long output to head and tail with a marker', async () => {
    const policy = new ScriptedPolicy(['seq 1 2000', SUBMIT]);
    const { trajectory } = await run(policy, { output_head_chars: 100, output_tail_chars: 50 });
    const full = `${Array.from({ length: 2000 }, (_, index) => index + 1).join('\n')}\n`;
    const expected = `${full.slice(0, 100)}\n[... ${full.length - 150} characters elided ...]\n${full.slice(-50)}`;
    expect(trajectory.messages[3]!.content).toBe(`<returncode>0</returncode>\n<output>\n${expected}\n</output>\n`);
  });

  it('reports a command that outlives its timeout, then goes on', async () => {
    const policy = new ScriptedPolicy(['echo started; sleep 20', SUBMIT]);
    const { trajectory, ms } = await run(policy, { command_timeout_s: 0.5 });
    expect(trajectory.exit).toBe('submitted');
    const observation = trajectory.messages[3]!;
    expect(observation.meta).toMatchObject({ exit_code: null, timed_out: true });
    expect(observation.content).toContain('<returncode>timeout</returncode>');
    expect(observation.content).toContain('did not finish within 0.5 s and was killed');
    expect(ms).toBeLessThan(8_000);
  });

  it('shows the agent an out-of-memory kill and a full disk as a note after the output, and goes on', async (context) => {
    const small = createLocalProvider({ diskMb: 20, logger: { info: () => undefined, warn: () => undefined } });
    try {
      const memory = String(((await small.describe()).limits as Record<string, unknown>).memory);
      if (!memory.startsWith('cgroup')) context.skip(`no cgroup memory controller on this host (${memory})`);
      const sandbox = await small.create({ repo: { path: repo }, memoryMb: 64 });
      try {
        const policy = new ScriptedPolicy([
          `python3 -c 'x = bytearray(300 * 1024 * 1024)'`,
          'head -c 100M /dev/zero > big.bin',
          'rm big.bin',
          fix,
          SUBMIT,
        ]);
        const config = loadAgentConfig('default', { time_limit_s: 60, command_timeout_s: 20 });
        const trajectory = await runAgent({ policy, sandbox, task, config, trajectoryId: 'job/0' });
        // A full workspace used to end the rollout with WNW_ERR_SBX_DISK.
        expect(trajectory.exit).toBe('submitted');
        const [oom, full] = trajectory.messages.filter((message) => message.role === 'tool');
        expect(oom!.content).toBe(
          '<returncode>137</returncode>\n<output>\n\n[sandbox] killed: out of memory (memory cap 64 MiB)\n</output>\n',
        );
        expect(oom!.meta).toMatchObject({ exit_code: 137, note: 'killed: out of memory (memory cap 64 MiB)' });
        expect(full!.content).toContain('No space left on device');
        expect(full!.content).toContain('[sandbox] disk full: the 20 MiB cap of the workspace (/workspace) is reached');
        expect(trajectory.patch).toContain('+    return "hello"');
      } finally {
        await sandbox.close();
      }
    } finally {
      await small.close();
    }
  });

  it('records a policy failure: exit error with meta.error.code, patch kept', async () => {
    const policy = new ScriptedPolicy([
      fix,
      () => {
        throw wnwError('WNW_ERR_POLICY_UPSTREAM', 'POST http://x/v1/chat/completions answered 400', { details: { status: 400 } });
      },
    ]);
    const { trajectory } = await run(policy);
    expect(trajectory.exit).toBe('error');
    expect(trajectory.exit_raw).toBe('POST http://x/v1/chat/completions answered 400');
    expect(trajectory.meta.error).toEqual({
      code: 'WNW_ERR_POLICY_UPSTREAM',
      message: 'POST http://x/v1/chat/completions answered 400',
      details: { status: 400 },
    });
    expect(trajectory.meta.steps).toBe(1);
    expect(trajectory.patch).toContain('+    return "hello"');
  });

  it('wraps an uncoded exception as WNW_ERR_OP_INTERNAL', async () => {
    const policy = new ScriptedPolicy([
      () => {
        throw new TypeError('boom');
      },
    ]);
    const { trajectory } = await run(policy);
    expect(trajectory.exit).toBe('error');
    expect(trajectory.meta.error).toMatchObject({ code: 'WNW_ERR_OP_INTERNAL', message: 'boom' });
  });

  it('does nothing for an already aborted signal: exit cancelled', async () => {
    const policy = new ScriptedPolicy([fix]);
    const { trajectory } = await run(policy, {}, { signal: AbortSignal.abort() });
    expect(trajectory.exit).toBe('cancelled');
    expect(policy.calls).toHaveLength(0);
    expect(trajectory.patch).toBe('');
  });

  it('cancels promptly while the policy is thinking', async () => {
    const controller = new AbortController();
    // The abort comes while the second turn is thinking (not on a timer that a loaded machine can
    // outrun); that turn never answers on its own, so returning at all means the cancel went through.
    const thinking = (request: Parameters<typeof waitForAbort>[0]) => {
      setTimeout(() => controller.abort(wnwError('WNW_ERR_OP_ABORTED', 'job cancelled')), 50);
      return waitForAbort(request);
    };
    const policy = new ScriptedPolicy([fix, thinking]);
    const { trajectory } = await run(policy, {}, { signal: controller.signal });
    expect(trajectory.exit).toBe('cancelled');
    expect(policy.calls).toHaveLength(2);
  });

  it('cancels promptly while a command runs', async () => {
    const controller = new AbortController();
    const policy = new ScriptedPolicy(['sleep 30']);
    setTimeout(() => controller.abort(), 500);
    const { trajectory, ms } = await run(policy, {}, { signal: controller.signal });
    expect(trajectory.exit).toBe('cancelled');
    expect(ms).toBeLessThan(4_000);
  });

  it('calls onStep after every step with the partial trajectory', async () => {
    const partials: Trajectory[] = [];
    const policy = new ScriptedPolicy(['cat greet.py', { message: { content: 'hmm' } }, fix, SUBMIT]);
    const { trajectory } = await run(policy, {}, { onStep: (partial) => partials.push(partial) });
    // The step that submits ends the run and is reported by the returned trajectory instead.
    expect(partials.map((partial) => partial.meta.steps)).toEqual([1, 2, 3]);
    expect(partials.map((partial) => partial.messages.length)).toEqual([4, 6, 8]);
    expect(partials.every((partial) => partial.exit === 'unknown' && partial.patch === '' && partial.id === 'job/0')).toBe(true);
    expect(partials[2]!.usage).toEqual({ prompt_tokens: 30, completion_tokens: 15, calls: 3 });
    expect(trajectory.meta.steps).toBe(4);
    expect(trajectory.messages).toHaveLength(10);
    // Snapshots are copies: later steps do not change them.
    expect(partials[0]!.messages).toHaveLength(4);
  });
});
