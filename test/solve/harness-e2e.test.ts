/**
 * /solve end to end with harness CLIs: local sandboxes (network off), the ONNX scorer, real
 * verification, and a fake policy server scripted in each harness's own protocol to fix the demo
 * bug. The real `pi` (OpenAI Chat Completions) and `claude` (Anthropic Messages) CLIs run when
 * installed (`winnower harness install pi claude-code`; .ci/run does it) and are skipped, naming
 * the reason, when not; the scripted python3 harness (test/fixtures/harnesses) always runs.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarnessCatalog } from '../../src/rollout/harness/harness-catalog.js';
import { openSandboxCount } from '../../src/sandbox/lifecycle.js';
import { startFakeHarnessPolicy, type FakeHarnessPolicy } from '../fakes/fake-harness-policy.js';
import { commandsOf, createWorld, demoRecordings, hasBubblewrap, solveBody, type TestWorld } from './helpers.js';

const UPSTREAM_KEY = 'sk-upstream-e2e-0c4f1b9a77d2';
// The correct fix's commands without the built-in agent's submit sentinel: a harness ends its turn with text.
const fix = commandsOf(demoRecordings()['correct-fix']!).filter((command) => !command.includes('COMPLETE_TASK_AND_SUBMIT'));
const installed = createHarnessCatalog();
const scripted = createHarnessCatalog({ definitionsDir: new URL('../fixtures/harnesses', import.meta.url).pathname });

/** A test title that says why it is skipped when the harness CLI is not installed here. */
function needs(name: string, title: string): [boolean, string] {
  const status = installed.list().find((harness) => harness.name === name);
  if (status?.available) return [false, title];
  return [true, `${title} [skipped: ${status?.reason ?? `no harness ${name}`}; install with: ${status?.install_command ?? '?'}]`];
}

interface CandidateView {
  index: number;
  status: string;
  exit: string;
  error: { code: string; message: string } | null;
  verify: { status: string } | null;
  trajectory: {
    messages: Array<{ role: string; tool_calls?: Array<{ function: { name: string; arguments: string } }> }>;
    meta: Record<string, any>;
    usage: Record<string, number>;
  };
}

describe.skipIf(!hasBubblewrap())('POST /solve with harness CLIs (local sandboxes, fake policy in each protocol)', () => {
  let world: TestWorld;
  let fake: FakeHarnessPolicy;

  beforeAll(async () => {
    world = await createWorld();
    fake = await startFakeHarnessPolicy({
      'pi-fix': { tool: 'bash', commands: fix, final: 'Fixed: amounts may now have several digits.' },
      'claude-fix': {
        tool: 'Bash',
        args: (command) => ({ command, description: 'run a step of the fix' }),
        commands: fix,
        final: 'Fixed.',
      },
      'scripted-fix': { tool: 'bash', commands: fix },
      runaway: { tool: 'bash', commands: [], final: 'Thinking.' },
      'codex-fix': { tool: 'exec_command', args: (command) => ({ cmd: command }), commands: fix, final: 'Fixed.' },
    });
  });
  afterAll(async () => {
    await fake?.close();
    await world?.close();
  });

  async function solve(
    harness: string,
    policy: Record<string, unknown>,
    options: { catalog?: typeof installed; n?: number; concurrency?: number } = {},
  ) {
    const server = await world.start({ harnesses: options.catalog ?? installed });
    try {
      const body = solveBody(world.repo, {
        n: options.n ?? 2,
        ...(options.concurrency ? { concurrency: options.concurrency } : {}),
        policy,
      });
      body.agent = { ...(body.agent as object), harness, time_limit_s: 180 };
      const response = await server.app.inject({ method: 'POST', url: '/solve?wait=true', payload: body });
      expect(response.statusCode, response.body).toBe(200);
      const job = response.json();
      const full = (await server.app.inject({ method: 'GET', url: `/jobs/${job.job_id}?trajectories=true` })).json();
      return { job, candidates: full.candidates as CandidateView[] };
    } finally {
      await server.close();
    }
  }

  function expectFixedFromRecording(candidates: CandidateView[], tool: string): void {
    for (const candidate of candidates) {
      expect(candidate.status).toBe('finished');
      expect(candidate.exit).toBe('submitted');
      expect(candidate.verify?.status).toBe('resolved');
      const { trajectory } = candidate;
      // Every recorded call is there: one per command, and the final text turn.
      const main = trajectory.meta.exchanges.filter((exchange: { kind: string }) => exchange.kind === 'main');
      expect(main).toHaveLength(fix.length + 1);
      expect(trajectory.usage.calls).toBe(fix.length + 1);
      const called = trajectory.messages.flatMap((message) => message.tool_calls ?? []);
      expect(called.map((call) => call.function.name)).toEqual(fix.map(() => tool));
      expect(called.map((call) => JSON.parse(call.function.arguments)).map((args) => args.command ?? args.cmd)).toEqual(fix);
      expect(trajectory.messages.filter((message) => message.role === 'tool')).toHaveLength(fix.length);
      expect(JSON.stringify(trajectory)).not.toContain(UPSTREAM_KEY);
    }
  }

  it('the scripted harness: N = 2 candidates from the recorded calls, patches that pass verification', async () => {
    const { job, candidates } = await solve(
      'scripted',
      { kind: 'openai', url: fake.url, model: 'scripted-fix', api_key: UPSTREAM_KEY },
      { catalog: scripted },
    );
    expect(job.status).toBe('succeeded');
    expect(job.result.chosen.verify_status).toBe('resolved');
    expect(job.result.chosen.patch).toContain('(\\d+)([hms])');
    expectFixedFromRecording(candidates, 'bash');
    expect(candidates.map((candidate) => candidate.trajectory.meta.seed).sort()).toEqual([0, 1]);
    expect(openSandboxCount()).toBe(0);
  }, 240_000);

  it('a malformed upstream answer fails that candidate with the reason; the job goes on', async () => {
    fake.malformed(1);
    const { job, candidates } = await solve(
      'scripted',
      { kind: 'openai', url: fake.url, model: 'scripted-fix', api_key: UPSTREAM_KEY },
      { catalog: scripted, concurrency: 1 },
    );
    expect(job.status).toBe('succeeded');
    const [first, second] = candidates;
    expect(first).toMatchObject({ status: 'failed', exit: 'error', error: { code: 'WNW_ERR_POLICY_RESPONSE' } });
    expect(first!.error!.message).toMatch(/malformed|JSON|not valid/i);
    expect(second).toMatchObject({ status: 'finished', exit: 'submitted' });
  }, 240_000);

  it('a running harness candidate shows its recorded calls; DELETE /jobs/:id cancels it and keeps them', async () => {
    const server = await world.start({ harnesses: scripted });
    try {
      const body = solveBody(world.repo, {
        n: 1,
        issue: '@runaway',
        verify: { enabled: false },
        policy: { kind: 'openai', url: fake.url, model: 'runaway', api_key: UPSTREAM_KEY },
      });
      body.agent = { ...(body.agent as object), harness: 'scripted', step_limit: 100_000 };
      const posted = await server.app.inject({ method: 'POST', url: '/solve', payload: body });
      expect(posted.statusCode).toBe(202);
      const id = posted.json().job_id as string;
      const steps = async () => {
        const job = (await server.app.inject({ method: 'GET', url: `/jobs/${id}?trajectories=true` })).json();
        return Number(job.candidates[0]?.trajectory?.meta?.steps ?? 0);
      };
      for (let attempt = 0; attempt < 400 && (await steps()) < 3; attempt += 1) await new Promise((resolve) => setTimeout(resolve, 50));
      expect(await steps()).toBeGreaterThanOrEqual(3);
      expect((await server.app.inject({ method: 'DELETE', url: `/jobs/${id}` })).statusCode).toBeLessThan(300);
      const done = await server.jobs.wait(id);
      expect(done.status).toBe('cancelled');
      const job = (await server.app.inject({ method: 'GET', url: `/jobs/${id}?trajectories=true` })).json();
      expect(job.candidates[0].status).toBe('cancelled');
      expect(job.candidates[0].trajectory.meta.steps).toBeGreaterThanOrEqual(3);
      expect(openSandboxCount()).toBe(0);
    } finally {
      await server.close();
    }
  }, 120_000);

  // The real CLIs, each against the fake speaking its protocol. codex is not tagged [harness-cli]:
  // CI does not install it (~400 MB); it runs where it is installed.
  const clis = [
    {
      harness: 'pi',
      tag: '[harness-cli] ',
      calls: 'chat-completions',
      policy: { kind: 'openai', model: 'pi-fix' },
      tool: 'bash',
      path: '/v1/chat/completions',
      key: 'authorization',
      protocol: 'openai-chat',
    },
    {
      harness: 'claude-code',
      tag: '[harness-cli] ',
      calls: 'Anthropic Messages',
      policy: { kind: 'anthropic', model: 'claude-fix' },
      tool: 'Bash',
      path: '/v1/messages',
      key: 'x-api-key',
      protocol: 'anthropic-messages',
    },
    {
      harness: 'codex',
      tag: '',
      calls: 'Responses API',
      policy: { kind: 'openai', model: 'codex-fix' },
      tool: 'exec_command',
      path: '/v1/responses',
      key: 'authorization',
      protocol: 'openai-responses',
    },
  ];
  for (const cli of clis) {
    const [missing, title] = needs(
      cli.harness,
      `${cli.tag}the real ${cli.harness} CLI: N = 2 candidates from its recorded ${cli.calls} calls, patches that pass verification`,
    );
    it.skipIf(missing)(
      title,
      async () => {
        const { job, candidates } = await solve(cli.harness, { ...cli.policy, url: fake.url, api_key: UPSTREAM_KEY });
        expect(job.status).toBe('succeeded');
        expect(job.result.chosen.verify_status).toBe('resolved');
        expectFixedFromRecording(candidates, cli.tool);
        expect(candidates[0]!.trajectory.meta).toMatchObject({ harness: cli.harness, protocol: cli.protocol, exit_code: 0 });
        // Each CLI streamed; the proxy asked the upstream for whole answers and re-sent them as SSE.
        expect(candidates[0]!.trajectory.meta.exchanges.every((exchange: { stream: boolean }) => exchange.stream)).toBe(true);
        // The upstream got the policy's key and model, from the proxy.
        const sent = fake.requests.filter((request) => request.path === cli.path && request.body.model === cli.policy.model);
        expect(sent.length).toBeGreaterThanOrEqual(2 * (fix.length + 1));
        expect(sent.every((request) => String(request.headers[cli.key]).endsWith(UPSTREAM_KEY))).toBe(true);
      },
      240_000,
    );
  }
});
