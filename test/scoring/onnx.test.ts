import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTinyModel } from '../../models/tiny-model.js';
import { WinnowerError } from '../../src/errors.js';
import { createOnnxScorer, type OnnxScorer } from '../../src/scoring/onnx/onnx.js';
import type { ScoreInput } from '../../src/scoring/types.js';
import { loadTokenizer } from '../../src/serialize/tokenizer.js';
import { resolveHead } from '../../src/scoring/http/head.js';
import { readTinyWeights, referenceLogits, referenceRaw } from './onnx-reference.js';

const BUNDLED = fileURLToPath(new URL('../../models/tiny-value/', import.meta.url));

const TEXTS = [
  'OK',
  'All 12 tests passed. Submitted.',
  'Traceback (most recent call last):\n  File "a.py", line 3, in <module>\nTypeError: error FAILED',
  `diff --git a/src/app.py b/src/app.py\n--- a/src/app.py\n+++ b/src/app.py\n@@ -1,3 +1,4 @@\n def main():\n-    return 1\n+    return 2\n`,
  'I will reproduce the issue first, then fix the parser so that it handles empty strings. '.repeat(20),
  'Ünïcödé 🎉 and\ttabs\r\n'.repeat(5),
];

const inputs = (texts: string[]): ScoreInput[] => texts.map((text, i) => ({ key: `k${i}`, text }));
const sigmoid = (x: number) => 1 / (1 + Math.exp(-x));
/** float32 inference against a float64 reference: 1e-5, relative for large logits. */
const near = (actual: number, expected: number) => Math.abs(actual - expected) <= 1e-5 * Math.max(1, Math.abs(expected));

async function expectCode(promise: Promise<unknown>, code: string): Promise<WinnowerError> {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(WinnowerError.isInstance(error)).toBe(true);
  expect((error as WinnowerError).code).toBe(code);
  return error as WinnowerError;
}

let temp: string;
beforeAll(() => {
  temp = mkdtempSync(join(tmpdir(), 'winnower-onnx-'));
});
afterAll(() => rmSync(temp, { recursive: true, force: true }));

describe('bundled tiny model', () => {
  let scorer: OnnxScorer;
  beforeAll(async () => {
    scorer = await createOnnxScorer({ modelDir: BUNDLED, workers: 2, intraOpThreads: 1 });
  });
  afterAll(() => scorer.close());

  it('loads as a scalar head with names read from the session', () => {
    expect(scorer.backend).toBe('onnx');
    expect(scorer.model).toBe('tiny-value');
    expect(scorer.kind).toBe('scalar');
    expect(scorer.session.inputNames).toEqual(['input_ids', 'attention_mask']);
    expect(scorer.session.outputName).toBe('logits');
    expect(scorer.maxInputTokens).toBe(4096);
    expect(scorer.labelIds).toBeUndefined();
  });

  it('scores deterministically, value = sigmoid(raw) in (0, 1)', async () => {
    const first = await scorer.score(inputs(TEXTS));
    const second = await scorer.score(inputs(TEXTS));
    expect(second).toEqual(first);
    for (const { value, raw } of first) {
      expect(value).toBeGreaterThan(0);
      expect(value).toBeLessThan(1);
      expect(value).toBeCloseTo(sigmoid(raw), 12);
    }
    // Same configuration, fresh workers; other thread counts may differ in the last float bits.
    const other = await createOnnxScorer({ modelDir: BUNDLED, workers: 2, intraOpThreads: 1 });
    try {
      expect(await other.score(inputs(TEXTS))).toEqual(first);
    } finally {
      await other.close();
    }
  });

  it('gives the same values batched and one by one, and matches the JS reference (padding)', async () => {
    const batched = await scorer.score(inputs(TEXTS));
    const single = await Promise.all(TEXTS.map(async (text) => (await scorer.score(inputs([text])))[0]!));
    const weights = readTinyWeights(join(BUNDLED, 'model.onnx'));
    const ids = await scorer.tokenizer.encode(TEXTS);
    batched.forEach((output, i) => {
      expect(Math.abs(output.raw - single[i]!.raw)).toBeLessThan(1e-6);
      const expected = referenceRaw(weights, ids[i]!, { kind: 'scalar' });
      expect(near(output.raw, expected), `${output.raw} vs ${expected}`).toBe(true);
      expect(Math.abs(output.value - sigmoid(expected))).toBeLessThan(1e-5);
    });
  });

  it('takes pre-tokenized input ids as they are', async () => {
    const ids = await scorer.tokenizer.encode(TEXTS);
    const fromIds = await scorer.score(TEXTS.map((text, i) => ({ key: `k${i}`, text, inputIds: ids[i]! })));
    expect(fromIds).toEqual(await scorer.score(inputs(TEXTS)));
  });

  it('carries the heuristic signal words documented in its README', async () => {
    const [good, bad] = await scorer.score(inputs(['the tests passed and it works', 'Traceback: error, tests FAILED']));
    expect(good!.value).toBeGreaterThan(0.5);
    expect(bad!.value).toBeLessThan(0.5);
  });

  it('rejects empty and over-long inputs by key, and returns [] for no inputs', async () => {
    expect(await scorer.score([])).toEqual([]);
    const empty = await expectCode(scorer.score([{ key: 'e', text: '' }]), 'WNW_ERR_INPUT_INVALID');
    expect(empty.details).toMatchObject({ key: 'e' });
    const long = await expectCode(scorer.score([{ key: 'long', text: 'x', inputIds: new Array(4097).fill(5) }]), 'WNW_ERR_INPUT_INVALID');
    expect(long.details).toMatchObject({ key: 'long', tokens: 4097, max: 4096 });
  });

  it('stops waiting when the signal aborts', async () => {
    const controller = new AbortController();
    controller.abort();
    await expectCode(scorer.score(inputs(TEXTS), { signal: controller.signal }), 'WNW_ERR_OP_ABORTED');
  });

  it('matches what npm run models builds (committed files are current)', () => {
    const out = join(temp, 'rebuilt');
    buildTinyModel({ kind: 'scalar', outDir: out });
    for (const file of ['model.onnx', 'tokenizer.json', 'config.json', 'README.md']) {
      expect(readFileSync(join(out, file)).equals(readFileSync(join(BUNDLED, file))), file).toBe(true);
    }
  });
});

describe('variants', () => {
  it('multi-label head (27 outputs, as the OpenHands critic): the success logit, by sigmoid or by softmax over the labels', async () => {
    const dir = join(temp, 'multi-label');
    buildTinyModel({ kind: 'multi-label', outDir: dir, numLabels: 27 });
    const weights = readTinyWeights(join(dir, 'model.onnx'));
    const refused = await createOnnxScorer({ modelDir: dir }).catch((error: unknown) => error as WinnowerError);
    expect(refused).toMatchObject({ code: 'WNW_ERR_SCORE_MODEL', details: { field: 'scorer.labels' } });
    const wrongCount = await createOnnxScorer({
      modelDir: dir,
      head: resolveHead({ labels: ['a', 'b', 'c'], activation: 'sigmoid' }),
    }).catch((error: unknown) => error as WinnowerError);
    expect(wrongCount).toMatchObject({ code: 'WNW_ERR_SCORE_MODEL', details: { labels: 3 } });
    const critic = await createOnnxScorer({ modelDir: dir, head: resolveHead({ labels: 'openhands-critic' }) });
    const softmax = await createOnnxScorer({
      modelDir: dir,
      head: resolveHead({ labels: 'openhands-critic', labelIndex: 3, activation: 'softmax' }),
    });
    try {
      expect(critic.kind).toBe('multi-label');
      const ids = await critic.tokenizer.encode(TEXTS);
      const [byCritic, bySoftmax] = await Promise.all([critic.score(inputs(TEXTS)), softmax.score(inputs(TEXTS))]);
      for (const [i] of TEXTS.entries()) {
        const logits = referenceLogits(weights, ids[i]!);
        expect(near(byCritic[i]!.raw, logits[0]!), `${byCritic[i]!.raw} vs ${logits[0]}`).toBe(true);
        expect(byCritic[i]!.value).toBeCloseTo(sigmoid(byCritic[i]!.raw), 12);
        const total = logits.reduce((sum, value) => sum + Math.exp(value), 0);
        expect(near(bySoftmax[i]!.raw, logits[3]!)).toBe(true);
        expect(bySoftmax[i]!.value).toBeCloseTo(Math.exp(logits[3]!) / total, 5);
      }
    } finally {
      await critic.close();
      await softmax.close();
    }
  });

  it('two-class head: P(YES) by softmax, raw = logit_YES − logit_NO', async () => {
    const dir = join(temp, 'two-class');
    buildTinyModel({ kind: 'two-class', outDir: dir });
    const scorer = await createOnnxScorer({ modelDir: dir });
    try {
      expect(scorer.kind).toBe('two-class');
      expect(scorer.labelIds).toEqual({ yes: 1, no: 0 });
      const batched = await scorer.score(inputs(TEXTS));
      const weights = readTinyWeights(join(dir, 'model.onnx'));
      const ids = await scorer.tokenizer.encode(TEXTS);
      for (const [i, text] of TEXTS.entries()) {
        const [single] = await scorer.score(inputs([text]));
        expect(Math.abs(batched[i]!.raw - single!.raw)).toBeLessThan(1e-6);
        const expected = referenceRaw(weights, ids[i]!, { kind: 'two-class', yes: 1, no: 0 });
        expect(near(batched[i]!.raw, expected), `${batched[i]!.raw} vs ${expected}`).toBe(true);
        expect(batched[i]!.value).toBeCloseTo(sigmoid(batched[i]!.raw), 12);
      }
    } finally {
      await scorer.close();
    }
  });

  it('causal LM with position_ids: YES/NO logits at the last real position', async () => {
    const dir = join(temp, 'causal-lm');
    buildTinyModel({ kind: 'causal-lm', outDir: dir, maxPositionEmbeddings: 512 });
    const scorer = await createOnnxScorer({ modelDir: dir, workers: 2 });
    try {
      expect(scorer.kind).toBe('causal-lm');
      expect(scorer.session.inputNames).toEqual(['input_ids', 'attention_mask', 'position_ids']);
      expect(scorer.maxInputTokens).toBe(512);
      const tokenizer = await loadTokenizer(dir);
      expect(scorer.labelIds).toEqual({ yes: tokenizer.tokenToId('YES'), no: tokenizer.tokenToId('NO') });
      const batched = await scorer.score(inputs(TEXTS));
      const weights = readTinyWeights(join(dir, 'model.onnx'));
      const ids = await tokenizer.encode(TEXTS);
      for (const [i, text] of TEXTS.entries()) {
        const [single] = await scorer.score(inputs([text]));
        expect(Math.abs(batched[i]!.raw - single!.raw)).toBeLessThan(1e-6);
        const expected = referenceRaw(weights, ids[i]!, { kind: 'causal-lm', ...scorer.labelIds! });
        expect(near(batched[i]!.raw, expected), `${batched[i]!.raw} vs ${expected}`).toBe(true);
        expect(Math.abs(batched[i]!.value - sigmoid(expected))).toBeLessThan(1e-5);
      }
    } finally {
      await scorer.close();
    }
  });

  it('causal LM with leading-space labels reads the " YES"/" NO" tokens', async () => {
    const dir = join(temp, 'causal-lm-plain');
    buildTinyModel({ kind: 'causal-lm', outDir: dir, maxPositionEmbeddings: 256, positionIds: false });
    const scorer = await createOnnxScorer({ modelDir: dir, labels: { yes: ' YES', no: ' NO' } });
    try {
      expect(scorer.session.inputNames).toEqual(['input_ids', 'attention_mask']);
      expect(scorer.labelIds).toEqual({ yes: scorer.tokenizer.tokenToId('ĠYES'), no: scorer.tokenizer.tokenToId('ĠNO') });
    } finally {
      await scorer.close();
    }
  });
});

describe('event loop', () => {
  it('stays responsive while a worker runs a long inference', async () => {
    // A causal LM's [batch, seq, vocab] logits make one run of 8 × 512 tokens take ~100 ms of CPU.
    const dir = join(temp, 'causal-lm-slow');
    buildTinyModel({ kind: 'causal-lm', outDir: dir, maxPositionEmbeddings: 512 });
    const scorer = await createOnnxScorer({ modelDir: dir, workers: 1, maxBatchTokens: 1 << 20 });
    try {
      const batch = Array.from({ length: 8 }, (_, row) => ({
        key: `r${row}`,
        text: '',
        inputIds: Array.from({ length: 512 }, (_, t) => (row * 31 + t * 7) % 2400),
      }));
      await scorer.score(batch);
      let ticks = 0;
      let last = performance.now();
      let worstGap = 0;
      const timer = setInterval(() => {
        const now = performance.now();
        worstGap = Math.max(worstGap, now - last);
        last = now;
        ticks++;
      }, 1);
      const started = performance.now();
      await scorer.score(batch);
      const latency = performance.now() - started;
      clearInterval(timer);
      // On the event loop, the one run would show up as one gap as long as the whole call.
      expect(latency).toBeGreaterThan(30);
      expect(worstGap).toBeLessThan(latency / 2);
      expect(ticks).toBeGreaterThan(5);
    } finally {
      await scorer.close();
    }
  });
});

describe('start-up failures', () => {
  it('a folder without model.onnx: WNW_ERR_SCORE_MODEL naming the file', async () => {
    const dir = join(temp, 'no-model');
    buildTinyModel({ kind: 'scalar', outDir: dir });
    rmSync(join(dir, 'model.onnx'));
    const error = await expectCode(createOnnxScorer({ modelDir: dir }), 'WNW_ERR_SCORE_MODEL');
    expect(error.message).toContain(join(dir, 'model.onnx'));
    expect(error.details).toEqual({ file: join(dir, 'model.onnx') });
  });

  it('a model.onnx ONNX Runtime cannot read: WNW_ERR_SCORE_MODEL naming the file', async () => {
    const dir = join(temp, 'corrupt');
    buildTinyModel({ kind: 'scalar', outDir: dir });
    writeFileSync(join(dir, 'model.onnx'), 'not a protobuf');
    const error = await expectCode(createOnnxScorer({ modelDir: dir, workers: 2 }), 'WNW_ERR_SCORE_MODEL');
    expect(error.message).toContain(join(dir, 'model.onnx'));
  });

  it('a causal LM whose tokenizer has no single-token YES: WNW_ERR_SCORE_TOKENIZER', async () => {
    const dir = join(temp, 'no-yes');
    buildTinyModel({ kind: 'causal-lm', outDir: dir, maxPositionEmbeddings: 64, excludeWords: ['YES'] });
    const tokenizer = await loadTokenizer(dir);
    expect((await tokenizer.encode(['YES']))[0]!.length).toBeGreaterThan(1);
    const error = await expectCode(createOnnxScorer({ modelDir: dir }), 'WNW_ERR_SCORE_TOKENIZER');
    expect(error.message).toContain('"YES"');
  });

  it('a folder without tokenizer.json: WNW_ERR_SCORE_TOKENIZER', async () => {
    const dir = join(temp, 'no-tokenizer');
    buildTinyModel({ kind: 'scalar', outDir: dir });
    rmSync(join(dir, 'tokenizer.json'));
    await expectCode(createOnnxScorer({ modelDir: dir }), 'WNW_ERR_SCORE_TOKENIZER');
  });

  it('an unreadable config.json: WNW_ERR_SCORE_MODEL naming it', async () => {
    const dir = join(temp, 'bad-config');
    buildTinyModel({ kind: 'scalar', outDir: dir });
    writeFileSync(join(dir, 'config.json'), '{ not json');
    const error = await expectCode(createOnnxScorer({ modelDir: dir }), 'WNW_ERR_SCORE_MODEL');
    expect(error.message).toContain('config.json');
  });
});

describe('close', () => {
  it('is idempotent, and scoring afterwards is refused', async () => {
    const scorer = await createOnnxScorer({ modelDir: BUNDLED, workers: 2 });
    await scorer.score(inputs(['warm up']));
    await Promise.all([scorer.close(), scorer.close()]);
    await scorer.close();
    await expectCode(scorer.score(inputs(['after close'])), 'WNW_ERR_OP_ABORTED');
  });

  it('lets the runs in flight finish', async () => {
    const scorer = await createOnnxScorer({ modelDir: BUNDLED });
    const pending = scorer.score(inputs(TEXTS));
    await scorer.close();
    expect(await pending).toHaveLength(TEXTS.length);
  });
});
