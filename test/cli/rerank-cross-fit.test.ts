/**
 * `winnower rerank --cross-fit K` writes what a plain rerank writes (issue 27 item 2): one
 * out-of-fold prediction per instance in --out, the out-of-fold ranks in --scores, the table in
 * --report; a scoring flag it cannot honour is refused by name.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readJsonl, runCli } from '../support/cli.js';
import { tempDir } from '../support/temp-dir.js';

/** Two labelled runs over ten instances: run-a resolves the even ones, run-b the odd ones. */
function labelledRuns(): { dir: string; files: string[] } {
  const dir = tempDir('wnw-cross-fit-');
  const instances = Array.from({ length: 10 }, (_, i) => `acme__widgets-${100 + i}`);
  const files = ['run-a', 'run-b'].map((run, r) => {
    const rows = instances.map((instance_id, i) => ({
      instance_id,
      model_name_or_path: run,
      model_patch: `diff --git a/w.py b/w.py\n--- a/w.py\n+++ b/w.py\n@@ -1 +1 @@\n-x = 0\n+x = ${r}${i}\n`,
      resolved: (i + r) % 2 === 0,
    }));
    const file = join(dir, `${run}.jsonl`);
    writeFileSync(file, rows.map((row) => JSON.stringify(row)).join('\n') + '\n');
    return file;
  });
  return { dir, files };
}

describe('winnower rerank --cross-fit', () => {
  it('refuses --sources without --cross-fit instead of ignoring it', async () => {
    const { dir, files } = labelledRuns();
    const { code, stderr } = await runCli(['rerank', '--candidates', ...files, '--out', join(dir, 'p.jsonl'), '--sources', 'run-a']);
    expect(code).toBe(2);
    expect(stderr).toContain('--sources applies only with --cross-fit');
  });

  it('writes one out-of-fold prediction per instance, the scores and the report', async () => {
    const { dir, files } = labelledRuns();
    const out = join(dir, 'p.jsonl');
    const report = join(dir, 'report.md');
    const { code, stderr, stdout } = await runCli([
      'rerank',
      '--candidates',
      ...files,
      '--cross-fit',
      '5',
      '--out',
      out,
      '--report',
      report,
    ]);
    expect(code, stderr).toBe(0);
    const predictions = readJsonl<{ instance_id: string; model_name_or_path: string; model_patch: string }>(out);
    expect(predictions.map((p) => p.instance_id).sort()).toEqual(Array.from({ length: 10 }, (_, i) => `acme__widgets-${100 + i}`));
    expect(new Set(predictions.map((p) => p.model_name_or_path))).toEqual(new Set(['winnower-cross-fit']));
    for (const prediction of predictions) expect(prediction.model_patch).toMatch(/^diff --git a\/w\.py/);
    const scores = readJsonl<{ instance_id: string; fold: number; rank: number | null; chosen: boolean }>(
      out.replace(/\.jsonl$/, '.scores.jsonl'),
    );
    expect(scores).toHaveLength(20);
    expect(scores.filter((line) => line.chosen)).toHaveLength(10);
    expect(readFileSync(report, 'utf8')).toContain('cross-fitted over 5 instance folds');
    expect(stdout).toContain('cross-fitted over 5 instance folds');
  });

  it('refuses a scoring flag it cannot honour, naming it, and writes nothing', async () => {
    const { dir, files } = labelledRuns();
    const out = join(dir, 'p.jsonl');
    const { code, stderr } = await runCli(['rerank', '--candidates', ...files, '--cross-fit', '5', '--out', out, '--strategy', 'value']);
    expect(code).toBe(2);
    expect(stderr).toContain('--strategy cannot apply');
    expect(existsSync(out)).toBe(false);
  });
});
