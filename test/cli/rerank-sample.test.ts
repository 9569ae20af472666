/**
 * The README's rerank sample (examples/rerank-sample, made by scripts/make-rerank-sample.ts from
 * the demo's recordings): `npm run rerank:sample`'s own arguments, run through the real CLI in a
 * child process, read four runs with their results.json labels and write a prediction.
 */
import { execFile } from 'node:child_process';
import { cliArgv } from '../support/built-cli.js';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { patchShape } from '../../src/select/patch-shape.js';

const ROOT = new URL('../../', import.meta.url).pathname;
const SAMPLE = join(ROOT, 'examples/rerank-sample');
const RUNS = ['breaks-other-tests', 'correct-fix', 'gives-up', 'plausible-wrong-fix'];

/** The rerank arguments of the npm script, with --out and --report moved into `dir`. */
function scriptArgs(dir: string): string[] {
  const script = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts[
    'rerank:sample'
  ]!;
  expect(script.startsWith('node bin/winnower.js rerank ')).toBe(true);
  const words = script
    .slice('node bin/winnower.js rerank '.length)
    .split(' ')
    .map((word) => word.replace(/^'(.*)'$/, '$1'));
  const at = (flag: string) => words.indexOf(flag) + 1;
  words[at('--out')] = join(dir, 'predictions.jsonl');
  words[at('--report')] = join(dir, 'report.md');
  return words;
}

describe('the rerank sample (examples/rerank-sample)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'wnw-rerank-sample-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('holds four runs of the demo task, each a prediction and a results.json', () => {
    for (const run of RUNS) {
      const rows = readFileSync(join(SAMPLE, 'runs', `${run}.jsonl`), 'utf8')
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { instance_id: string; model_name_or_path: string; model_patch: string });
      expect(rows).toEqual([{ instance_id: 'durations-1', model_name_or_path: run, model_patch: expect.any(String) }]);
      expect(patchShape(rows[0]!.model_patch).kind, run).toBe(run === 'gives-up' ? 'empty' : 'ok');
      const report = JSON.parse(readFileSync(join(SAMPLE, 'runs', `${run}.results.json`), 'utf8')) as Record<string, string[]>;
      expect(report.resolved_ids, run).toEqual(run === 'correct-fix' ? ['durations-1'] : []);
    }
  });

  it('`npm run rerank:sample` reranks it with the labels from each run’s results.json', async () => {
    const { code, stdout, stderr } = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile(
        process.execPath,
        cliArgv(['rerank', ...scriptArgs(dir)]),
        { cwd: ROOT, env: { ...process.env, NO_COLOR: '1' }, timeout: 120_000 },
        (error, out, err) => {
          resolve({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, stdout: out, stderr: err });
        },
      );
    });
    expect(code, stderr).toBe(0);
    expect(stdout).toContain('1 instance (0 resumed), 4 candidates');
    const scores = readFileSync(join(dir, 'predictions.scores.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { source: string; resolved: boolean | null; chosen: boolean });
    expect(Object.fromEntries(scores.map((line) => [line.source, line.resolved]))).toEqual({
      'breaks-other-tests': false,
      'correct-fix': true,
      'gives-up': false,
      'plausible-wrong-fix': false,
    });
    expect(scores.filter((line) => line.chosen)).toHaveLength(1);
    const predictions = readFileSync(join(dir, 'predictions.jsonl'), 'utf8').trim().split('\n');
    expect(predictions).toHaveLength(1);
    // mean@1 is 1 of 4; pass@N is 100%; the report has the per-repository row of the task record
    expect(stdout).toMatch(/^overall\s+1\s+4\s+25\.0%\s+100\.0%/m);
    expect(readFileSync(join(dir, 'report.md'), 'utf8')).toContain('| winnower-demo/durations |');
  }, 120_000);
});
