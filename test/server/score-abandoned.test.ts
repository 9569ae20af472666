/**
 * A `/score` request whose client goes away while its call waits in the scorer's queue (the backend
 * busy with another request's batch) never reaches the backend. Over a real socket: `inject()`
 * has no client that can leave.
 */
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadValueModel, type ValueModel } from '../../src/scoring/value-model.js';
import { startFakeVllm, type FakeVllm } from '../fakes/fake-vllm.js';
import { listenOnLoopback, startTestApp, type TestApp } from './test-app.js';

const body = (marker: string) =>
  JSON.stringify({
    task: { instance_id: 'i', problem_statement: 'x' },
    candidates: [{ id: 'a', messages: [{ role: 'assistant', content: `done ${marker}` }] }],
  });

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('an abandoned /score request', () => {
  let vllm: FakeVllm;
  let valueModel: ValueModel;
  let server: TestApp;
  let base: string;

  beforeAll(async () => {
    vllm = await startFakeVllm();
    valueModel = await loadValueModel({
      backend: 'vllm',
      model: vllm.model,
      urls: [vllm.url],
      retries: 0,
      cacheEntries: 0,
      // One batch at the backend at a time, and a window far longer than the test: a queued call stays queued.
      batching: { maxBatchSize: 16, maxBatchTokens: 262_144, windowMs: 30_000, maxInFlight: 1 },
    });
    await valueModel.scorer.score([{ key: 'warm', text: 'warm' }]);
    server = await startTestApp({ valueModel });
    ({ base } = await listenOnLoopback(server.app));
  });

  afterAll(async () => {
    await server?.close();
    await valueModel?.scorer.close();
    await vllm?.close();
  });

  it('leaves the scorer queue when its client goes, and the backend never sees it', async () => {
    const before = vllm.bodies('/classify').length;
    vllm.delayMs = 1_500;
    try {
      const first = request(`${base}/score`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: body('first') });
      for (let i = 0; i < 100 && vllm.bodies('/classify').length === before; i += 1) await sleep(20);
      expect(vllm.bodies('/classify')).toHaveLength(before + 1);
      const client = new AbortController();
      const second = request(`${base}/score`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: body('second'),
        signal: client.signal,
      }).catch((error: unknown) => error);
      await sleep(300); // the second call is in the queue, behind the busy backend
      client.abort();
      await second;
      const answer = await first;
      expect(answer.statusCode).toBe(200);
      await sleep(200);
      const sent = vllm
        .bodies('/classify')
        .slice(before)
        .map((sentBody) => JSON.stringify(sentBody.input));
      expect(sent).toHaveLength(1);
      expect(sent[0]).toContain('first');
    } finally {
      vllm.delayMs = 0;
    }
  }, 20_000);
});
