/**
 * `rerankBatch` output files stay valid JSONL when instances finish together: rows larger than
 * one write chunk (Node writes files in 512 KiB pieces) from several instances at once must not
 * be interleaved. A scorer that answers only once every instance of the batch is waiting makes
 * the instances finish, and write, at the same moment.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { rerankBatch, type ScoreLine } from '../../src/rerank/rerank-batch.js';
import type { Scorer, ScoreInput, ScoreOutput } from '../../src/scoring/types.js';
import { fakeValueModel } from '../fakes/fake-value-model.js';
import { readJsonl } from '../support/cli.js';

/** Holds every call until `parties` calls are waiting, then answers them all in the same tick. */
class BarrierScorer implements Scorer {
  readonly backend = 'barrier';
  readonly model = 'barrier-model';
  readonly maxInputTokens = 4096;
  readonly #waiting: Array<() => void> = [];
  constructor(readonly parties: number) {}
  async score(inputs: ScoreInput[]): Promise<ScoreOutput[]> {
    await new Promise<void>((resolve) => {
      this.#waiting.push(resolve);
      if (this.#waiting.length === this.parties) for (const release of this.#waiting.splice(0)) release();
    });
    return inputs.map(() => ({ value: 0.5, raw: 0 }));
  }
  async close() {}
}

const INSTANCES = 8;
const PATCH_BYTES = 700 * 1024;

/** A unified diff of about `bytes` bytes whose every line names its instance. */
function bigPatch(instance: number, bytes: number): string {
  const header = `diff --git a/f${instance}.py b/f${instance}.py\n--- a/f${instance}.py\n+++ b/f${instance}.py\n@@ -1 +1,9000 @@\n-old\n`;
  const line = `+value_${instance} = "${'x'.repeat(60)}"\n`;
  return header + line.repeat(Math.ceil(bytes / line.length));
}

describe('rerankBatch output under concurrency', () => {
  const dir = mkdtempSync(join(tmpdir(), 'wnw-rerank-output-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it(`writes every row whole: ${INSTANCES} instances with ${PATCH_BYTES / 1024} KiB patches finishing together at concurrency ${INSTANCES}`, async () => {
    const candidates = join(dir, 'candidates.jsonl');
    const rows = Array.from({ length: INSTANCES }, (_, index) => ({
      instance_id: `o__r-${index}`,
      model_name_or_path: 'm',
      model_patch: bigPatch(index, PATCH_BYTES),
    }));
    writeFileSync(candidates, rows.map((row) => JSON.stringify(row)).join('\n') + '\n');
    const out = join(dir, 'predictions.jsonl');
    const scores = join(dir, 'scores.jsonl');

    const result = await rerankBatch({
      candidates: [candidates],
      valueModel: fakeValueModel(new BarrierScorer(INSTANCES)),
      strategy: 'value',
      out,
      scores,
      concurrency: INSTANCES,
    });

    expect(result.instances).toBe(INSTANCES);
    const predictions = readJsonl<{ instance_id: string; model_patch: string }>(out);
    expect(predictions.map((row) => row.instance_id).sort()).toEqual(rows.map((row) => row.instance_id).sort());
    for (const prediction of predictions)
      expect(prediction.model_patch).toBe(rows.find((row) => row.instance_id === prediction.instance_id)!.model_patch);
    const lines = readJsonl<ScoreLine>(scores);
    expect(lines.map((line) => line.instance_id).sort()).toEqual(rows.map((row) => row.instance_id).sort());
    expect(lines.every((line) => line.score !== null)).toBe(true);
  }, 60_000);
});
