/**
 * /metrics and request ids: what the scorer, the sandboxes and the jobs report through their
 * hooks shows on /metrics, and a request's id comes back in X-Request-Id and reaches the scorer
 * server it calls.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServiceMetrics } from '../../src/observability/metrics.js';
import { loadValueModel } from '../../src/scoring/value-model.js';
import { withObserver } from '../../src/sandbox/with-observer.js';
import { startFakePolicy } from '../fakes/fake-policy.js';
import { startFakeVllm, type FakeVllm } from '../fakes/fake-vllm.js';
import { FakeProvider } from '../verify/fake-sandbox.js';
import { gitRepo } from './git-repo.js';
import { startTestApp, type TestApp } from './test-app.js';

const task = { instance_id: 'demo__demo-1', problem_statement: 'x should be 2' };
const candidates = ['a', 'b', 'c'].map((id) => ({
  id,
  patch: `diff --git a/a.py b/a.py\n--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-x = 1\n+x = ${id}\n`,
}));

/** The value of one sample line of the exposition text (`name{labels} value`), 0 when absent. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const match = /^([^{\s]+)(?:\{([^}]*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const has = Object.fromEntries([...(match[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    if (Object.entries(labels).every(([key, value]) => has[key] === value)) return Number(match[3]);
  }
  return 0;
}

describe('metrics', () => {
  const metrics = createServiceMetrics({ defaultMetrics: false });
  let server: TestApp;
  beforeAll(async () => {
    server = await startTestApp({ valueModel: 'bundled', metrics });
  });
  afterAll(async () => server?.close());

  const scrape = async () => (await server.app.inject('/metrics')).body;

  it('counts scorer batches, tokens and cache hits, and request latency by route and status', async () => {
    for (let round = 0; round < 2; round += 1) {
      const response = await server.app.inject({ method: 'POST', url: '/score', payload: { task, candidates } });
      expect(response.statusCode).toBe(200);
    }
    await server.app.inject({ method: 'POST', url: '/score', payload: { task, candidates: [] } });
    const text = await scrape();
    expect(sample(text, 'winnower_scorer_batch_size_sum', { backend: 'onnx' })).toBe(3);
    expect(sample(text, 'winnower_scorer_batch_duration_seconds_count', { backend: 'onnx', outcome: 'ok' })).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'winnower_scorer_tokens_total', { backend: 'onnx' })).toBeGreaterThan(0);
    expect(sample(text, 'winnower_scorer_inputs_total', { backend: 'onnx', cache: 'miss' })).toBe(3);
    expect(sample(text, 'winnower_scorer_inputs_total', { backend: 'onnx', cache: 'hit' })).toBe(3);
    expect(sample(text, 'winnower_http_request_duration_seconds_count', { route: '/score', status: '200' })).toBe(2);
    expect(sample(text, 'winnower_http_request_duration_seconds_count', { route: '/score', status: '400' })).toBe(1);
  });

  it('shows jobs by status, the queue, and rollouts in flight and verifications from job events', async () => {
    let release!: () => void;
    const job = await server.jobs.start('solve', {}, async (_id, { emit }) => {
      emit({ type: 'rollout-start', index: 0, wave: 0 });
      await new Promise<void>((resolve) => (release = resolve));
      emit({ type: 'rollout-finish', index: 0, status: 'finished', exit: 'submitted', steps: 1, patch_bytes: 10 });
      emit({ type: 'verify-finish', index: 0, status: 'resolved', resolved: true });
    });
    while (!release) await new Promise((resolve) => setImmediate(resolve));
    let text = await scrape();
    expect(sample(text, 'winnower_jobs', { status: 'running' })).toBe(1);
    expect(sample(text, 'winnower_rollouts_in_flight')).toBe(1);
    expect(sample(text, 'winnower_jobs_queued')).toBe(0);
    release();
    await server.jobs.wait(job.id);
    text = await scrape();
    expect(sample(text, 'winnower_jobs', { status: 'running' })).toBe(0);
    expect(sample(text, 'winnower_jobs', { status: 'succeeded' })).toBe(1);
    expect(sample(text, 'winnower_rollouts_in_flight')).toBe(0);
    expect(sample(text, 'winnower_rollouts_total', { status: 'finished' })).toBe(1);
    expect(sample(text, 'winnower_verifications_total', { status: 'resolved' })).toBe(1);
  });

  it('times sandbox create and exec through the provider wrapper, failures by outcome', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'wnw-metrics-'));
    const root = gitRepo(join(dir, 'repo'));
    const fake = new FakeProvider({ failCreate: (spec) => spec.label === 'fail' });
    const provider = withObserver(fake, metrics.sandbox);
    const sandbox = await provider.create({ repo: { path: root } });
    await sandbox.exec('true');
    await sandbox.exec('exit 3');
    await sandbox.close();
    await expect(provider.create({ repo: { path: root }, label: 'fail' })).rejects.toMatchObject({ code: 'WNW_ERR_SBX_CREATE' });
    expect(provider.name).toBe('fake');
    const text = await scrape();
    expect(sample(text, 'winnower_sandbox_create_duration_seconds_count', { provider: 'fake', outcome: 'ok' })).toBe(1);
    expect(sample(text, 'winnower_sandbox_create_duration_seconds_count', { provider: 'fake', outcome: 'error' })).toBe(1);
    expect(sample(text, 'winnower_sandbox_exec_duration_seconds_count', { provider: 'fake', outcome: 'ok' })).toBe(2);
    await fake.close();
    rmSync(dir, { recursive: true, force: true });
  });
});

describe('request ids', () => {
  let vllm: FakeVllm;
  let server: TestApp;
  beforeAll(async () => {
    vllm = await startFakeVllm();
    const valueModel = await loadValueModel({
      backend: 'vllm',
      model: vllm.model,
      urls: [vllm.url],
      cacheEntries: 0,
      batching: false,
      retries: 0,
    });
    server = await startTestApp({ valueModel });
  });
  afterAll(async () => {
    await server?.close();
    await server?.valueModel?.scorer.close();
    await vllm?.close();
  });

  it('answers every request with an X-Request-Id, a fresh one unless the client sent a plain token', async () => {
    const fresh = await server.app.inject('/healthz');
    expect(fresh.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    const kept = await server.app.inject({ url: '/healthz', headers: { 'x-request-id': 'client-42.a:b' } });
    expect(kept.headers['x-request-id']).toBe('client-42.a:b');
    for (const hostile of ['has space', 'x'.repeat(129), 'new\u2028line', '{"json":1}']) {
      const replaced = await server.app.inject({ url: '/healthz', headers: { 'x-request-id': hostile } });
      expect(replaced.headers['x-request-id']).not.toBe(hostile);
      expect(replaced.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    }
    const refused = await server.app.inject({ url: '/nowhere' });
    expect(refused.statusCode).toBe(404);
    expect(refused.headers['x-request-id']).toBeDefined();
  });

  it('carries the id of POST /solve into its job: the policy server sees it, the sandboxes are labelled with it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'wnw-reqid-'));
    const repo = gitRepo(join(dir, 'repo'));
    const labels: Array<string | undefined> = [];
    const fake = new FakeProvider({
      failCreate: (spec) => {
        labels.push(spec.label);
        return false;
      },
    });
    const policy = await startFakePolicy({ scripts: { m: [{ commands: ['echo done'] }] } });
    const app = await startTestApp({ sandboxes: withObserver(fake, {}) });
    try {
      const response = await app.app.inject({
        method: 'POST',
        url: '/solve?wait=true',
        headers: { 'x-request-id': 'solve-req-7' },
        payload: {
          issue: 'x should be 2',
          repo: { path: repo },
          n: 1,
          verify: { enabled: false },
          scoring: { enabled: false },
          agent: { step_limit: 1 },
          policy: { kind: 'openai', url: policy.url, model: 'm' },
        },
      });
      expect(response.statusCode, response.body.slice(0, 300)).toBe(200);
      expect(response.headers['x-request-id']).toBe('solve-req-7');
      expect(policy.headers.length).toBeGreaterThan(0);
      expect(policy.headers.every((headers) => headers['x-request-id'] === 'solve-req-7')).toBe(true);
      expect(labels).toEqual([`${response.json().job_id} request=solve-req-7`]);
    } finally {
      await app.close();
      await policy.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('sends the request id on to the scorer server it calls', async () => {
    const response = await server.app.inject({
      method: 'POST',
      url: '/score',
      headers: { 'x-request-id': 'score-req-1' },
      payload: { task, candidates },
    });
    expect(response.statusCode, response.body).toBe(200);
    const calls = vllm.requests.filter((request) => request.path === '/classify');
    expect(calls.length).toBeGreaterThan(0);
    expect(calls.at(-1)!.headers['x-request-id']).toBe('score-req-1');
  });
});
