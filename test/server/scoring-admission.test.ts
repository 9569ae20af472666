/**
 * `server.limits.max_scoring_requests`: past it a /score or /rerank request is answered 503 with
 * Retry-After at once, before its body is read, and the place is free again once the answer in
 * progress has gone out (issue 31: cap what queues before latency explodes). Over a real socket,
 * against a fake vLLM that answers slowly.
 */
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS } from '../../src/server/limits-config.js';
import { loadValueModel, type ValueModel } from '../../src/scoring/value-model.js';
import { startFakeVllm, type FakeVllm } from '../fakes/fake-vllm.js';
import { listenOnLoopback, startTestApp, type TestApp } from './test-app.js';

const body = JSON.stringify({
  task: { instance_id: 'i', problem_statement: 'x' },
  candidates: [{ id: 'a', messages: [{ role: 'assistant', content: 'done' }] }],
});
const post = (base: string, path: string) =>
  request(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });

describe('the cap on scoring requests in progress', () => {
  let vllm: FakeVllm;
  let valueModel: ValueModel;
  let server: TestApp;
  let base: string;

  beforeAll(async () => {
    vllm = await startFakeVllm();
    valueModel = await loadValueModel({ backend: 'vllm', model: vllm.model, urls: [vllm.url], retries: 0, cacheEntries: 0 });
    await valueModel.scorer.score([{ key: 'warm', text: 'warm' }]);
    server = await startTestApp({ valueModel, limits: { ...DEFAULT_LIMITS, max_scoring_requests: 1 } });
    ({ base } = await listenOnLoopback(server.app));
  });

  afterAll(async () => {
    await server?.close();
    await valueModel?.scorer.close();
    await vllm?.close();
  });

  it('answers 503 with Retry-After past the cap, and takes requests again once the one in progress is answered', async () => {
    let release = () => {};
    vllm.hold = new Promise<void>((resolve) => {
      release = resolve;
    });
    try {
      let firstAnswered = false;
      const first = post(base, '/score').finally(() => {
        firstAnswered = true;
      });
      for (let i = 0; i < 100 && vllm.bodies('/classify').length < 2; i += 1) await new Promise((resolve) => setTimeout(resolve, 20));
      const refused = await post(base, '/rerank');
      const answer = (await refused.body.json()) as { error: { code: string; details: { setting: string } } };
      expect(refused.statusCode).toBe(503);
      expect(refused.headers['retry-after']).toBe('1');
      expect(answer.error).toMatchObject({ code: 'WNW_ERR_LIMIT_BUSY', details: { setting: 'server.limits.max_scoring_requests' } });
      // At once, not after the request in progress: that one is held at the model until released below.
      expect(firstAnswered).toBe(false);
      release();
      const firstResponse = await first;
      expect(firstResponse.statusCode).toBe(200);
      await firstResponse.body.dump();
    } finally {
      release();
      vllm.hold = undefined;
    }
    const again = await post(base, '/score');
    expect(again.statusCode).toBe(200);
    await again.body.dump();
  }, 20_000);
});
