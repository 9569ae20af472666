/**
 * Issue 18 items 1 and 2 through `winnower rerank` (the real CLI in a child process): a candidate
 * with a 300,000-line added file is scored and ranked like any other (no stack overflow, exit 0,
 * with and without --skip-invalid), and an instance with no usable candidate gets an empty
 * model_patch with the reason beside it.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TINY_MODEL_DIR } from '../../src/config.js';
import { readJsonl, runCli } from '../support/cli.js';
import { largeAddedFilePatch } from '../support/large-patch.js';

const FIX = 'diff --git a/a.py b/a.py\n--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n';

interface Prediction {
  instance_id: string;
  model_name_or_path: string;
  model_patch: string;
  no_patch_reason?: string;
}

describe('winnower rerank with a huge candidate and an instance without a usable one', () => {
  let dir: string;
  let candidates: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'wnw-rerank-unusable-'));
    candidates = join(dir, 'candidates.jsonl');
    const rows = [
      { instance_id: 'big__big-1', model_name_or_path: 'run-huge', model_patch: largeAddedFilePatch() },
      { instance_id: 'big__big-1', model_name_or_path: 'run-small', model_patch: FIX },
      { instance_id: 'none__none-1', model_name_or_path: 'run-huge', model_patch: '' },
      { instance_id: 'none__none-1', model_name_or_path: 'run-small', model_patch: 'diff --git a/x b/x\n...' },
    ];
    writeFileSync(candidates, rows.map((row) => JSON.stringify(row)).join('\n') + '\n');
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it.each([[[]], [['--skip-invalid']]])(
    'finishes with exit 0 and one prediction per instance (extra flags: %j)',
    async (extra) => {
      const out = join(dir, `predictions${extra.length}.jsonl`);
      const run = await runCli(
        ['rerank', '--candidates', candidates, '--model', TINY_MODEL_DIR(), '--strategy', 'value', '--out', out, '--no-progress', ...extra],
        { timeoutMs: 300_000 },
      );
      expect(run.stderr).not.toMatch(/RangeError|Maximum call stack/);
      expect(run.code).toBe(0);
      const predictions = new Map(readJsonl<Prediction>(out).map((row) => [row.instance_id, row]));
      expect([...predictions.keys()].sort()).toEqual(['big__big-1', 'none__none-1']);
      expect(predictions.get('big__big-1')!.model_patch).not.toBe('');
      expect(predictions.get('none__none-1')).toMatchObject({
        model_patch: '',
        no_patch_reason: 'None of the 2 candidates has a usable patch (1 empty, 1 unparseable), nothing chosen.',
      });
      expect(run.stderr).toContain('rerank: 1 instance(s) have no usable candidate');
    },
    600_000,
  );
});
