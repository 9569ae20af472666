/**
 * `winnower rerank` says which model and selector scored the run: `<out>.summary.json` carries
 * `scored_by` (folder, sha256 of the model files and of selector.json, strategy), and a different
 * model folder gives a different hash.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_MODEL_DIR, TINY_MODEL_DIR } from '../../src/config.js';
import { runCli } from '../support/cli.js';

const ROOT = new URL('../../', import.meta.url).pathname;
const candidates = join(ROOT, 'test/fixtures/importers/swebench/predictions.jsonl');
const tasks = join(ROOT, 'test/fixtures/importers/swebench/tasks.jsonl');

describe('winnower rerank: scored_by in the summary JSON', () => {
  const dir = mkdtempSync(join(tmpdir(), 'wnw-rerank-scored-by-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('names the model folder and selector, with hashes that change with the folder', async () => {
    const tiny = join(dir, 'tiny');
    cpSync(TINY_MODEL_DIR(), tiny, { recursive: true });
    const runs: Array<{ scored_by: any; instances: number; predictions: string }> = [];
    for (const [name, model] of [
      ['a', DEFAULT_MODEL_DIR()],
      ['b', tiny],
    ] as const) {
      const out = join(dir, name, 'predictions.jsonl');
      const { code, stdout, stderr } = await runCli([
        'rerank',
        '--candidates',
        candidates,
        '--tasks',
        tasks,
        '--model',
        model,
        '--out',
        out,
        '--no-progress',
      ]);
      expect(code, stderr).toBe(0);
      const summary = join(dir, name, 'predictions.summary.json');
      expect(stdout).toContain(`summary: ${summary}`);
      runs.push(JSON.parse(readFileSync(summary, 'utf8')));
    }
    const [bundled, untrained] = runs;
    expect(bundled!.instances).toBe(12);
    expect(bundled!.scored_by).toMatchObject({
      model: { name: 'winnower-value', path: DEFAULT_MODEL_DIR(), hash: expect.stringMatching(/^sha256:[0-9a-f]{64}$/) },
      selector: {
        path: join(DEFAULT_MODEL_DIR(), 'selector.json'),
        hash: expect.stringMatching(/^sha256:/),
        default_strategy: 'robust',
        strategy: 'robust',
      },
      scorer: { backend: 'onnx', urls: [] },
    });
    expect(untrained!.scored_by).toMatchObject({
      model: { name: 'tiny', path: tiny },
      selector: { path: null, hash: null, default_strategy: null, strategy: 'value' },
    });
    expect(untrained!.scored_by.model.hash).not.toBe(bundled!.scored_by.model.hash);
  }, 180_000);
});
