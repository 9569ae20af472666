/**
 * `rerankBatch` resuming from the files of an earlier run: what counts as done, and that nothing
 * computed is lost or counted twice. A scripted scorer (it reads `SCORE=<v>` from the patch and
 * records every input it is sent) stands in for a value model.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { rerankBatch, type RerankBatchOptions, type ScoreLine } from '../../src/rerank/rerank-batch.js';
import type { Scorer, ScoreInput } from '../../src/scoring/types.js';
import { fakeValueModel } from '../fakes/fake-value-model.js';

class ScriptedScorer implements Scorer {
  readonly backend = 'scripted';
  readonly model = 'scripted-model';
  readonly maxInputTokens = 4096;
  readonly calls: ScoreInput[][] = [];
  async score(inputs: ScoreInput[]) {
    this.calls.push(inputs);
    return inputs.map((input) => {
      const value = Number(/SCORE=(\d\.\d+)/.exec(input.text)?.[1] ?? '0.5');
      return { value, raw: Math.log(value / (1 - value)) };
    });
  }
  async close() {}
  /** Instances whose candidates were sent, one entry per score() call. */
  get scoredInstances(): number {
    return this.calls.length;
  }
}

const patch = (file: string, score: number) =>
  `diff --git a/${file} b/${file}\n--- a/${file}\n+++ b/${file}\n@@ -1 +1 @@\n-old\n+new SCORE=${score.toFixed(2)}\n`;

/** Three instances, two runs each: run-a is resolved on i1 and i2, run-b on i3. */
const RUNS = {
  'run-a': [
    { instance_id: 'o__r-1', model_patch: patch('a.py', 0.9), resolved: true },
    { instance_id: 'o__r-2', model_patch: patch('b.py', 0.3), resolved: true },
    { instance_id: 'o__r-3', model_patch: patch('c.py', 0.6), resolved: false },
  ],
  'run-b': [
    { instance_id: 'o__r-1', model_patch: patch('a.py', 0.2), resolved: false },
    { instance_id: 'o__r-2', model_patch: patch('b.py', 0.8), resolved: false },
    { instance_id: 'o__r-3', model_patch: patch('c.py', 0.7), resolved: true },
  ],
};

const lines = <T>(file: string): T[] =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as T);

describe('rerankBatch resume', () => {
  const root = mkdtempSync(join(tmpdir(), 'wnw-rerank-batch-'));
  let dir: string;
  let run = 0;
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  beforeEach(() => {
    dir = join(root, String(run++));
  });

  /** Writes the run files (with or without their `resolved` field) and the label file. */
  function inputs(options: { withLabels: boolean; runs?: Array<keyof typeof RUNS> }) {
    const files = (options.runs ?? (['run-a', 'run-b'] as const)).map((name) => {
      const file = join(root, `${name}-${options.withLabels ? 'labelled' : 'bare'}.jsonl`);
      const rows = RUNS[name].map(({ resolved, ...row }) => ({
        ...row,
        model_name_or_path: 'm',
        ...(options.withLabels ? { resolved } : {}),
      }));
      writeFileSync(file, rows.map((row) => JSON.stringify(row)).join('\n') + '\n');
      return file;
    });
    return files;
  }

  function labelsFile(): string {
    const file = join(root, 'labels.jsonl');
    const rows = Object.entries(RUNS).flatMap(([name, rows]) =>
      rows.map((row) => ({ instance_id: row.instance_id, source: `${name}-bare`, resolved: row.resolved })),
    );
    writeFileSync(file, rows.map((row) => JSON.stringify(row)).join('\n') + '\n');
    return file;
  }

  const options = (scorer: Scorer, overrides: Partial<RerankBatchOptions> = {}): RerankBatchOptions => ({
    candidates: inputs({ withLabels: true }),
    valueModel: fakeValueModel(scorer),
    strategy: 'value',
    out: join(dir, 'predictions.jsonl'),
    scores: join(dir, 'scores.jsonl'),
    concurrency: 1,
    ...overrides,
  });

  it('redoes instances whose score lines are missing instead of dropping them from the metrics', async () => {
    await rerankBatch(options(new ScriptedScorer()));
    // Same --out, another --scores: the predictions are there but their scores are not.
    const scorer = new ScriptedScorer();
    const result = await rerankBatch(options(scorer, { scores: join(dir, 'other-scores.jsonl') }));
    expect(result.resumed).toBe(0);
    expect(scorer.scoredInstances).toBe(3);
    expect(result.metrics?.overall).toMatchObject({ instances: 3, candidates: 6, scored_candidates: 6, selected_at_1: 2 / 3 });
    expect(lines<ScoreLine>(join(dir, 'other-scores.jsonl'))).toHaveLength(6);
    expect(lines(join(dir, 'predictions.jsonl'))).toHaveLength(3);
  });

  it('redoes an instance that gained a candidate since the previous run', async () => {
    await rerankBatch(options(new ScriptedScorer(), { candidates: inputs({ withLabels: true, runs: ['run-a'] }), sourceFrom: 'file' }));
    const scorer = new ScriptedScorer();
    const result = await rerankBatch(options(scorer, { sourceFrom: 'file' }));
    expect(result.resumed).toBe(0);
    expect(result.metrics?.overall).toMatchObject({ instances: 3, candidates: 6, scored_candidates: 6 });
    const scores = lines<ScoreLine>(join(dir, 'scores.jsonl'));
    expect(scores).toHaveLength(6);
    expect(
      scores
        .filter((line) => line.chosen)
        .map((line) => line.trajectory_id)
        .sort(),
    ).toEqual(['run-a-labelled/o__r-1', 'run-b-labelled/o__r-2', 'run-b-labelled/o__r-3']);
  });

  it('does not keep predictions made with another strategy', async () => {
    await rerankBatch(options(new ScriptedScorer(), { strategy: 'value' }));
    const scorer = new ScriptedScorer();
    const result = await rerankBatch(options(scorer, { strategy: 'consensus' }));
    expect(result.resumed).toBe(0);
    const predictions = lines<{ instance_id: string; model_name_or_path: string }>(join(dir, 'predictions.jsonl'));
    expect(predictions.map((row) => row.model_name_or_path)).toEqual(['winnower-consensus', 'winnower-consensus', 'winnower-consensus']);
  });

  it('retries an instance the scorer failed on (an outage) on the next run', async () => {
    // First run: the scorer is down for instance o__r-2.
    class FlakyScorer extends ScriptedScorer {
      override async score(inputs: ScoreInput[]) {
        if (inputs.some((input) => input.text.includes('b.py'))) throw new Error('503 from the scoring server');
        return super.score(inputs);
      }
    }
    const first = await rerankBatch(options(new FlakyScorer()));
    expect(
      lines<ScoreLine>(join(dir, 'scores.jsonl'))
        .filter((line) => line.score === null)
        .map((line) => line.instance_id),
    ).toEqual(['o__r-2', 'o__r-2']);
    expect(first.instances).toBe(3);
    const scorer = new ScriptedScorer();
    const second = await rerankBatch(options(scorer));
    expect(second.resumed).toBe(2);
    expect(scorer.scoredInstances).toBe(1);
    expect(lines<ScoreLine>(join(dir, 'scores.jsonl')).every((line) => line.score !== null)).toBe(true);
    expect(lines(join(dir, 'predictions.jsonl'))).toHaveLength(3);
  });

  it('notes in the report how many candidates could not be scored, and how many instances have none scored', async () => {
    class DownOnB extends ScriptedScorer {
      override async score(inputs: ScoreInput[]) {
        if (inputs.some((input) => input.text.includes('b.py'))) throw new Error('503 from the scoring server');
        return super.score(inputs);
      }
    }
    const result = await rerankBatch(options(new DownOnB(), { report: join(dir, 'report.md') }));
    expect(result.unscored).toMatchObject({ candidates: 2, instances: ['o__r-2'] });
    expect(readFileSync(join(dir, 'report.md'), 'utf8')).toContain(
      '2 candidate(s) could not be scored; 1 instance(s) have no scored candidate',
    );
  });

  it('does not keep scores from another value model', async () => {
    await rerankBatch(options(new ScriptedScorer()));
    const other = Object.assign(new ScriptedScorer(), { model: 'other-model' });
    const result = await rerankBatch(options(other));
    expect(result.resumed).toBe(0);
    expect(other.scoredInstances).toBe(3);
    expect(lines<ScoreLine>(join(dir, 'scores.jsonl')).map((line) => line.score?.model)).toEqual(Array(6).fill('other-model'));
  });

  it('labels resumed instances with the labels of this run', async () => {
    const candidates = inputs({ withLabels: false });
    const first = await rerankBatch(options(new ScriptedScorer(), { candidates }));
    expect(first.metrics).toBeUndefined();
    const scorer = new ScriptedScorer();
    const result = await rerankBatch(options(scorer, { candidates, labels: [labelsFile()] }));
    expect(result.resumed).toBe(3);
    expect(scorer.scoredInstances).toBe(0);
    expect(result.metrics?.overall).toMatchObject({
      instances: 3,
      candidates: 6,
      resolved_candidates: 3,
      pass_at_n: 1,
      selected_at_1: 2 / 3,
    });
    expect(lines<ScoreLine>(join(dir, 'scores.jsonl')).map((line) => line.resolved)).not.toContain(null);
  });

  it('leaves instances with an unlabelled candidate out of the metrics, and says so', async () => {
    const labels = join(root, 'partial-labels.jsonl');
    // run-b is labelled on o__r-3 only: o__r-2's chosen candidate (run-b, 0.8) has no label.
    const rows = [...RUNS['run-a'].map((row) => ({ ...row, source: 'run-a-bare' })), { ...RUNS['run-b'][2]!, source: 'run-b-bare' }];
    writeFileSync(
      labels,
      rows.map(({ instance_id, source, resolved }) => JSON.stringify({ instance_id, source, resolved })).join('\n') + '\n',
    );
    const result = await rerankBatch(
      options(new ScriptedScorer(), { candidates: inputs({ withLabels: false }), labels: [labels], report: join(dir, 'report.md') }),
    );
    expect(result.metrics?.overall).toMatchObject({ instances: 1, candidates: 2, mean_at_1: 0.5, pass_at_n: 1, selected_at_1: 1 });
    expect(readFileSync(join(dir, 'report.md'), 'utf8')).toContain(
      '2 instance(s) left out of the metrics: some of their candidates have no label',
    );
  });

  it('keeps complete instances of the same run and redoes only the rest', async () => {
    await rerankBatch(options(new ScriptedScorer()));
    const out = join(dir, 'predictions.jsonl');
    writeFileSync(out, readFileSync(out, 'utf8').split('\n').slice(0, 2).join('\n') + '\n');
    const scorer = new ScriptedScorer();
    const result = await rerankBatch(options(scorer));
    expect(result.resumed).toBe(2);
    expect(scorer.scoredInstances).toBe(1);
    expect(result.metrics?.overall).toMatchObject({ instances: 3, candidates: 6, scored_candidates: 6 });
    expect(lines<ScoreLine>(join(dir, 'scores.jsonl'))).toHaveLength(6);
  });
});

describe('rerankBatch candidate globs', () => {
  const root = mkdtempSync(join(tmpdir(), 'wnw-rerank-glob-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('reads the files a glob matched as they are named, even a name that looks like a glob itself', async () => {
    // Expanded once: were `run[1].jsonl` taken for a glob again it would match `run1.jsonl`, which does not exist.
    for (const name of ['run[1]', 'run[2]']) {
      const rows = RUNS['run-a'].map(({ resolved: _resolved, ...row }) => ({ ...row, model_name_or_path: 'm' }));
      writeFileSync(join(root, `${name}.jsonl`), rows.map((row) => JSON.stringify(row)).join('\n') + '\n');
    }
    const result = await rerankBatch({
      candidates: [join(root, 'run*.jsonl')],
      valueModel: fakeValueModel(new ScriptedScorer()),
      strategy: 'value',
      out: join(root, 'out', 'predictions.jsonl'),
      scores: join(root, 'out', 'scores.jsonl'),
      concurrency: 1,
    });
    expect(result).toMatchObject({ instances: 3, candidates: 6, issues: [] });
    // Two files matched: each is its own source (named after the file), as the shell would have passed them.
    expect(new Set(lines<ScoreLine>(join(root, 'out', 'scores.jsonl')).map((line) => line.source))).toEqual(new Set(['run[1]', 'run[2]']));
  });
});

// Issue 32: an instance the SWE-bench harness could not run (its report's error_ids) is never an
// unresolved candidate in the scores or the agreement metrics, even over the row's own `resolved`.
describe('rerankBatch labels from a harness report', () => {
  it('leaves the candidates the harness could not run unlabelled, out of the metrics', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'wnw-rerank-errors-'));
    try {
      const files = (['run-a', 'run-b'] as const).map((name) => {
        const file = join(dir, `${name}.jsonl`);
        writeFileSync(file, RUNS[name].map((row) => JSON.stringify({ ...row, model_name_or_path: 'm' })).join('\n') + '\n');
        return file;
      });
      const report = join(dir, 'run-a.report.json');
      writeFileSync(
        report,
        JSON.stringify({
          submitted_ids: ['o__r-1', 'o__r-2', 'o__r-3'],
          resolved_ids: ['o__r-1', 'o__r-2'],
          unresolved_ids: [],
          error_ids: ['o__r-3'],
        }),
      );
      const result = await rerankBatch({
        candidates: files,
        labels: [`run-a=${report}`],
        valueModel: fakeValueModel(new ScriptedScorer()),
        strategy: 'value',
        out: join(dir, 'predictions.jsonl'),
        scores: join(dir, 'scores.jsonl'),
        concurrency: 1,
      });
      const resolved = Object.fromEntries(lines<ScoreLine>(join(dir, 'scores.jsonl')).map((line) => [line.trajectory_id, line.resolved]));
      expect(resolved).toEqual({
        'run-a/o__r-1': true,
        'run-a/o__r-2': true,
        'run-a/o__r-3': null,
        'run-b/o__r-1': false,
        'run-b/o__r-2': false,
        'run-b/o__r-3': true,
      });
      // o__r-3 has a candidate without a label: the metrics cover the other two instances.
      expect(result.metrics?.overall).toMatchObject({ instances: 2 });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
