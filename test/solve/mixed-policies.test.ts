/**
 * Mixed-policy best-of-N (issue 19 item 4): one /solve job splits its N over several policies;
 * every candidate carries its configuration (result, store, events), `train --from-store` learns
 * per-configuration priors from such a job, and those priors take part in the job's selection.
 * Real components: local bubblewrap sandboxes, real verification, replay policies.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPolicyFactory } from '../../src/rollout/policy/policy-factory.js';
import { createHarnessCatalog, type HarnessCatalog } from '../../src/rollout/harness/harness-catalog.js';
import { configKey, fitPriors, type Priors } from '../../src/select/priors.js';
import type { ValueModel } from '../../src/scoring/value-model.js';
import { buildApp } from '../../src/server/app.js';
import { REDACTED, redactRequest } from '../../src/server/plugins/redact-request.js';
import { JobManager } from '../../src/solve/job-manager.js';
import { jobWaves, planPolicies } from '../../src/solve/policy-plan.js';
import { SolveRequest } from '../../src/solve/solve-request.js';
import { createSqliteStore } from '../../src/store/sqlite-store.js';
import { labelledFromStore } from '../../src/train/store-rows.js';
import type { Trajectory } from '../../src/types/index.js';
import { startFakeHarnessPolicy } from '../fakes/fake-harness-policy.js';
import { commandsOf, createWorld, demoRecordings, demoTask, hasBubblewrap, type TestWorld } from './helpers.js';

const recordings = demoRecordings();
const replay = (...names: string[]) => ({ kind: 'replay', recordings: names.map((name) => recordings[name]!) });

describe('policies in the /solve body', () => {
  const base = { issue: 'x', repo: { path: '/r' } };
  const issuesOf = (body: Record<string, unknown>) => {
    const parsed = SolveRequest.safeParse({ ...base, ...body });
    expect(parsed.success).toBe(false);
    return parsed.error!.issues.map((issue) => ({ path: issue.path.join('.'), message: issue.message }));
  };

  it('n is the sum of the policies, the one-policy form the one-entry case', () => {
    const mixed = SolveRequest.parse({
      ...base,
      policies: [
        { n: 3, policy: replay('correct-fix') },
        { n: 2, agent: { harness: 'pi' }, waves: [1, 1] },
      ],
    });
    expect(mixed.n).toBe(5);
    const plan = planPolicies(mixed);
    expect(plan.map((p) => [p.first, p.n, p.agent.harness, p.waves])).toEqual([
      [0, 3, 'winnower', [3]],
      [3, 2, 'pi', [1, 1]],
    ]);
    // Wave 0 holds both policies' first waves, interleaved; wave 1 the second policy's second.
    expect(jobWaves(plan)).toEqual([[0, 3, 1, 2], [4]]);
    const single = SolveRequest.parse(base);
    expect(single.n).toBe(4);
    expect(planPolicies(single)).toMatchObject([{ first: 0, n: 4, waves: [4], agent: { harness: 'winnower' } }]);
  });

  it('bad policies are refused naming the field', () => {
    expect(issuesOf({ policies: [{ n: 2 }, { n: 0 }] })).toContainEqual(expect.objectContaining({ path: 'policies.1.n' }));
    expect(issuesOf({ policies: [{ n: 2, polcy: {} }] })).toContainEqual(expect.objectContaining({ path: 'policies.0' }));
    expect(issuesOf({ policies: [{ n: 2, policy: { kind: 'openai', url: 'ftp://x', model: 'm' } }] })).toContainEqual(
      expect.objectContaining({ path: 'policies.0.policy.url' }),
    );
    expect(issuesOf({ n: 5, policies: [{ n: 2 }, { n: 2 }] })).toContainEqual({
      path: 'n',
      message: 'n (5) must equal the sum of policies[].n (4), or be left out',
    });
    expect(issuesOf({ policies: [{ n: 40 }, { n: 40 }] })).toContainEqual(
      expect.objectContaining({ path: 'policies', message: expect.stringContaining('more than the 64') }),
    );
    expect(issuesOf({ waves: [2, 2], policies: [{ n: 2 }, { n: 2 }] })).toContainEqual(expect.objectContaining({ path: 'waves' }));
    expect(issuesOf({ policies: [{ n: 2, waves: [1] }] })).toContainEqual(expect.objectContaining({ path: 'policies.0.waves' }));
    expect(
      issuesOf({
        policies: [
          { n: 1, name: 'a' },
          { n: 1, name: 'a' },
        ],
      }),
    ).toContainEqual(expect.objectContaining({ path: 'policies.1.name' }));
    expect(issuesOf({ policies: [] })).toContainEqual(expect.objectContaining({ path: 'policies' }));
  });

  it("keeps every policy's secrets out of the stored request", () => {
    const request = SolveRequest.parse({
      ...base,
      policies: [
        { n: 1, policy: { kind: 'openai', url: 'http://user:token@gpu-1:8000/v1', model: 'm', api_key: 'sk-secret' } },
        { n: 1, policy: replay('correct-fix') },
      ],
    });
    const stored = JSON.stringify(redactRequest(request));
    expect(stored).not.toContain('sk-secret');
    expect(stored).not.toContain('token@');
    expect(redactRequest(request).policies![0]!.policy).toMatchObject({ api_key: REDACTED, model: 'm' });
  });
});

/** The world's value model, with `priors` in its selector (as `winnower train` writes them into selector.json). */
function withPriors(valueModel: ValueModel, priors: Priors): ValueModel {
  return { ...valueModel, selector: { ...valueModel.selector!, priors } };
}

describe.skipIf(!hasBubblewrap())('a mixed-policy /solve job (local sandboxes, replay policies)', () => {
  let world: TestWorld;
  const task = demoTask();
  // Two policies: "steady" replays the correct fix once; "lucky" replays the wrong fix, then the one that breaks other tests.
  const policies = [
    { name: 'steady', n: 1, policy: replay('correct-fix') },
    { name: 'lucky', n: 2, policy: replay('plausible-wrong-fix', 'breaks-other-tests') },
  ];
  const body = (extra: Record<string, unknown>) => ({
    instance_id: task.instance_id,
    issue: task.problem_statement,
    repo: { path: world.repo },
    agent: { config: 'default', time_limit_s: 60, command_timeout_s: 30 },
    policies,
    ...extra,
  });
  const verify = {
    enabled: true,
    test_command: task.test_command,
    fail_to_pass: task.fail_to_pass,
    pass_to_pass: task.pass_to_pass,
    test_patch: task.test_patch,
    timeout_s: 60,
    regression: { enabled: false },
  };

  async function start(valueModel: ValueModel, harnesses?: HarnessCatalog) {
    const store = createSqliteStore(world.dataDir);
    const jobs = new JobManager(store);
    const app = await buildApp({
      jobs,
      store,
      valueModel,
      solveDeps: { sandboxes: world.sandboxes, store, createPolicy: createPolicyFactory(), harnesses },
    });
    return { app, store, close: async () => (await app.close(), store.close()) };
  }

  beforeAll(async () => {
    world = await createWorld();
  });
  afterAll(async () => {
    await world?.close();
  });

  let configs: Array<{ source: string; config: Record<string, unknown> }> = [];

  it('runs every policy, and every candidate carries its configuration in the result, the store and the events', async () => {
    const server = await start(world.valueModel);
    try {
      const response = await server.app.inject({
        method: 'POST',
        url: '/solve?wait=true',
        payload: body({ verify, scoring: { enabled: false } }),
      });
      expect(response.statusCode).toBe(200);
      const job = response.json();
      expect(job.status).toBe('succeeded');
      expect(job.result.rollouts).toMatchObject({ planned: 3, finished: 3 });
      const candidates = job.result.candidates as Array<{
        index: number;
        source: string;
        config: Record<string, unknown>;
        verify_status: string;
      }>;
      expect(candidates.map((c) => c.config.run)).toEqual(['steady', 'lucky', 'lucky']);
      for (const candidate of candidates) {
        expect(candidate.config).toMatchObject({ model: 'replay', harness: 'winnower', agent: 'default' });
        expect(candidate.source).toMatch(/^replay:/);
      }
      // Each policy counts its own rollouts from 0: lucky's first rollout replays its first recording.
      expect(candidates.map((c) => c.verify_status)).toEqual(['resolved', 'unresolved', 'unresolved']);
      const byIndex = new Map(job.candidates.map((c: { index: number; patch: string }) => [c.index, c.patch]));
      expect(byIndex.get(1)).toContain('(\\d{1,2})([hms])'); // the plausible wrong fix
      expect(byIndex.get(2)).not.toContain('(\\d{1,2})([hms])');
      expect(job.result.chosen.index).toBe(0);

      // The store keeps the configuration with each trajectory; the events announce it.
      const stored = await server.store.listCandidates(job.job_id);
      expect(stored.map((c) => (c.trajectory!.meta.config as Record<string, unknown>).run)).toEqual(['steady', 'lucky', 'lucky']);
      const events = (await server.store.listEvents(job.job_id)) as Array<Record<string, unknown>>;
      const start = events.find((event) => event.type === 'job-start')!;
      expect(start).toMatchObject({
        n: 3,
        waves: [3],
        policies: [
          { index: 0, n: 1, config: { run: 'steady' } },
          { index: 1, n: 2, config: { run: 'lucky' } },
        ],
      });
      const rolloutStarts = events.filter((event) => event.type === 'rollout-start');
      expect(rolloutStarts.map((event) => [event.index, event.policy, (event.config as Record<string, unknown>).run]).sort()).toEqual([
        [0, 0, 'steady'],
        [1, 1, 'lucky'],
        [2, 1, 'lucky'],
      ]);
      configs = candidates.map((c) => ({ source: c.source, config: c.config }));
      // The jobs list names the policies (their run names) and harnesses.
      const listed = (await server.app.inject({ url: '/jobs' })).json() as {
        jobs: Array<{ job_id: string; overview: Record<string, unknown> }>;
      };
      expect(listed.jobs.find((item) => item.job_id === job.job_id)?.overview).toMatchObject({
        n: 3,
        policy: 'steady, lucky',
        harness: 'winnower',
      });
    } finally {
      await server.close();
    }

    // train --from-store learns a prior per configuration from the mixed job's verified candidates.
    const rows = await labelledFromStore(world.dataDir);
    const priors = fitPriors(rows.map((row) => ({ trajectory: row.trajectory, repo: row.repo, resolved: row.resolved })));
    const steady = configKey({ source: configs[0]!.source, meta: { config: configs[0]!.config } } as Pick<Trajectory, 'source' | 'meta'>);
    expect(priors.configs[steady]).toEqual({ n: 1, resolved: 1 });
    const luckyKeys = Object.keys(priors.configs).filter((key) => key.includes('"run":"lucky"'));
    expect(luckyKeys.map((key) => priors.configs[key]!.resolved)).toEqual(luckyKeys.map(() => 0));
  }, 180_000);

  it("ranks by each candidate's configuration record when the model folder has priors", async () => {
    expect(configs).toHaveLength(3);
    const keyOf = (index: number) =>
      configKey({ source: configs[index]!.source, meta: { config: configs[index]!.config } } as Pick<Trajectory, 'source' | 'meta'>);
    const priorsFavouring = (good: number[]): Priors => ({
      overall: 0.5,
      configs: Object.fromEntries([0, 1, 2].map((index) => [keyOf(index), { n: 20, resolved: good.includes(index) ? 18 : 2 }])),
      repos: {},
    });
    // No tests and no scoring: only the configurations' records tell the candidates apart beyond agreement.
    for (const [good, chosenRun] of [
      [[0], 'steady'],
      [[1, 2], 'lucky'],
    ] as const) {
      const server = await start(withPriors(world.valueModel, priorsFavouring([...good])));
      try {
        const response = await server.app.inject({
          method: 'POST',
          url: '/solve?wait=true',
          payload: body({ verify: { enabled: false }, scoring: { enabled: false } }),
        });
        const job = response.json();
        expect(job.status).toBe('succeeded');
        expect(job.result.selection.strategy).toBe('robust');
        const chosen = job.result.candidates.find((c: { index: number }) => c.index === job.result.chosen.index);
        expect(chosen.config.run).toBe(chosenRun);
        expect(job.result.selection.reason).toContain('its configuration has the best record');
      } finally {
        await server.close();
      }
    }
  }, 180_000);

  it('mixes the built-in agent and a harness CLI in one job, each candidate with its own configuration', async () => {
    // The scripted python3 harness (test/fixtures/harnesses) over a fake policy server that speaks its protocol.
    const fix = commandsOf(recordings['correct-fix']!).filter((command) => !command.includes('COMPLETE_TASK_AND_SUBMIT'));
    const fake = await startFakeHarnessPolicy({ 'scripted-fix': { tool: 'bash', commands: fix } });
    const server = await start(
      world.valueModel,
      createHarnessCatalog({ definitionsDir: new URL('../fixtures/harnesses', import.meta.url).pathname }),
    );
    try {
      const response = await server.app.inject({
        method: 'POST',
        url: '/solve?wait=true',
        payload: body({
          verify,
          scoring: { enabled: false },
          policies: [
            { name: 'builtin', n: 1, policy: replay('plausible-wrong-fix') },
            {
              n: 1,
              policy: { kind: 'openai', url: fake.url, model: 'scripted-fix', temperature: 0.3 },
              agent: { harness: 'scripted', time_limit_s: 180 },
            },
          ],
        }),
      });
      const job = response.json();
      expect(job.status, response.body).toBe('succeeded');
      const [builtin, harness] = job.result.candidates as Array<{ source: string; config: Record<string, unknown>; verify_status: string }>;
      expect(builtin!.config).toMatchObject({ run: 'builtin', model: 'replay', harness: 'winnower', agent: 'default' });
      expect(harness!.config).toEqual({ model: 'scripted-fix', harness: 'scripted', temperature: 0.3 });
      expect(harness!.source).toMatch(/^scripted:/);
      expect([builtin!.verify_status, harness!.verify_status]).toEqual(['unresolved', 'resolved']);
      expect(job.result.chosen.index).toBe(1);
    } finally {
      await server.close();
      await fake.close();
    }
  }, 240_000);

  it('refuses a policy the server cannot run, naming its place in policies', async () => {
    const server = await start(world.valueModel);
    try {
      const response = await server.app.inject({
        method: 'POST',
        url: '/solve',
        payload: body({
          policies: [
            { n: 1, policy: replay('correct-fix') },
            { n: 1, policy: replay('correct-fix'), agent: { harness: 'no-such-harness' } },
          ],
        }),
      });
      expect(response.statusCode).toBe(400);
      expect(response.json().error.details.field).toBe('body.policies.1.agent.harness');
      const zero = await server.app.inject({ method: 'POST', url: '/solve', payload: body({ policies: [{ n: 1 }, { n: 0 }] }) });
      expect(zero.statusCode).toBe(400);
      expect(zero.json().error.details.field).toBe('body.policies.1.n');
    } finally {
      await server.close();
    }
  }, 60_000);
});
