/** The bench's stubs speak their protocols to winnower's own clients: the vLLM scorer and the OpenAI policy. */
import { describe, expect, it } from 'vitest';
import { startPolicyStub } from '../../src/loadgen/policy-stub.js';
import { startRecordingProxy } from '../../src/loadgen/recording-proxy.js';
import { startScorerStub } from '../../src/loadgen/scorer-stub.js';
import { createOpenAIPolicy } from '../../src/rollout/policy/openai-policy.js';
import { createScorer } from '../../src/scoring/registry.js';
import { startFakeVllm } from '../fakes/fake-vllm.js';

describe('bench stubs', () => {
  it('the scorer stub scores through the vllm client after its latency, and keeps the body it received', async () => {
    const stub = await startScorerStub({ latencyMs: 20 });
    const scorer = await createScorer({
      backend: 'vllm',
      model: stub.model,
      urls: [stub.url],
      cacheEntries: 0,
      batching: false,
      retries: 0,
    });
    try {
      const started = performance.now();
      const outputs = await scorer.score([
        { key: 'a', text: 'first' },
        { key: 'b', text: 'second' },
      ]);
      expect(performance.now() - started).toBeGreaterThanOrEqual(20);
      expect(outputs).toHaveLength(2);
      for (const output of outputs) expect(output.value).toBeGreaterThan(0);
      expect(JSON.parse(stub.lastClassifyBody()!).input).toEqual(['first', 'second']);
    } finally {
      await scorer.close();
      await stub.close();
    }
  });

  it('the policy stub answers the OpenAI policy client with the scripted command of its seed and turn', async () => {
    const stub = await startPolicyStub({ latencyMs: 0, script: (seed) => [`echo seed ${seed}`, 'echo done'] });
    const policy = createOpenAIPolicy({ url: stub.url, model: 'bench-stub', mode: 'tools' });
    try {
      const turn = await policy.next({ messages: [{ role: 'user', content: 'fix it' }], seed: 3 });
      expect(JSON.parse(turn.message.tool_calls![0]!.function.arguments)).toEqual({ command: 'echo seed 3' });
      expect(stub.calls()).toBe(1);
    } finally {
      await policy.close?.();
      await stub.close();
    }
  });

  it('the recording pass-through forwards the vllm client to the backend and keeps each POST as sent, with the headers a replay needs', async () => {
    const vllm = await startFakeVllm();
    const proxy = await startRecordingProxy(vllm.url);
    const scorer = await createScorer({
      backend: 'vllm',
      model: vllm.model,
      urls: [proxy.url],
      apiKey: 'backend-key',
      cacheEntries: 0,
      batching: false,
      retries: 0,
    });
    try {
      await scorer.score([{ key: 'warm', text: 'the feature probe goes first' }]);
      proxy.clear();
      const outputs = await scorer.score([
        { key: 'a', text: 'first' },
        { key: 'b', text: 'second' },
      ]);
      expect(outputs).toHaveLength(2);
      const [call, ...others] = proxy.posts();
      expect(others).toEqual([]);
      expect(call).toMatchObject({
        method: 'POST',
        path: '/classify',
        headers: { 'content-type': 'application/json', authorization: 'Bearer backend-key' },
      });
      // The backend got the very body that was recorded, and the answer came back through.
      expect(JSON.parse(call!.body)).toEqual(vllm.bodies('/classify').at(-1));
      expect(JSON.parse(call!.body).input).toEqual(['first', 'second']);
      expect(vllm.requests.at(-1)!.headers.authorization).toBe('Bearer backend-key');
      vllm.fail(503);
      const failed = await fetch(`${proxy.url}/classify`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      expect(failed.status).toBe(503);
    } finally {
      await scorer.close();
      await proxy.close();
      await vllm.close();
    }
  });
});
