/**
 * `winnower train --rollouts` reads its inputs under the same --source-from rule as `winnower rerank --candidates`
 * (docs/design/05-defects-found.md#D9).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadDataset } from '../../src/train/dataset.js';
import { tempDir } from '../support/temp-dir.js';

/** Two runs of one agent: each file holds the same instances under the same model name. */
function twoRuns(): { dir: string; files: string[] } {
  const dir = tempDir('winnower-dataset-');
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

// Issue 27 item 3: several --rollouts files (sources cand_0, cand_1) and one labels file keyed by
// the records' model_name_or_path (run0, run1) found "no labelled candidates".
describe('loadDataset: labels keyed by the records’ own names', () => {
  function runsAndLabels(names: string[]): { files: string[]; labels: string } {
    const dir = tempDir('winnower-labels-');
    const files = names.map((model, run) => {
      const file = join(dir, `cand_${run}.jsonl`);
      const row = {
        instance_id: 'django__django-15202',
        model_name_or_path: model,
        model_patch: `diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+${run}\n`,
      };
      writeFileSync(file, `${JSON.stringify(row)}\n`);
      return file;
    });
    const labels = join(dir, 'labels.jsonl');
    const rows = [...new Set(names)].map((model, run) =>
      JSON.stringify({ instance_id: 'django__django-15202', source: model, resolved: run === 0 }),
    );
    writeFileSync(labels, `${rows.join('\n')}\n`);
    return { files, labels };
  }

  it('matches a label by model_name_or_path when only one source carries that name', async () => {
    const { files, labels } = runsAndLabels(['run0', 'run1']);
    const dataset = await loadDataset({ rollouts: files, labels: [labels] });
    expect(dataset.candidates.map((candidate) => [candidate.trajectory.source, candidate.resolved])).toEqual([
      ['cand_0', true],
      ['cand_1', false],
    ]);
  });

  it('says which sources each side names, and how to make them meet, when none matches', async () => {
    // Both files are "run0": the record name is ambiguous, so it is not used.
    const { files, labels } = runsAndLabels(['run0', 'run0']);
    const error = await loadDataset({ rollouts: files, labels: [labels] }).then(
      () => undefined,
      (caught: Error) => caught,
    );
    expect(error?.message).toContain('the labels name the sources run0, the candidates have cand_0, cand_1');
    expect(error?.message).toContain('--source-from record');
    expect(error?.message).toContain('NAME=PATH');
  });
});

// Issue 32: infra failures never count as unresolved in training rows. The rows' own labels say
// unresolved, the harness report says it could not run two of them.
describe('loadDataset: instances the harness could not run', () => {
  it('drops them as could_not_run, never as unresolved rows, even over the rows’ own resolved: false', async () => {
    const { dir, files } = twoRuns();
    const report = join(dir, 'seed1.results.json');
    writeFileSync(
      report,
      JSON.stringify({
        submitted_ids: ['django__django-15202', 'django__django-15203'],
        resolved_ids: ['django__django-15202'],
        unresolved_ids: [],
        error_ids: ['django__django-15203'],
      }),
    );
    const dataset = await loadDataset({ rollouts: files, labels: [`seed1=${report}`] });
    expect(dataset.candidates.map((candidate) => [candidate.trajectory.id, candidate.resolved])).toEqual([
      ['seed1/django__django-15202', true],
      ['seed2/django__django-15202', false],
      ['seed2/django__django-15203', true],
    ]);
    expect(dataset.dropped).toMatchObject({ could_not_run: 1, unlabelled: 0 });
  });
});
