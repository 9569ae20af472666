import { copyFileSync, existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { SCORER_BACKENDS, ScorerConfig } from '../../../src/scoring/registry.js';
import { loadValueModel } from '../../../src/scoring/value-model.js';
import type { Scorer } from '../../../src/scoring/types.js';
import { fakeLogit } from '../../fakes/fake-http-server.js';
import { startFakeOpenAI } from '../../fakes/fake-openai.js';
import { startFakeSGLang } from '../../fakes/fake-sglang.js';
import { startFakeVllm } from '../../fakes/fake-vllm.js';
import type { FakeHttpServer } from '../../fakes/fake-http-server.js';
import { QWEN3_TOKENIZER, QWEN3_TOKENIZER_CONFIG, rejection, textInputs } from './helpers.js';

const TINY_MODEL = fileURLToPath(new URL('../../../models/tiny-value', import.meta.url));

describe('scorer registry', () => {
  const servers: FakeHttpServer[] = [];
  const scorers: Scorer[] = [];
  const keep = <T extends FakeHttpServer>(server: T) => (servers.push(server), server);
  const load = async (config: Parameters<typeof loadValueModel>[0]) => {
    const model = await loadValueModel(config);
    scorers.push(model.scorer);
    return model;
  };
  const create = async (config: Parameters<typeof loadValueModel>[0]) => (await load(config)).scorer;
  afterEach(async () => {
    await Promise.all(scorers.splice(0).map((scorer) => scorer.close()));
    await Promise.all(servers.splice(0).map((server) => server.close()));
  });

  it('names the valid backends when given an unknown one', async () => {
    const error = await rejection(loadValueModel({ backend: 'tgi' as never, model: 'm', urls: ['http://127.0.0.1:1'] }));
    expect(error.code).toBe('WNW_ERR_SCORE_BACKEND');
    expect(error.message).toContain('onnx, sglang, vllm, openai');
    expect(error.details.valid).toEqual(SCORER_BACKENDS);
  });

  it('names the field of an invalid configuration', async () => {
    const noUrls = await rejection(loadValueModel({ backend: 'sglang', model: 'm' }));
    expect(noUrls).toMatchObject({ code: 'WNW_ERR_CFG_INVALID', details: { field: 'scorer.urls' } });
    const badTimeout = await rejection(loadValueModel({ backend: 'vllm', model: 'm', urls: ['http://127.0.0.1:1'], timeoutMs: -1 }));
    expect(badTimeout.details.field).toBe('scorer.timeoutMs');
    const badUrl = await rejection(loadValueModel({ backend: 'vllm', model: 'm', urls: ['ftp://host'] }));
    expect(badUrl.details.field).toBe('scorer.urls.0');
  });

  it('fills in defaults', () => {
    const config = ScorerConfig.parse({ backend: 'vllm', model: 'm', urls: ['http://h:8000'] });
    expect(config).toMatchObject({ timeoutMs: 60_000, retries: 2, cacheEntries: 10_000, batching: { maxBatchSize: 16, windowMs: 5 } });
  });

  it('refuses a scalar openai scorer: that backend is a judge', async () => {
    const error = await rejection(loadValueModel({ backend: 'openai', model: 'm', urls: ['http://127.0.0.1:1'], kind: 'scalar' }));
    expect(error).toMatchObject({ code: 'WNW_ERR_CFG_INVALID', details: { field: 'kind' } });
  });

  it('builds a vLLM scorer wrapped with the batcher and the cache', async () => {
    const server = keep(await startFakeVllm({ model: 'cls' }));
    const scorer = await create({ backend: 'vllm', model: 'cls', urls: [server.url], batching: { maxBatchSize: 8, windowMs: 10 } });
    expect(scorer).toMatchObject({ backend: 'vllm', model: 'cls', maxInputTokens: 32_768 });
    const inputs = textInputs(6);
    const first = await Promise.all(inputs.map((input) => scorer.score([input])));
    const again = await Promise.all(inputs.map((input) => scorer.score([input])));
    // The probe (the served models, then a tiny /classify), then each call alone: the server had room for all six.
    expect(server.requests.map((request) => `${request.method} ${request.path}`)).toEqual([
      'GET /v1/models',
      ...Array.from({ length: 7 }, () => 'POST /classify'),
    ]);
    expect(again).toEqual(first.map(([output]) => [{ ...output, cached: true }]));
    expect(first.map((result) => result[0]!.raw)).toEqual(inputs.map((input) => fakeLogit(input.text)));
  });

  // Issue 31.2: a server batches across requests itself, so a call waits for company only where
  // it would wait in the client's connection pool anyway (docs/value-models.md#batching).
  it('sends concurrent calls to a server at once up to its connections (max_in_flight defaults to 64 per URL)', async () => {
    const count = async (urls: number, calls: number, maxInFlight?: number) => {
      const replicas = Array.from({ length: urls }, () => startFakeVllm({ model: 'cls' }));
      const started = (await Promise.all(replicas)).map(keep);
      const scorer = await create({
        backend: 'vllm',
        model: 'cls',
        urls: started.map((server) => server.url),
        batching: { maxBatchSize: 8, windowMs: 60_000, ...(maxInFlight === undefined ? {} : { maxInFlight }) },
        cacheEntries: 0,
      });
      await Promise.all(textInputs(calls).map((input) => scorer.score([input])));
      // The readiness probe (one input, "probe") is sent before the first call: it is not a batch.
      return started.flatMap((server) => server.bodies('/classify')).filter((body) => body.input[0] !== 'probe').length;
    };
    // Each call alone while a connection is free; past 64 per URL the rest wait and leave together.
    expect(await count(1, 3)).toBe(3);
    expect(await count(1, 66)).toBe(65);
    expect(await count(2, 130)).toBe(129);
    // A lower max_in_flight trades latency for fewer requests: one batch at the server, the others merged behind it.
    expect(await count(1, 3, 1)).toBe(2);
  });

  it('builds an unwrapped scorer when batching and caching are off', async () => {
    const server = keep(await startFakeVllm({ model: 'cls' }));
    const scorer = await create({ backend: 'vllm', model: 'cls', urls: [server.url], batching: false, cacheEntries: 0 });
    const [input] = textInputs(1);
    await Promise.all([scorer.score([input!]), scorer.score([input!])]);
    expect(server.bodies('/classify').filter((body) => body.input[0] === input!.text)).toHaveLength(2);
  });

  it('builds an SGLang judge whose YES/NO ids come from the tokenizer', async () => {
    const server = keep(await startFakeSGLang());
    const scorer = await create({
      backend: 'sglang',
      kind: 'judge',
      model: 'Qwen/Qwen3-4B',
      urls: [server.url],
      tokenizer: QWEN3_TOKENIZER,
    });
    expect(scorer.tokenizer).toBeDefined();
    await scorer.score(textInputs(1));
    const [body] = server.bodies('/v1/score');
    expect(body.label_token_ids).toEqual([14004, 8996]);
    expect(body.items).toEqual([[]]);
  });

  it('builds a multi-label vLLM scorer from a label table, its success index and activation', async () => {
    const server = keep(await startFakeVllm({ model: 'critic', numLabels: 27 }));
    const model = await load({
      backend: 'vllm',
      model: 'critic',
      urls: [server.url],
      labels: 'openhands-critic',
      template: 'openhands-critic-v1',
      chatTemplate: QWEN3_TOKENIZER_CONFIG,
    });
    const [input] = textInputs(1);
    const [output] = await model.scorer.score([input!]);
    expect(output!.raw).toBe(server.logits(input!.text)[0]);
    expect(output!.value).toBeCloseTo(1 / (1 + Math.exp(-output!.raw)), 12);
    expect(model.template).toBe('openhands-critic-v1');
    expect(model.chatTemplate).toContain('<|im_start|>');
  });

  it('takes the head the template implies when no labels are given: openhands-critic-v1 → the critic table, success at 0 (issue 24 item 7)', async () => {
    const server = keep(await startFakeVllm({ model: 'critic', numLabels: 27 }));
    const scorer = await create({
      backend: 'vllm',
      model: 'critic',
      urls: [server.url],
      template: 'openhands-critic-v1',
      chatTemplate: QWEN3_TOKENIZER_CONFIG,
    });
    const [input] = textInputs(1);
    const [output] = await scorer.score([input!]);
    expect(output!.raw).toBe(server.logits(input!.text)[0]);
    // Labels given win over the template's.
    const one = keep(await startFakeVllm({ model: 'custom', numLabels: 1 }));
    const custom = await create({
      backend: 'vllm',
      model: 'custom',
      urls: [one.url],
      template: 'openhands-critic-v1',
      labels: ['success'],
      chatTemplate: QWEN3_TOKENIZER_CONFIG,
    });
    expect((await custom.score([input!]))[0]!.raw).toBe(one.logits(input!.text)[0]);
  });

  it("picks the activation from problem_type in the tokenizer folder's config.json", async () => {
    const folder = mkdtempSync(join(tmpdir(), 'wnw-head-'));
    writeFileSync(join(folder, 'config.json'), JSON.stringify({ problem_type: 'single_label_classification' }));
    copyFileSync(QWEN3_TOKENIZER, join(folder, 'tokenizer.json'));
    const server = keep(await startFakeVllm({ model: 'cls3', numLabels: 3 }));
    const scorer = await create({
      backend: 'vllm',
      model: 'cls3',
      urls: [server.url],
      tokenizer: folder,
      labels: ['no', 'yes', 'maybe'],
      labelIndex: 1,
    });
    const [input] = textInputs(1);
    const [output] = await scorer.score([input!]);
    const ids = (await scorer.tokenizer!.encode([input!.text]))[0]!;
    const logits = server.logits(ids);
    expect(output!.value).toBeCloseTo(Math.exp(logits[1]!) / logits.reduce((sum, value) => sum + Math.exp(value), 0), 12);
  });

  it('refuses a head of several labels with no way to know its activation, and an unknown table', async () => {
    const none = await rejection(loadValueModel({ backend: 'vllm', model: 'm', urls: ['http://127.0.0.1:1'], labels: ['a', 'b', 'c'] }));
    expect(none).toMatchObject({ code: 'WNW_ERR_CFG_INVALID', details: { field: 'scorer.activation' } });
    const unknown = await rejection(
      loadValueModel({ backend: 'vllm', model: 'm', urls: ['http://127.0.0.1:1'], labels: 'openhands-critique' }),
    );
    expect(unknown).toMatchObject({ code: 'WNW_ERR_CFG_INVALID', details: { field: 'scorer.labels' } });
    const index = await rejection(
      loadValueModel({ backend: 'vllm', model: 'm', urls: ['http://127.0.0.1:1'], labels: 'openhands-critic', labelIndex: 27 }),
    );
    expect(index.details.field).toBe('scorer.labelIndex');
  });

  it('reports a missing chat template file and an unknown template at start-up', async () => {
    const missing = await rejection(
      loadValueModel({ backend: 'vllm', model: 'm', urls: ['http://127.0.0.1:1'], chatTemplate: '/nonexistent/tokenizer_config.json' }),
    );
    expect(missing).toMatchObject({ code: 'WNW_ERR_SCORE_TEMPLATE', details: { field: 'scorer.chatTemplate' } });
    const template = await rejection(
      loadValueModel({ backend: 'vllm', model: 'm', urls: ['http://127.0.0.1:1'], template: 'openhands-critic-v9' }),
    );
    expect(template.code).toBe('WNW_ERR_SCORE_TEMPLATE');
  });

  it('reports a missing tokenizer file', async () => {
    const error = await rejection(
      loadValueModel({ backend: 'sglang', model: 'm', urls: ['http://127.0.0.1:1'], tokenizer: '/nonexistent/tokenizer.json' }),
    );
    expect(error.code).toBe('WNW_ERR_SCORE_TOKENIZER');
  });

  it('builds an OpenAI-compatible judge with the API key', async () => {
    const server = keep(await startFakeOpenAI({ apiKey: 'secret' }));
    const scorer = await create({ backend: 'openai', model: 'judge', urls: [server.url], apiKey: 'secret' });
    expect(scorer.backend).toBe('openai');
    const [output] = await scorer.score(textInputs(1));
    expect(output!.value).toBeGreaterThan(0);
  });

  it.skipIf(!existsSync(TINY_MODEL))('loads the onnx backend lazily from the model folder', async () => {
    const scorer = await create({ backend: 'onnx', model: TINY_MODEL, workers: 1, intraOpThreads: 1 });
    expect(scorer.backend).toBe('onnx');
    const outputs = await scorer.score(textInputs(2));
    expect(outputs).toHaveLength(2);
  });
});
