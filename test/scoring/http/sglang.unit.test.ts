import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadTokenizer } from '../../../src/serialize/tokenizer.js';
import { resolveHead } from '../../../src/scoring/http/head.js';
import { createSGLangScorer, type SGLangSettings } from '../../../src/scoring/http/sglang.js';
import type { Scorer } from '../../../src/scoring/types.js';
import { fakeLogit } from '../../fakes/fake-http-server.js';
import { type FakeSGLang, startFakeSGLang } from '../../fakes/fake-sglang.js';
import { idInputs, QWEN3_TOKENIZER, rejection, sigmoid, textInputs } from './helpers.js';
import { runScorerContract } from './scorer-contract.js';

const MODEL = 'Qwen/Qwen3-4B';
const LABELS = { yes: 14004, no: 8996 };

runScorerContract({
  name: 'sglang scalar (/classify)',
  async create() {
    const server = await startFakeSGLang();
    return { scorer: createSGLangScorer({ model: MODEL, urls: [server.url] }), dispose: () => server.close() };
  },
});

runScorerContract({
  name: 'sglang judge (/v1/score)',
  async create() {
    const server = await startFakeSGLang();
    return {
      scorer: createSGLangScorer({ model: MODEL, urls: [server.url], kind: 'judge', labelTokenIds: LABELS }),
      dispose: () => server.close(),
    };
  },
});

describe('SGLang scorer against a fake SGLang', () => {
  let server: FakeSGLang;
  let scorer: Scorer | undefined;
  const make = (settings: Partial<SGLangSettings> = {}) => {
    scorer = createSGLangScorer({
      model: MODEL,
      urls: [server.url],
      timeoutMs: 2_000,
      retries: 2,
      backoff: { initialMs: 1, maxMs: 5 },
      ...settings,
    });
    return scorer;
  };

  beforeEach(async () => {
    server = await startFakeSGLang();
  });
  afterEach(async () => {
    await scorer?.close();
    scorer = undefined;
    await server.close();
  });

  describe('scalar head (/classify)', () => {
    it('sends a batch of token ids in one request and applies the sigmoid to the raw logit', async () => {
      const inputs = idInputs(3);
      const outputs = await make().score(inputs);
      expect(server.bodies('/classify')).toEqual([{ input_ids: inputs.map((input) => input.inputIds) }]);
      inputs.forEach((input, index) => {
        expect(outputs[index]!.raw).toBe(fakeLogit(input.inputIds!));
        expect(outputs[index]!.value).toBeCloseTo(sigmoid(fakeLogit(input.inputIds!)), 12);
      });
    });

    it('sends texts when the inputs have no ids', async () => {
      const inputs = textInputs(2);
      const outputs = await make().score(inputs);
      expect(server.bodies('/classify')).toEqual([{ text: inputs.map((input) => input.text) }]);
      expect(outputs.map((output) => output.raw)).toEqual(inputs.map((input) => fakeLogit(input.text)));
    });

    it('warns once when every score is exactly ±1 (the L2-normalisation pitfall)', async () => {
      server.l2Normalised = true;
      const warnings: string[] = [];
      const sglang = make({ onWarning: (message) => warnings.push(message) });
      const outputs = await sglang.score(textInputs(3));
      await sglang.score(textInputs(2, 'again'));
      expect(outputs.every((output) => Math.abs(output.raw) === 1)).toBe(true);
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toContain('id2label');
    });

    it('does not warn on ordinary scores', async () => {
      const warnings: string[] = [];
      await make({ onWarning: (message) => warnings.push(message) }).score(textInputs(3));
      expect(warnings).toEqual([]);
    });

    it('tokenizes on the client when given a tokenizer, so the server receives ids', async () => {
      const tokenizer = await loadTokenizer(QWEN3_TOKENIZER);
      const inputs = textInputs(2);
      const outputs = await make({ tokenizer }).score(inputs);
      const ids = await tokenizer.encode(inputs.map((input) => input.text));
      expect(server.bodies('/classify')).toEqual([{ input_ids: ids }]);
      expect(outputs.map((output) => output.raw)).toEqual(ids.map((one) => fakeLogit(one)));
    });

    it('retries a 503 then succeeds; does not retry a 400', async () => {
      server.fail(503);
      await make().score(textInputs(1));
      expect(server.requests).toHaveLength(2);
      server.fail(400, 1, { body: JSON.stringify({ object: 'error', message: 'bad', type: 'BadRequestError', param: null, code: 400 }) });
      const error = await rejection(scorer!.score(textInputs(1)));
      expect(error).toMatchObject({ code: 'WNW_ERR_SCORE_UPSTREAM', retryable: false, details: { status: 400 } });
      expect(server.requests).toHaveLength(3);
    });

    it('times out on a hung server', async () => {
      server.hang(5);
      const error = await rejection(make({ timeoutMs: 150 }).score(textInputs(1)));
      expect(error.code).toBe('WNW_ERR_SCORE_TIMEOUT');
    });

    it('names what is wrong in a malformed response', async () => {
      server.malformed(1, JSON.stringify([{ embedding: 'oops', meta_info: {} }]));
      const error = await rejection(make().score(textInputs(1)));
      expect(error.code).toBe('WNW_ERR_SCORE_RESPONSE');
      expect(error.message).toContain('[0].embedding');
    });
  });

  describe('multi-label head (/classify)', () => {
    it('reads every raw output of the head and applies the activation to the success label', async () => {
      server.numLabels = 27;
      const inputs = idInputs(2);
      const outputs = await make({ head: resolveHead({ labels: 'openhands-critic' }) }).score(inputs);
      inputs.forEach((input, index) => {
        const logits = server.logits(input.inputIds!);
        expect(outputs[index]!.raw).toBe(logits[0]);
        expect(outputs[index]!.value).toBeCloseTo(sigmoid(logits[0]!), 12);
      });
    });
  });

  describe("multi-item /v1/score: an instance's candidates in one request", () => {
    const candidates = (count: number, first = 700) => {
      const prefix = Array.from({ length: 64 }, (_, position) => first + position);
      return Array.from({ length: count }, (_, index) => ({
        key: `c-${first}-${index}`,
        text: `c ${index}`,
        inputIds: [...prefix, 8000 + index, 8100 + index],
      }));
    };

    it('packs the candidates behind their shared prefix when the server has a multi-item delimiter', async () => {
      server.multiItemDelimiter = 151_655;
      const inputs = candidates(8);
      const outputs = await make({ kind: 'judge', labelTokenIds: LABELS }).score(inputs);
      const bodies = server.bodies('/v1/score');
      expect(bodies).toHaveLength(1);
      expect(bodies[0].query).toEqual(inputs[0]!.inputIds!.slice(0, 64));
      expect(bodies[0].items).toEqual(inputs.map((input) => input.inputIds!.slice(64)));
      inputs.forEach((input, index) => expect(outputs[index]!.raw).toBeCloseTo(fakeLogit(input.inputIds!), 9));
      // The shared 64 tokens are computed once, not eight times.
      expect(server.prefill.stats.prefillTokens).toBe(64 + 8 * (2 + 1));
    });

    it('scores a multi-label head (the critic on SGLang) with /v1/score without label ids, the candidates in one request', async () => {
      server.multiItemDelimiter = 151_655;
      server.classifier = true;
      server.numLabels = 27;
      const inputs = candidates(8);
      const outputs = await make({ head: resolveHead({ labels: 'openhands-critic' }), endpoint: 'score' }).score(inputs);
      const bodies = server.bodies('/v1/score');
      expect(bodies).toHaveLength(1);
      expect(bodies[0]).toEqual({
        model: MODEL,
        query: inputs[0]!.inputIds!.slice(0, 64),
        items: inputs.map((input) => input.inputIds!.slice(64)),
        apply_softmax: false,
      });
      inputs.forEach((input, index) => {
        const logits = server.logits(input.inputIds!);
        expect(outputs[index]!.raw).toBe(logits[0]);
        expect(outputs[index]!.value).toBeCloseTo(sigmoid(logits[0]!), 12);
      });
      expect(server.prefill.stats.prefillTokens).toBe(64 + 8 * (2 + 1));
    });

    it('sends one request per candidate when the server has no delimiter', async () => {
      const inputs = candidates(3);
      await make({ kind: 'judge', labelTokenIds: LABELS }).score(inputs);
      expect(server.bodies('/v1/score').map((body) => body.items)).toEqual([[[]], [[]], [[]]]);
      expect(server.prefill.stats.prefillTokens).toBe(3 * 66);
    });

    it('keeps candidates of different instances in different requests', async () => {
      server.multiItemDelimiter = 151_655;
      const other = candidates(2, 3000);
      const inputs = [...candidates(2), ...other];
      const outputs = await make({ kind: 'judge', labelTokenIds: LABELS }).score(inputs);
      expect(server.bodies('/v1/score').map((body) => body.items.length)).toEqual([2, 2]);
      inputs.forEach((input, index) => expect(outputs[index]!.raw).toBeCloseTo(fakeLogit(input.inputIds!), 9));
    });

    it('the fake refuses the pre-merge text_1 / text_2 names', async () => {
      const response = await fetch(`${server.url}/v1/score`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ text_1: 'q', text_2: ['a'], label_token_ids: [1, 2] }),
      });
      expect(response.status).toBe(400);
      expect(await response.text()).toContain('use query and items');
    });
  });

  describe('judge (/v1/score, then /generate)', () => {
    it('asks /v1/score for P(YES), P(NO) per input, with ids', async () => {
      const inputs = idInputs(2);
      const outputs = await make({ kind: 'judge', labelTokenIds: LABELS }).score(inputs);
      expect(server.bodies('/v1/score')).toEqual(
        inputs.map((input) => ({ model: MODEL, query: input.inputIds, items: [[]], label_token_ids: [14004, 8996], apply_softmax: true })),
      );
      inputs.forEach((input, index) => {
        expect(outputs[index]!.raw).toBeCloseTo(fakeLogit(input.inputIds!), 9);
        expect(outputs[index]!.value).toBeCloseTo(sigmoid(fakeLogit(input.inputIds!)), 9);
      });
    });

    it('sends the text as the query and an empty item when there are no ids', async () => {
      const [input] = textInputs(1);
      const [output] = await make({ kind: 'judge', labelTokenIds: LABELS }).score([input!]);
      expect(server.bodies('/v1/score')).toEqual([
        { model: MODEL, query: input!.text, items: [''], label_token_ids: [14004, 8996], apply_softmax: true },
      ]);
      expect(output!.raw).toBeCloseTo(fakeLogit(input!.text), 9);
    });

    it('falls back to /generate when /v1/score is 404, and stays there', async () => {
      server.scoreNotFound = true;
      const judge = make({ kind: 'judge', labelTokenIds: LABELS });
      const inputs = idInputs(3);
      const outputs = await judge.score(inputs);
      await judge.score(idInputs(2, 8, 10));
      expect(server.requests.map((request) => request.path)).toEqual(['/get_server_info', '/v1/score', '/generate', '/generate']);
      const [body] = server.bodies('/generate');
      expect(body).toEqual({
        input_ids: inputs.map((input) => input.inputIds),
        sampling_params: { max_new_tokens: 1, temperature: 0 },
        return_logprob: true,
        logprob_start_len: -1,
        token_ids_logprob: [14004, 8996],
      });
      inputs.forEach((input, index) => expect(outputs[index]!.raw).toBeCloseTo(fakeLogit(input.inputIds!), 9));
    });

    it('resolves YES/NO ids with the tokenizer', async () => {
      const tokenizer = await loadTokenizer(QWEN3_TOKENIZER);
      await make({ kind: 'judge', tokenizer }).score(textInputs(1));
      expect(server.bodies('/v1/score')[0].label_token_ids).toEqual([14004, 8996]);
      expect(Array.isArray(server.bodies('/v1/score')[0].query)).toBe(true);
    });

    it('fails at start-up when a label is not a single token', async () => {
      const tokenizer = await loadTokenizer(QWEN3_TOKENIZER);
      expect(() => make({ kind: 'judge', tokenizer, labels: { yes: 'DEFINITELY YES', no: 'NO' } })).toThrow(/not single tokens/);
      scorer = undefined;
    });

    it('fails at start-up without a tokenizer or label ids', () => {
      expect(() => make({ kind: 'judge' })).toThrow(expect.objectContaining({ code: 'WNW_ERR_CFG_INVALID' }));
      scorer = undefined;
    });

    it('does not fall back on other errors', async () => {
      server.fail(400);
      const error = await rejection(make({ kind: 'judge', labelTokenIds: LABELS, multiItem: false }).score(textInputs(1)));
      expect(error.details.status).toBe(400);
      expect(server.requests.map((request) => request.path)).toEqual(['/v1/score']);
    });
  });
});
