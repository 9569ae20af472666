/**
 * `winnower rerank` with a judge: rerankBatch over prediction files, a constant scorer (every
 * candidate ties on value) and the fake judge, which prefers the patch carrying its marker.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { judgeFromFlags } from '../../src/cli/judge-from-flags.js';
import type { RerankFlags } from '../../src/cli/rerank.js';
import { rerankSummary, rerankSummaryFile } from '../../src/cli/rerank-summary.js';
import { createJudge, type Judge } from '../../src/judge/judge-client.js';
import { JudgeOptions } from '../../src/judge/judge-options.js';
import { rerankBatch } from '../../src/rerank/rerank-batch.js';
import type { Scorer, ScoreInput } from '../../src/scoring/types.js';
import { startFakeJudge, type FakeJudge } from '../fakes/fake-judge.js';
import { fakeValueModel } from '../fakes/fake-value-model.js';

const constantScorer: Scorer = {
  backend: 'constant',
  model: 'constant-model',
  maxInputTokens: 4096,
  async score(inputs: ScoreInput[]) {
    return inputs.map(() => ({ value: 0.5, raw: 0 }));
  },
  async close() {},
};

const patch = (file: string, line: string) => `diff --git a/${file} b/${file}\n--- a/${file}\n+++ b/${file}\n@@ -1 +1 @@\n-old\n+${line}\n`;

describe('rerankBatch with a judge', () => {
  const root = mkdtempSync(join(tmpdir(), 'wnw-rerank-judge-'));
  let fake: FakeJudge | undefined;
  let judge: Judge | undefined;
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  afterEach(async () => {
    await judge?.close();
    await fake?.close();
  });

  it('chooses what the judge prefers among value ties and reports comparisons and tie rates', async () => {
    fake = await startFakeJudge();
    judge = createJudge(JudgeOptions.parse({ url: `${fake.url}/v1`, model: 'judge-m' }));
    // Three runs; on each instance one run's patch carries the judge's marker.
    const files = ['r1', 'r2', 'r3'].map((run, index) => {
      const file = join(root, `${run}.jsonl`);
      const rows = ['o__x-1', 'o__x-2'].map((instance, k) => ({
        instance_id: instance,
        model_name_or_path: run,
        model_patch: patch('a.py', (index + k) % 3 === 1 ? `fixed JUDGE-PREFERS-ME ${run}` : `fixed ${run}`),
      }));
      writeFileSync(file, `${rows.map((row) => JSON.stringify(row)).join('\n')}\n`);
      return file;
    });
    const out = join(root, 'predictions.jsonl');
    const result = await rerankBatch({
      candidates: files,
      valueModel: fakeValueModel(constantScorer),
      strategy: 'hybrid',
      judge: { judge, k: 2 },
      out,
      scores: join(root, 'scores.jsonl'),
      report: join(root, 'report.md'),
      concurrency: 1,
    });
    const predictions = readFileSync(out, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    for (const prediction of predictions) expect(prediction.model_patch).toContain('JUDGE-PREFERS-ME');
    // 3 candidates per instance, all tied: 3 pairs, 6 calls each.
    expect(result.judge).toMatchObject({
      model: 'judge-m',
      strategy: 'hybrid',
      comparisons: 12,
      pairs: 6,
      usable: 6,
      tied_before: 6,
      // The two unmarked patches of each instance are equally good to the judge: still tied.
      tied_after: 4,
      tie_rate_before: 1,
      tie_rate_after: 4 / 6,
      error: null,
    });
    expect(rerankSummaryFile(result, null).judge).toEqual(result.judge);
    expect(rerankSummary(result).join('\n')).toMatch(
      /judge judge-m \(hybrid\): 12 comparisons \(6 pairs\).*tie rate 100% before, 66.7% after/,
    );
    expect(readFileSync(join(root, 'report.md'), 'utf8')).toMatch(/judge judge-m \(hybrid\): 12 comparisons/);
  });
});

describe('rerankBatch with a judge, resumed', () => {
  const root = mkdtempSync(join(tmpdir(), 'wnw-rerank-judge-resume-'));
  let fake: FakeJudge | undefined;
  let judge: Judge | undefined;
  afterAll(async () => {
    await judge?.close();
    await fake?.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('selects a resumed instance from the judge verdicts its score lines kept, without asking the judge again', async () => {
    fake = await startFakeJudge();
    judge = createJudge(JudgeOptions.parse({ url: `${fake.url}/v1`, model: 'judge-m' }));
    // The marked patch sorts last by id, so a selection that lost the verdicts would not choose it.
    const files = ['r1', 'r2', 'r3'].map((run) => {
      const file = join(root, `${run}.jsonl`);
      const row = {
        instance_id: 'o__x-1',
        model_name_or_path: run,
        model_patch: patch('a.py', run === 'r3' ? 'fixed JUDGE-PREFERS-ME' : `fixed ${run}`),
      };
      writeFileSync(file, `${JSON.stringify(row)}\n`);
      const resolved = run === 'r3' ? ['o__x-1'] : [];
      writeFileSync(join(root, `${run}.results.json`), JSON.stringify({ resolved_ids: resolved, completed_ids: ['o__x-1'] }));
      return file;
    });
    const options = {
      labels: ['r1', 'r2', 'r3'].map((run) => `${run}=${join(root, `${run}.results.json`)}`),
      candidates: files,
      valueModel: fakeValueModel(constantScorer),
      strategy: 'judge' as const,
      judge: { judge, k: 2 },
      out: join(root, 'predictions.jsonl'),
      scores: join(root, 'scores.jsonl'),
      concurrency: 1,
    };
    const first = await rerankBatch(options);
    const asked = fake.requests.length;
    expect(asked).toBeGreaterThan(0);
    const lines = readFileSync(options.scores, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(lines.every((line) => line.judge?.model === 'judge-m' && line.judge.games > 0)).toBe(true);

    const again = await rerankBatch(options);
    expect(again.resumed).toBe(1);
    expect(fake.requests.length).toBe(asked);
    expect(first.metrics?.overall.selected_at_1).toBe(1);
    // The resumed instance's row in the metrics is the judge's choice, as its prediction is.
    expect(again.metrics?.overall.selected_at_1).toBe(1);
    expect(readFileSync(options.out, 'utf8')).toContain('JUDGE-PREFERS-ME');
  });
});

describe('judgeFromFlags', () => {
  const flags = (extra: Partial<RerankFlags>): RerankFlags =>
    ({
      candidates: ['x'],
      scorer: 'onnx',
      out: 'p.jsonl',
      concurrency: 1,
      progress: false,
      inspector: false,
      ...extra,
    }) as RerankFlags;
  const fieldOf = (attempt: () => unknown) => {
    try {
      attempt();
    } catch (error) {
      return (error as { code: string; details: { field: string } }).code + ' ' + (error as { details: { field: string } }).details.field;
    }
    return 'no error';
  };

  it('takes --judge-url and --judge-model together, the key from WINNOWER_JUDGE_KEY', () => {
    expect(judgeFromFlags(flags({}))).toBeUndefined();
    expect(judgeFromFlags(flags({ judgeUrl: 'http://j:1/v1', judgeModel: 'm', judgeK: 3 }), { WINNOWER_JUDGE_KEY: 'sk-1' })).toEqual({
      url: 'http://j:1/v1',
      model: 'm',
      api_key: 'sk-1',
      k: 3,
      timeout_s: 60,
    });
  });

  it('refuses half a judge, stray judge flags and a bad URL, naming the flag', () => {
    expect(fieldOf(() => judgeFromFlags(flags({ judgeUrl: 'http://j:1/v1' })))).toBe('WNW_ERR_INPUT_INVALID judge-model');
    expect(fieldOf(() => judgeFromFlags(flags({ judgeModel: 'm' })))).toBe('WNW_ERR_INPUT_INVALID judge-url');
    expect(fieldOf(() => judgeFromFlags(flags({ judgeK: 2 })))).toBe('WNW_ERR_INPUT_INVALID judge-k');
    expect(fieldOf(() => judgeFromFlags(flags({ judgeUrl: 'ftp://j/v1', judgeModel: 'm' })))).toBe('WNW_ERR_INPUT_INVALID judge-url');
    expect(fieldOf(() => judgeFromFlags(flags({ judgeUrl: 'http://j/v1', judgeModel: 'm' }), { WINNOWER_JUDGE_KEY: 'a b' }))).toBe(
      'WNW_ERR_INPUT_INVALID WINNOWER_JUDGE_KEY',
    );
  });
});
