/**
 * Readiness includes one cheap scorer probe (docs/design/05-defects-found.md#D10: /readyz said ready while
 * the vLLM scorer hung or answered garbage, and every /score then waited out the scorer's 60 s deadline).
 * The scorer here keeps a 60 s deadline of its own: /score answering at all within the test's
 * time means it failed fast on the probe's verdict.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadValueModel, type ValueModel } from '../../src/scoring/value-model.js';
import { startFakeVllm, type FakeVllm } from '../fakes/fake-vllm.js';
import { startTestApp, type TestApp } from './test-app.js';

const scoreBody = {
  task: { instance_id: 'i', problem_statement: 'x' },
  candidates: [{ id: 'a', messages: [{ role: 'assistant', content: 'done' }] }],
};

describe('readiness with a scorer probe', () => {
  let vllm: FakeVllm;
  let valueModel: ValueModel;
  let server: TestApp;

  beforeAll(async () => {
    vllm = await startFakeVllm();
    valueModel = await loadValueModel({
      backend: 'vllm',
      model: vllm.model,
      urls: [vllm.url],
      retries: 0,
      timeoutMs: 60_000,
      cacheEntries: 0,
      batching: false,
    });
    // Warm: the first call also reads the server's /v1/models.
    await valueModel.scorer.score([{ key: 'warm', text: 'warm' }]);
    // Every check probes afresh (ttl 0), so each step below sees the fake's current behaviour.
    server = await startTestApp({ valueModel, scorerProbe: { ttlMs: 0, timeoutMs: 2_000 } });
  });

  afterAll(async () => {
    await server?.close();
    await valueModel?.scorer.close();
    await vllm?.close();
  });

  it('is ready while the scorer answers', async () => {
    const ready = await server.app.inject('/readyz');
    expect(ready.statusCode).toBe(200);
    expect(ready.json()).toMatchObject({ status: 'ready', scorer: { backend: 'vllm', ok: true, error: null } });
  });

  it('is not ready while the scorer hangs, and /score then fails at once with 503', async () => {
    vllm.hang(1000);
    try {
      const ready = await server.app.inject('/readyz');
      expect(ready.statusCode).toBe(503);
      expect(ready.json()).toMatchObject({ status: 'scorer-unavailable', scorer: { ok: false, error: { code: 'WNW_ERR_SCORE_TIMEOUT' } } });
      const score = await server.app.inject({ method: 'POST', url: '/score', payload: scoreBody });
      expect(score.statusCode).toBe(503);
      expect(score.json().error.code).toBe('WNW_ERR_SCORE_UNAVAILABLE');
    } finally {
      vllm.faults.length = 0;
    }
  });

  // Issue 27 item 14: /rerank waited out the scorer's own 60 s deadline although /readyz knew.
  it("degrades /rerank at once while the scorer hangs: each candidate carries the probe's error", async () => {
    vllm.hang(1000);
    try {
      expect((await server.app.inject('/readyz')).statusCode).toBe(503);
      const started = performance.now();
      const patch = (line: string) => `diff --git a/a.py b/a.py\n--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-x = 1\n+x = ${line}\n`;
      const candidates = ['2', '3'].map((line) => ({
        id: `c${line}`,
        patch: patch(line),
        messages: [{ role: 'assistant', content: 'done' }],
      }));
      const rerank = await server.app.inject({
        method: 'POST',
        url: '/rerank',
        payload: { task: scoreBody.task, candidates, strategy: 'value' },
      });
      // The probe itself is bounded by its 2 s deadline; the scorer's own deadline is 60 s.
      expect(performance.now() - started).toBeLessThan(20_000);
      expect(rerank.statusCode).toBe(200);
      const body = rerank.json();
      expect(body.scores[0].error.code).toBe('WNW_ERR_SCORE_UNAVAILABLE');
      expect(body.selection.degraded_to).not.toBeNull();
    } finally {
      vllm.faults.length = 0;
    }
  });

  it('is not ready while the scorer answers garbage', async () => {
    vllm.malformed(1000, '{"data": [{"index": 0, "probs": "not numbers"}]}');
    try {
      const ready = await server.app.inject('/readyz');
      expect(ready.statusCode).toBe(503);
      expect(ready.json()).toMatchObject({
        status: 'scorer-unavailable',
        scorer: { ok: false, error: { code: 'WNW_ERR_SCORE_RESPONSE' } },
      });
    } finally {
      vllm.faults.length = 0;
    }
  });

  it('is ready again, and scores, once the scorer answers again', async () => {
    expect((await server.app.inject('/readyz')).statusCode).toBe(200);
    const score = await server.app.inject({ method: 'POST', url: '/score', payload: scoreBody });
    expect(score.statusCode).toBe(200);
    expect(typeof score.json().scores[0].value).toBe('number');
  });
});
