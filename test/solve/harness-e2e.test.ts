/**
 * /solve end to end with harness CLIs: local sandboxes (network off), the ONNX scorer, real
 * verification, and a fake policy server scripted in each harness's own protocol to fix the demo
 * bug. The real `pi` (OpenAI Chat Completions) and `claude` (Anthropic Messages) CLIs run when
 * installed (`winnower harness install pi claude-code`; .ci/run does it) and are skipped, naming
 * the reason, when not; the scripted python3 harness (test/fixtures/harnesses) always runs.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarnessCatalog } from '../../src/candidates/harness/harness-catalog.js';
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
  trajectory: { messages: Array<{ role: string; tool_calls?: Array<{ function: { name: string; arguments: string } }> }>; meta: Record<string, any>; usage: Record<string, number> };
}

describe.skipIf(!hasBubblewrap())('POST /solve with harness CLIs (local sandboxes, fake policy in each protocol)', () => {
  let world: TestWorld;
  let fake: FakeHarnessPolicy;

  beforeAll(async () => {
    world = await createWorld();
    fake = await startFakeHarnessPolicy({
      'pi-fix': { tool: 'bash', commands: fix, final: 'Fixed: amounts may now have several digits.' },
      'claude-fix': { tool: 'Bash', args: (command) => ({ command, description: 'run a step of the fix' }), commands: fix, final: 'Fixed.' },
      'scripted-fix': { tool: 'bash', commands: fix },
      runaway: { tool: 'bash', commands: [], final: 'Thinking.' },
      'codex-fix': { tool: 'exec_command', args: (command) => ({ cmd: command }), commands: fix, final: 'Fixed.' },
    });
  });
  afterAll(async () => {
    await fake?.close();
    await world?.close();
  });

  async function solve(harness: string, policy: Record<string, unknown>, options: { catalog?: typeof installed; n?: number; concurrency?: number } = {}) {
    const server = await world.start({ harnesses: options.catalog ?? installed });
    try {
      const body = solveBody(world.repo, { n: options.n ?? 2, ...(options.concurrency ? { concurrency: options.concurrency } : {}), policy });
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
    const { job, candidates } = await solve('scripted', { kind: 'openai', url: fake.url, model: 'scripted-fix', api_key: UPSTREAM_KEY }, { catalog: scripted });
    expect(job.status).toBe('succeeded');
    expect(job.result.chosen.verify_status).toBe('resolved');
    expect(job.result.chosen.patch).toContain('(\\d+)([hms])');
    expectFixedFromRecording(candidates, 'bash');
    expect(candidates.map((candidate) => candidate.trajectory.meta.seed).sort()).toEqual([0, 1]);
    expect(openSandboxCount()).toBe(0);
  }, 240_000);

  it('a malformed upstream answer fails that candidate with the reason; the job goes on', async () => {
    fake.malformed(1);
    const { job, candidates } = await solve('scripted', { kind: 'openai', url: fake.url, model: 'scripted-fix', api_key: UPSTREAM_KEY }, { catalog: scripted, concurrency: 1 });
    expect(job.status).toBe('succeeded');
    const [first, second] = candidates;
    expect(first).toMatchObject({ status: 'failed', exit: 'error', error: { code: 'WNW_ERR_POLICY_RESPONSE' } });
    expect(first!.error!.message).toMatch(/malformed|JSON|not valid/i);
    expect(second).toMatchObject({ status: 'finished', exit: 'submitted' });
  }, 240_000);

  it('a running harness candidate shows its recorded calls; DELETE /jobs/:id cancels it and keeps them', async () => {
    const server = await world.start({ harnesses: scripted });
    try {
      const body = solveBody(world.repo, { n: 1, issue: '@runaway', verify: { enabled: false }, policy: { kind: 'openai', url: fake.url, model: 'runaway', api_key: UPSTREAM_KEY } });
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

  const [noPi, piTitle] = needs('pi', '[harness-cli] the real pi CLI: N = 2 candidates from its recorded chat-completions calls, patches that pass verification');
  it.skipIf(noPi)(piTitle, async () => {
    const { job, candidates } = await solve('pi', { kind: 'openai', url: fake.url, model: 'pi-fix', api_key: UPSTREAM_KEY });
    expect(job.status).toBe('succeeded');
    expect(job.result.chosen.verify_status).toBe('resolved');
    expectFixedFromRecording(candidates, 'bash');
    expect(candidates[0]!.trajectory.meta).toMatchObject({ harness: 'pi', harness_version: '0.73.1', protocol: 'openai-chat', exit_code: 0 });
    // pi streamed; the proxy asked the upstream for whole answers and re-sent them as SSE.
    expect(candidates[0]!.trajectory.meta.exchanges.every((exchange: { stream: boolean }) => exchange.stream)).toBe(true);
  }, 240_000);

  const [noClaude, claudeTitle] = needs('claude-code', '[harness-cli] the real claude CLI: N = 2 candidates from its recorded Anthropic Messages calls, patches that pass verification');
  it.skipIf(noClaude)(claudeTitle, async () => {
    const { job, candidates } = await solve('claude-code', { kind: 'anthropic', url: fake.url, model: 'claude-fix', api_key: UPSTREAM_KEY });
    expect(job.status).toBe('succeeded');
    expect(job.result.chosen.verify_status).toBe('resolved');
    expectFixedFromRecording(candidates, 'Bash');
    expect(candidates[0]!.trajectory.meta).toMatchObject({ harness: 'claude-code', protocol: 'anthropic-messages', exit_code: 0 });
    const claudeCalls = fake.requests.filter((request) => request.path === '/v1/messages');
    expect(claudeCalls.every((request) => request.headers['x-api-key'] === UPSTREAM_KEY && request.body.model === 'claude-fix')).toBe(true);
  }, 240_000);

  // Not tagged [harness-cli]: CI does not install codex (~400 MB); it runs where it is installed.
  const [noCodex, codexTitle] = needs('codex', 'the real codex CLI: N = 2 candidates from its recorded Responses API calls, patches that pass verification');
  it.skipIf(noCodex)(codexTitle, async () => {
    const { job, candidates } = await solve('codex', { kind: 'openai', url: fake.url, model: 'codex-fix', api_key: UPSTREAM_KEY });
    expect(job.status).toBe('succeeded');
    expect(job.result.chosen.verify_status).toBe('resolved');
    expectFixedFromRecording(candidates, 'exec_command');
    expect(candidates[0]!.trajectory.meta).toMatchObject({ harness: 'codex', protocol: 'openai-responses', exit_code: 0 });
  }, 240_000);
});
