/**
 * One harness rollout in a real local sandbox (network off), driven through the recording proxy
 * by the scripted test harness (test/fixtures/harnesses/scripted.yaml, a python3 agent loop that
 * streams chat completions like pi): budgets stop a runaway harness, a cancel kills the whole
 * process tree, the upstream key never reaches the sandbox or the trajectory, and a malformed
 * upstream answer or a failing CLI ends the rollout as an error that says why.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fromAtif, toAtif, validateAtif } from '../../../src/formats/atif/index.js';
import { createHarnessCatalog } from '../../../src/rollout/harness/harness-catalog.js';
import { prepareHarnessRollout, type HarnessLimits } from '../../../src/rollout/harness/run-harness.js';
import type { PolicyOptions } from '../../../src/rollout/policy/policy-options.js';
import { prepareDemoRepo } from '../../../src/cli/demo-repo.js';
import { demoDir } from '../../../src/cli/demo-task.js';
import { createLocalProvider } from '../../../src/sandbox/providers/local/provider.js';
import type { Sandbox } from '../../../src/sandbox/types.js';
import type { Task, Trajectory } from '../../../src/types/index.js';
import { startFakeHarnessPolicy, type FakeHarnessPolicy } from '../../fakes/fake-harness-policy.js';
import { hasBubblewrap } from '../../solve/helpers.js';

const UPSTREAM_KEY = 'sk-upstream-7f3a9c1e5b2d4f60';
const catalog = createHarnessCatalog({ definitionsDir: new URL('../../fixtures/harnesses', import.meta.url).pathname });

/** Host processes whose command line is exactly `sleep <seconds>` (the harness's background child). */
function sleepers(seconds: string): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8') === `sleep\0${seconds}\0`;
      } catch {
        return false;
      }
    })
    .map(Number);
}

async function until(check: () => boolean, what: string): Promise<void> {
  for (let attempt = 0; attempt < 400; attempt += 1) {
    if (check()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`gave up waiting for ${what}`);
}

describe.skipIf(!hasBubblewrap())('harness rollout through the recording proxy (local sandbox, scripted harness)', () => {
  const provider = createLocalProvider({ logger: { info: () => undefined, warn: () => undefined } });
  let fake: FakeHarnessPolicy;
  let repo: string;

  beforeAll(async () => {
    repo = prepareDemoRepo(`${demoDir()}/repo`);
    fake = await startFakeHarnessPolicy({
      short: { tool: 'bash', commands: ['echo hello > greeting.txt'] },
      chatty: { tool: 'bash', commands: [], final: 'Still thinking.' },
    });
  });
  afterAll(async () => {
    await fake?.close();
    await provider.close();
  });

  const policy = (model: string): PolicyOptions => ({
    kind: 'openai',
    url: fake.url,
    model,
    api_key: UPSTREAM_KEY,
    temperature: 0.3,
    top_p: 1,
    max_tokens: 256,
    mode: 'tools',
    timeout_s: 30,
  });

  /** Runs one rollout; `during` sees the sandbox while the harness runs, `after` before it closes. */
  async function rollout(
    issue: string,
    model: string,
    options: { limits?: HarnessLimits; signal?: AbortSignal; after?: (sandbox: Sandbox) => Promise<void>; mainTools?: string[] } = {},
  ): Promise<Trajectory> {
    const harness = catalog.resolve('scripted');
    const task: Task = {
      instance_id: 'demo',
      problem_statement: issue,
      repo: { path: repo },
      fail_to_pass: [],
      pass_to_pass: [],
      meta: {},
    };
    const prepared = await prepareHarnessRollout({
      harness: options.mainTools ? { ...harness, definition: { ...harness.definition, main_tools: options.mainTools } } : harness,
      policy: policy(model),
      task,
      trajectoryId: 'job/0',
      seed: 7,
      limits: options.limits,
      signal: options.signal ?? new AbortController().signal,
    });
    const sandbox = await provider.create({ repo: { path: repo }, mounts: prepared.mounts });
    try {
      const trajectory = await prepared.run(sandbox);
      await options.after?.(sandbox);
      return trajectory;
    } finally {
      await sandbox.close();
      await prepared.close();
    }
  }

  it('records the harness own calls as the trajectory, and the patch from the diff', async () => {
    const before = fake.requests.length;
    const trajectory = await rollout('Say hello.', 'short');
    expect(trajectory.exit).toBe('submitted');
    expect(trajectory.patch).toContain('+hello');
    expect(trajectory.meta.steps).toBe(2);
    expect(trajectory.meta.exit_code).toBe(0);
    expect(trajectory.messages.map((message) => message.role)).toEqual(['system', 'user', 'assistant', 'tool', 'assistant']);
    expect(trajectory.messages[2]!.tool_calls![0]!.function.arguments).toContain('greeting.txt');
    expect(trajectory.usage).toMatchObject({ calls: 2, prompt_tokens: 100 + 150, completion_tokens: 40 });
    // Per-rollout sampling reached the upstream: the seed (rollout index) and the policy's temperature.
    const sent = fake.requests.slice(before);
    expect(sent.map((request) => [request.body.seed, request.body.temperature, request.body.stream])).toEqual([
      [7, 0.3, undefined],
      [7, 0.3, undefined],
    ]);
    // It exports as valid ATIF (docs/formats.md#atif-out) and reads back as it was.
    const document = JSON.parse(JSON.stringify(toAtif(trajectory)));
    expect(validateAtif(document).errors).toEqual([]);
    expect(document.agent.name).toBe('scripted');
    expect(document.steps.filter((step: { source: string }) => step.source === 'agent')).toHaveLength(2);
    expect(fromAtif(document).trajectory).toEqual(trajectory);
  }, 60_000);

  it('stops a runaway harness at its call budget, killing it', async () => {
    const before = fake.requests.length;
    const trajectory = await rollout('@runaway', 'chatty', { limits: { max_calls: 3 } });
    expect(trajectory.exit).toBe('step_limit');
    expect(trajectory.exit_raw).toBe('call limit of 3 reached');
    expect(fake.requests.length - before).toBe(3);
    expect(trajectory.meta.steps).toBe(3);
  }, 60_000);

  it('stops a runaway harness at its token budget', async () => {
    const before = fake.requests.length;
    // Prompt 100, 150, 200 ... plus 20 completion tokens a call: 120 + 170 + 220 = 510 after three.
    const trajectory = await rollout('@runaway', 'chatty', { limits: { token_limit: 500 } });
    expect(trajectory.exit).toBe('token_limit');
    expect(fake.requests.length - before).toBe(3);
    expect(trajectory.usage).toMatchObject({ prompt_tokens: 450, completion_tokens: 60 });
  }, 60_000);

  it('stops a harness at its time limit, killing it', async () => {
    const running = rollout('@spawn 31338\n@runaway', 'chatty', { limits: { max_calls: 100_000, token_limit: 1e12, time_limit_s: 2 } });
    // Seen alive first, so its absence afterwards means it was killed, not that it never started.
    await until(() => sleepers('31338').length > 0, 'the background child to start');
    const trajectory = await running;
    expect(trajectory.exit).toBe('timeout');
    expect(trajectory.exit_raw).toBe('time limit of 2 s reached');
    expect(Number(trajectory.meta.steps)).toBeGreaterThan(0);
    await until(() => sleepers('31338').length === 0, 'the background child to die');
  }, 60_000);

  it('a cancelled rollout kills the harness whole process tree', async () => {
    const controller = new AbortController();
    const marker = '31337';
    const running = rollout(`@spawn ${marker}\n@runaway`, 'chatty', { signal: controller.signal, limits: { max_calls: 100_000 } });
    await until(() => sleepers(marker).length > 0, 'the background child to start');
    controller.abort(new Error('job cancelled'));
    const trajectory = await running;
    expect(trajectory.exit).toBe('cancelled');
    await until(() => sleepers(marker).length === 0, 'the background child to die');
  }, 60_000);

  it('never lets the upstream key into the sandbox or the trajectory', async () => {
    const before = fake.requests.length;
    let envDump = '';
    let found = '';
    const trajectory = await rollout('@dump-env', 'short', {
      after: async (sandbox) => {
        envDump = Buffer.from(await sandbox.readFile('/tmp/winnower-home/env.txt')).toString();
        found = (
          await sandbox.exec(`grep -rl -- ${UPSTREAM_KEY} /tmp /var/tmp /run /opt/winnower ${sandbox.workdir} 2>/dev/null; echo searched`)
        ).stdout;
      },
    });
    expect(trajectory.exit).toBe('submitted');
    expect(envDump).toMatch(/AGENT_KEY=wnw-rollout-[0-9a-f]{48}/);
    expect(envDump).not.toContain(UPSTREAM_KEY);
    expect(found).toBe('searched\n');
    expect(JSON.stringify(trajectory)).not.toContain(UPSTREAM_KEY);
    // The upstream did get it, from the proxy, and never the rollout token.
    const sent = fake.requests.slice(before);
    expect(sent.every((request) => request.headers.authorization === `Bearer ${UPSTREAM_KEY}`)).toBe(true);
    expect(JSON.stringify(sent)).not.toContain('wnw-rollout-');
  }, 60_000);

  it('turns a malformed upstream answer into an error that names it', async () => {
    fake.malformed(1);
    const trajectory = await rollout('Say hello.', 'short');
    expect(trajectory.exit).toBe('error');
    expect((trajectory.meta.error as { code: string }).code).toBe('WNW_ERR_POLICY_RESPONSE');
    expect(trajectory.exit_raw).toMatch(/malformed|JSON|not valid/i);
  }, 60_000);

  it('a harness whose calls all lack the main tools fails, saying the definition does not match it', async () => {
    const before = fake.requests.length;
    const trajectory = await rollout('Say hello.', 'short', { mainTools: ['bash', 'str_replace_editor'] });
    expect(fake.requests.length).toBe(before);
    expect(trajectory.exit).toBe('error');
    expect(trajectory.exit_raw).toBe(
      'harness scripted made no agent-loop call: none of its 1 requests offered all of main_tools (bash, str_replace_editor)',
    );
    expect(trajectory.meta).toMatchObject({ steps: 0, side_calls: 1, error: { code: 'WNW_ERR_HARNESS_FAILED' } });
  }, 60_000);

  it('a CLI that exits non-zero is a failed rollout with its exit code and stderr', async () => {
    const trajectory = await rollout('@fail', 'short');
    expect(trajectory.exit).toBe('error');
    expect(trajectory.meta).toMatchObject({ exit_code: 3, error: { code: 'WNW_ERR_HARNESS_FAILED' } });
    expect(trajectory.meta.stderr_tail).toContain('refusing on purpose');
    expect(trajectory.exit_raw).toBe('harness exited with 3: scripted harness: refusing on purpose');
  }, 60_000);
});
