/**
 * `winnower train --rollouts` reads its inputs under the same --source-from rule as `winnower rerank --candidates`
 * (docs/design/05-defects-found.md#D9).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadDataset } from '../../src/train/dataset.js';

/** Two runs of one agent: each file holds the same instances under the same model name. */
function twoRuns(): { dir: string; files: string[] } {
  const dir = mkdtempSync(join(tmpdir(), 'winnower-dataset-'));
  const files = ['seed1', 'seed2'].map((name, run) => {
    const rows = ['django__django-15202', 'django__django-15203'].map((instance_id, index) => ({
      instance_id,
      model_name_or_path: 'swe-agent-gpt4',
      model_patch: `diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+${run}${index}\n`,
      resolved: (run + index) % 2 === 0,
    }));
    const file = join(dir, `${name}.jsonl`);
    writeFileSync(file, rows.map((row) => JSON.stringify(row)).join('\n') + '\n');
    return file;
  });
  return { dir, files };
}

describe('loadDataset: the inputs rerank takes', () => {
  it('names each of several rollout files a run (--source-from file by default), as rerank does', async () => {
    const { files } = twoRuns();
    const dataset = await loadDataset({ rollouts: files });
    expect(dataset.candidates.map((candidate) => [candidate.trajectory.id, candidate.resolved])).toEqual([
      ['seed1/django__django-15202', true],
      ['seed1/django__django-15203', false],
      ['seed2/django__django-15202', false],
      ['seed2/django__django-15203', true],
    ]);
  });

  it('reads a glob of runs the same way; with --source-from record the runs collide, as in rerank', async () => {
    const { dir } = twoRuns();
    expect((await loadDataset({ rollouts: [join(dir, '*.jsonl')] })).candidates).toHaveLength(4);
    const error = await loadDataset({ rollouts: [join(dir, '*.jsonl')], sourceFrom: 'record' }).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'WNW_ERR_INPUT_INVALID' });
    expect((error as Error).message).toContain('duplicate trajectory id swe-agent-gpt4/django__django-15202');
  });
});
