/**
 * `POST /admin/model` on the server as `winnower serve` composes it (src/cli/runtime.ts): the next
 * request after a swap scores with the new folder and says so (`scored_by`), a job started before
 * finishes on the model it started with, a bad folder leaves the old model serving, and the route
 * is closed to clients without a key or, on a keyless server, to clients off this host.
 */
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRuntime, type Runtime } from '../../src/cli/runtime.js';
import { DEFAULT_MODEL_DIR, loadConfig, TINY_MODEL_DIR } from '../../src/config.js';
import type { Trajectory } from '../../src/types/trajectory.js';
import { createWorld, demoRecordings, hasBubblewrap, solveBody, type TestWorld } from '../solve/helpers.js';

const PATCH = (line: string) =>
  `diff --git a/src/a.py b/src/a.py\n--- a/src/a.py\n+++ b/src/a.py\n@@ -1,1 +1,2 @@\n def f():\n+    ${line}\n`;
const rerankBody = {
  task: { instance_id: 'acme__widgets-1', problem_statement: 'f is wrong' },
  candidates: [
    { id: 'a', patch: PATCH('x = 1') },
    { id: 'b', patch: PATCH('y = 2') },
  ],
};

interface ScoredBy {
  model: { name: string; path: string | null; hash: string | null };
  selector: { path: string | null; hash: string | null; default_strategy: string | null; strategy: string };
  scorer: { backend: string; urls: string[] };
}

const dir = mkdtempSync(join(tmpdir(), 'winnower-admin-model-'));
/** The untrained tiny model (no selector.json) and the bundled trained one (its selector says robust), each copied into its own folder. */
const folderA = join(dir, 'model-a');
const folderB = join(dir, 'model-b');
cpSync(TINY_MODEL_DIR(), folderA, { recursive: true });
cpSync(DEFAULT_MODEL_DIR(), folderB, { recursive: true });

async function startRuntime(name: string, apiKeys: string[] = [], adminKeys: string[] = []): Promise<Runtime> {
  const config = loadConfig({
    env: {},
    overrides: {
      server: { data_dir: join(dir, name), api_keys: apiKeys, admin_keys: adminKeys },
      scorer: { backend: 'onnx', model: folderA },
    },
  });
  return createRuntime(config, { logger: false });
}

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('POST /admin/model', () => {
  let runtime: Runtime;
  beforeAll(async () => {
    runtime = await startRuntime('data');
  }, 60_000);
  afterAll(async () => {
    await runtime?.close();
  });

  const rerank = async () => {
    const response = await runtime.app.inject({ method: 'POST', url: '/rerank', payload: rerankBody });
    expect(response.statusCode).toBe(200);
    return response.json() as { selection: { strategy: string }; scored_by: ScoredBy; scores: Array<{ model: string }> };
  };

  it('swaps in the named folder: the next /rerank scores and selects with it and says so', async () => {
    const before = await rerank();
    expect(before.scored_by.model).toMatchObject({ name: 'model-a', path: folderA, hash: expect.stringMatching(/^sha256:[0-9a-f]{64}$/) });
    expect(before.scored_by.selector).toEqual({ path: null, hash: null, default_strategy: null, strategy: 'value' });
    expect(before.scored_by.scorer).toEqual({ backend: 'onnx', urls: [] });

    const swapped = await runtime.app.inject({ method: 'POST', url: '/admin/model', payload: { path: folderB } });
    expect(swapped.statusCode).toBe(200);
    const loaded = swapped.json();
    expect(loaded).toMatchObject({
      backend: 'onnx',
      model: 'model-b',
      default_strategy: 'robust',
      identity: { model: { path: folderB } },
      previous: { model: { hash: before.scored_by.model.hash } },
    });
    expect(loaded.identity.model.hash).not.toBe(before.scored_by.model.hash);
    expect(loaded.identity.selector.hash).toMatch(/^sha256:/);

    const after = await rerank();
    expect(after.scored_by.model).toEqual(loaded.identity.model);
    expect(after.scored_by.selector).toMatchObject({
      path: join(folderB, 'selector.json'),
      hash: loaded.identity.selector.hash,
      default_strategy: 'robust',
      strategy: 'robust',
    });
    expect(after.selection.strategy).toBe('robust');
    expect(after.scores.every((score) => score.model === 'model-b')).toBe(true);

    // An empty body re-reads the folder serving now: a retrained selector.json written into it is picked up.
    writeFileSync(
      join(folderB, 'selector.json'),
      JSON.stringify({ ...JSON.parse(JSON.stringify(runtime.valueModel.current.selector)), default_strategy: 'learned' }),
    );
    const reread = await runtime.app.inject({ method: 'POST', url: '/admin/model' });
    expect(reread.statusCode).toBe(200);
    expect(reread.json()).toMatchObject({
      model: 'model-b',
      default_strategy: 'learned',
      identity: { model: { hash: loaded.identity.model.hash } },
    });
    expect(reread.json().identity.selector.hash).not.toBe(loaded.identity.selector.hash);
    expect((await rerank()).scored_by.selector).toMatchObject({ default_strategy: 'learned', strategy: 'learned' });
  }, 60_000);

  it('refuses a bad folder with 422 naming the problem, and the old model keeps serving', async () => {
    const serving = (await rerank()).scored_by;
    const noCard = join(dir, 'no-card');
    cpSync(TINY_MODEL_DIR(), noCard, { recursive: true });
    rmSync(join(noCard, 'config.json'));
    const brokenGraph = join(dir, 'broken-graph');
    cpSync(TINY_MODEL_DIR(), brokenGraph, { recursive: true });
    writeFileSync(join(brokenGraph, 'model.onnx'), 'not an onnx graph');
    const brokenSelector = join(dir, 'broken-selector');
    cpSync(TINY_MODEL_DIR(), brokenSelector, { recursive: true });
    writeFileSync(join(brokenSelector, 'selector.json'), JSON.stringify({ format: 'winnower-selector-1', signals: 'none' }));
    const cases: Array<[string, RegExp]> = [
      [join(dir, 'missing'), /is not a folder/],
      [noCard, /has no config\.json/],
      [brokenGraph, /model\.onnx|onnx|protobuf/i],
      [brokenSelector, /selector\.json/],
    ];
    for (const [path, problem] of cases) {
      const response = await runtime.app.inject({ method: 'POST', url: '/admin/model', payload: { path } });
      expect(response.statusCode, path).toBe(422);
      const { error } = response.json();
      expect(error.code).toBe('WNW_ERR_SCORE_RELOAD');
      expect(error.message).toMatch(problem);
      expect(error.message).toContain('the current model keeps serving');
      expect(error.details.path).toBe(path);
    }
    const relative = await runtime.app.inject({ method: 'POST', url: '/admin/model', payload: { path: 'models/x' } });
    expect(relative.statusCode).toBe(400);
    expect(relative.json().error.details.field).toBe('body.path');
    const typo = await runtime.app.inject({ method: 'POST', url: '/admin/model', payload: { folder: folderA } });
    expect(typo.statusCode).toBe(400);
    expect((await rerank()).scored_by).toEqual(serving);
  }, 60_000);

  it('on a server without API keys answers only clients on this host', async () => {
    const remote = await runtime.app.inject({ method: 'POST', url: '/admin/model', remoteAddress: '10.1.2.3', payload: {} });
    expect(remote.statusCode).toBe(403);
    expect(remote.json().error.code).toBe('WNW_ERR_AUTH_ADMIN');
    for (const address of ['::1', '::ffff:127.0.0.1', '127.0.0.2']) {
      const local = await runtime.app.inject({ method: 'POST', url: '/admin/model', remoteAddress: address, payload: {} });
      expect(local.statusCode, address).toBe(200);
    }
    // Refused before its body is looked at.
    const remoteTypo = await runtime.app.inject({
      method: 'POST',
      url: '/admin/model',
      remoteAddress: '10.1.2.3',
      payload: { folder: 'x' },
    });
    expect(remoteTypo.statusCode).toBe(403);
    // A forwarded header does not make a remote client local.
    const forwarded = await runtime.app.inject({
      method: 'POST',
      url: '/admin/model',
      remoteAddress: '10.1.2.3',
      headers: { 'x-forwarded-for': '127.0.0.1' },
      payload: {},
    });
    expect(forwarded.statusCode).toBe(403);
  }, 60_000);
});

// Issue 27 item 23: any API key could swap the model; admin keys are separate now.
describe('POST /admin/model on a server with API keys and admin keys', () => {
  let runtime: Runtime;
  beforeAll(async () => {
    runtime = await startRuntime('data-keyed', ['user-key-123456'], ['admin-key-123456']);
  }, 60_000);
  afterAll(async () => {
    await runtime?.close();
  });

  const post = (headers: Record<string, string>, remoteAddress = '10.1.2.3') =>
    runtime.app.inject({ method: 'POST', url: '/admin/model', remoteAddress, headers, payload: { path: folderB } });

  it('opens only to an admin key, from anywhere; an API key gets 403, even on this host', async () => {
    expect((await post({})).statusCode).toBe(401);
    const wrong = await post({ authorization: 'Bearer not-the-key-000' });
    expect(wrong.statusCode).toBe(403);
    expect(wrong.json().error.code).toBe('WNW_ERR_AUTH_INVALID');
    for (const address of ['10.1.2.3', '127.0.0.1']) {
      const user = await post({ authorization: 'Bearer user-key-123456' }, address);
      expect(user.statusCode).toBe(403);
      expect(user.json().error.code).toBe('WNW_ERR_AUTH_ADMIN');
    }
    expect(runtime.valueModel.current.scorer.model).toBe('model-a');
    const admin = await post({ 'x-api-key': 'admin-key-123456' });
    expect(admin.statusCode).toBe(200);
    expect(runtime.valueModel.current.scorer.model).toBe('model-b');
    // An admin key opens the ordinary routes too.
    const jobs = await runtime.app.inject({
      method: 'GET',
      url: '/jobs',
      remoteAddress: '10.1.2.3',
      headers: { 'x-api-key': 'admin-key-123456' },
    });
    expect(jobs.statusCode).toBe(200);
  }, 60_000);
});

describe('POST /admin/model on a server with API keys and no admin keys', () => {
  let runtime: Runtime;
  beforeAll(async () => {
    runtime = await startRuntime('data-keyed-only', ['user-key-123456']);
  }, 60_000);
  afterAll(async () => {
    await runtime?.close();
  });

  it('answers an API key on this host only', async () => {
    const post = (remoteAddress: string) =>
      runtime.app.inject({
        method: 'POST',
        url: '/admin/model',
        remoteAddress,
        headers: { authorization: 'Bearer user-key-123456' },
        payload: { path: folderB },
      });
    const remote = await post('10.1.2.3');
    expect(remote.statusCode).toBe(403);
    expect(remote.json().error.code).toBe('WNW_ERR_AUTH_ADMIN');
    expect(runtime.valueModel.current.scorer.model).toBe('model-a');
    expect((await post('127.0.0.1')).statusCode).toBe(200);
  }, 60_000);
});

const bwrap = hasBubblewrap();

describe.skipIf(!bwrap)(`a /solve job running across POST /admin/model${bwrap ? '' : ' (skipped: bubblewrap is not installed)'}`, () => {
  let world: TestWorld;
  let runtime: Runtime;
  beforeAll(async () => {
    world = await createWorld();
    runtime = await startRuntime('data-solve');
  }, 60_000);
  afterAll(async () => {
    await runtime?.close();
    await world?.close();
  });

  /** `recording` that first sleeps `seconds` in its sandbox, so that the job is surely running when the model is swapped. */
  function withPause(recording: Trajectory, seconds: number): Trajectory {
    const pause = {
      role: 'assistant' as const,
      content: 'Wait a moment.',
      tool_calls: [
        {
          id: 'call_pause',
          type: 'function' as const,
          function: { name: 'bash', arguments: JSON.stringify({ command: `sleep ${seconds}` }) },
        },
      ],
    };
    return { ...recording, messages: [pause, ...recording.messages] };
  }

  it('finishes on the model it started with; the next request gets the new one', async () => {
    const correct = demoRecordings()['correct-fix']!;
    const body = solveBody(world.repo, {
      n: 1,
      policy: { kind: 'replay', recordings: [withPause(correct, 2)] },
      verify: { enabled: false },
    });
    const started = await runtime.app.inject({ method: 'POST', url: '/solve', payload: body });
    expect(started.statusCode).toBe(202);
    const jobId = started.json().job_id as string;
    const job = async () => (await runtime.app.inject({ method: 'GET', url: `/jobs/${jobId}` })).json();
    for (let i = 0; i < 200 && (await job()).status === 'queued'; i++) await new Promise((resolve) => setTimeout(resolve, 50));
    expect((await job()).status).toBe('running');

    const swapped = await runtime.app.inject({ method: 'POST', url: '/admin/model', payload: { path: folderB } });
    expect(swapped.statusCode).toBe(200);
    expect((await runtime.app.inject({ method: 'POST', url: '/rerank', payload: rerankBody })).json().scored_by.model.path).toBe(folderB);

    const finished = await runtime.jobs.wait(jobId);
    expect(finished.status).toBe('succeeded');
    const result = (await job()).result;
    expect(result.scored_by.model).toMatchObject({ name: 'model-a', path: folderA, hash: swapped.json().previous.model.hash });
    expect(result.scored_by.selector).toMatchObject({ hash: null, strategy: result.selection.strategy });
    expect((await job()).candidates[0].score.model).toBe('model-a');
  }, 120_000);

  it('a job cancelled mid-run keeps scored_by in its partial result (from its job-start event)', async () => {
    const correct = demoRecordings()['correct-fix']!;
    const body = solveBody(world.repo, {
      n: 1,
      policy: { kind: 'replay', recordings: [withPause(correct, 30)] },
      verify: { enabled: false },
    });
    const started = await runtime.app.inject({ method: 'POST', url: '/solve', payload: body });
    const jobId = started.json().job_id as string;
    const job = async () => (await runtime.app.inject({ method: 'GET', url: `/jobs/${jobId}` })).json();
    for (let i = 0; i < 200 && (await job()).status === 'queued'; i++) await new Promise((resolve) => setTimeout(resolve, 50));
    const serving = runtime.valueModel.current.identity;
    expect((await runtime.app.inject({ method: 'DELETE', url: `/jobs/${jobId}` })).statusCode).toBe(200);
    const { result, status } = await job();
    expect(status).toBe('cancelled');
    expect(result.partial).toBe(true);
    expect(result.scored_by.model).toEqual(serving.model);
    expect(result.scored_by.selector).toMatchObject({ hash: serving.selector.hash, strategy: result.selection.strategy });
  }, 120_000);
});
