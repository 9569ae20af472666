/**
 * `winnower rerank` and `winnower train` read ATIF trajectories, detected or with `--format atif`;
 * an ATIF-v1.8 file with keys winnower does not know is read with a warning on stderr. Real CLI in
 * a child process, the untrained bundled model.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadDataset } from '../../src/train/dataset.js';
import { exampleAtif } from '../formats/atif/example.js';
import { readJsonl, runCli } from '../support/cli.js';

const ROOT = new URL('../../', import.meta.url).pathname;
const TINY_MODEL = join(ROOT, 'models/tiny-value');
const patch = (line: string) => `diff --git a/stats.py b/stats.py\n--- a/stats.py\n+++ b/stats.py\n@@ -1 +1 @@\n-old\n+${line}\n`;

describe('ATIF trajectories into rerank and train', () => {
  const dir = mkdtempSync(join(tmpdir(), 'wnw-atif-cli-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const documents = ['a', 'b'].map((name) => {
    const document = exampleAtif();
    document.extra = { instance_id: 'fix-median', source: `run-${name}`, patch: patch(name), resolved: name === 'a' };
    return document;
  });
  const file = join(dir, 'runs.jsonl');
  writeFileSync(file, documents.map((document) => `${JSON.stringify(document)}\n`).join(''));

  it('reranks them (detected and forced), and warns about ATIF-v1.8 keys it does not know', async () => {
    const newer = exampleAtif();
    newer.schema_version = 'ATIF-v1.8';
    newer.steps[3].sentiment = 'calm';
    newer.extra = { instance_id: 'fix-median', source: 'run-c', patch: patch('c') };
    const newerFile = join(dir, 'newer.json');
    writeFileSync(newerFile, JSON.stringify(newer, null, 2));
    const out = join(dir, 'predictions.jsonl');
    const run = await runCli([
      'rerank',
      '--model',
      TINY_MODEL,
      '--candidates',
      file,
      newerFile,
      '--source-from',
      'record',
      '--out',
      out,
      '--no-progress',
    ]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(
      /rerank: warning: 1 ATIF-v1\.8 candidate\(s\) hold keys winnower does not know \(e\.g\. run-c\/fix-median: steps\[3\]\.sentiment\)/,
    );
    const [prediction] = readJsonl<{ instance_id: string; model_patch: string }>(out);
    expect(prediction!.instance_id).toBe('fix-median');
    const forced = await runCli(['rerank', '--model', TINY_MODEL, '--candidates', file, '--format', 'atif', '--out', out, '--no-progress']);
    expect(forced.code, forced.stderr).toBe(0);
    expect(forced.stderr).not.toMatch(/ATIF|does not know/);
    // No --tasks here: the one warning is that the issue text was missing (docs/rerank.md).
    expect(forced.stderr.match(/warning/g)).toHaveLength(1);
    expect(forced.stderr).toContain('(no --tasks given)');
  });

  it('gives train labelled rows from them, forced or detected', async () => {
    for (const format of ['atif', undefined]) {
      const dataset = await loadDataset({ rollouts: [file], ...(format ? { format } : {}) });
      expect(dataset.candidates.map((c) => [c.trajectory.source, c.resolved])).toEqual([
        ['run-a', true],
        ['run-b', false],
      ]);
    }
    await expect(loadDataset({ rollouts: [file], format: 'openhands' })).rejects.toThrow();
  });

  it('refuses train --format without --rollouts, as a flag it would ignore', async () => {
    const run = await runCli(['train', '--from-store', dir, '--format', 'atif', '--out', join(dir, 'model')]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/--format names the format of --rollouts files/);
  });
});
