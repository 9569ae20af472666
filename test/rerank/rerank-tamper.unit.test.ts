/**
 * Tamper flags end to end through `rerankBatch` (what `winnower rerank` runs): two SWE-bench
 * predictions of one instance, the value model preferring the one that skips a test; the clean
 * one is chosen, and the scores file and the report name the flag.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { rerankBatch, type ScoreLine } from '../../src/rerank/rerank-batch.js';
import type { Scorer, ScoreInput, ScoreOutput } from '../../src/scoring/types.js';
import { fakeValueModel } from '../fakes/fake-value-model.js';
import { readJsonl } from '../support/cli.js';
import { FIX_A, FIX_B, fileDiff } from '../select/fixtures.js';

/** Prefers any input that mentions a skip marker, as a fooled value model would. */
class SkipLovingScorer implements Scorer {
  readonly backend = 'skip-loving';
  readonly model = 'skip-loving-model';
  readonly maxInputTokens = 4096;
  async score(inputs: ScoreInput[]): Promise<ScoreOutput[]> {
    return inputs.map((input) => (input.text.includes('pytest.mark.skip') ? { value: 0.9, raw: 2.2 } : { value: 0.3, raw: -0.8 }));
  }
  async close() {}
}

const SKIPS = fileDiff('tests/test_calc.py', ['+@pytest.mark.skip(reason="fails")', ' def test_add():', '     assert add(1, 2) == 3']);

describe('rerank with a tampered candidate', () => {
  const dir = mkdtempSync(join(tmpdir(), 'wnw-rerank-tamper-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('chooses the clean candidate and writes the flag to the scores file and the report', async () => {
    const candidates = join(dir, 'predictions.jsonl');
    const rows = [
      { instance_id: 'acme__calc-1', model_name_or_path: 'tamperer', model_patch: FIX_A + SKIPS },
      { instance_id: 'acme__calc-1', model_name_or_path: 'honest', model_patch: FIX_B },
    ];
    writeFileSync(candidates, `${rows.map((row) => JSON.stringify(row)).join('\n')}\n`);
    const out = join(dir, 'out.jsonl');
    const scores = join(dir, 'scores.jsonl');
    const report = join(dir, 'report.md');
    await rerankBatch({
      candidates: [candidates],
      valueModel: fakeValueModel(new SkipLovingScorer()),
      strategy: 'value',
      out,
      scores,
      report,
    });

    const [prediction] = readJsonl<{ model_patch: string }>(out);
    expect(prediction!.model_patch).toBe(FIX_B);
    const lines = readJsonl<ScoreLine>(scores);
    const tampered = lines.find((line) => line.source === 'tamperer')!;
    expect(tampered.score?.value).toBe(0.9);
    expect(tampered.tamper).toEqual([{ kind: 'skips-test', file: 'tests/test_calc.py', detail: 'adds @pytest.mark.skip to test_add' }]);
    expect(lines.find((line) => line.source === 'honest')!.tamper).toEqual([]);
    const markdown = readFileSync(report, 'utf8');
    expect(markdown).toContain('## Tamper flags (1 candidates)');
    expect(markdown).toMatch(/\| tamperer\S* \| no \| skips-test in tests\/test\\?_calc\.py \|/);
    expect(readFileSync(report.replace(/\.md$/, '.html'), 'utf8')).toContain('<td>skips-test in tests/test_calc.py</td>');
  });
});
