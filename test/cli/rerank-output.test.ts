/**
 * `winnower rerank` as a shell runs it, on synthetic inputs in a temp folder: several paths per
 * flag (an unquoted glob), the source default after glob expansion, --no-progress, the stderr
 * summary and exit status for candidates that could not be scored, and a candidate without a
 * task record (a warning, fatal with --strict). Real CLI in a child process, bundled ONNX model.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readJsonl, runCli } from '../support/cli.js';

const ROOT = new URL('../../', import.meta.url).pathname;
// The untrained bundled model: its tokenizer (and so the token counts below) never changes.
const TINY_MODEL = join(ROOT, 'models/tiny-value');

interface ScoreLine {
  instance_id: string;
  trajectory_id: string;
  source: string;
  score: { value: number } | null;
  error: { code: string; message: string } | null;
}

const rerank = (args: string[]) => runCli(['rerank', '--model', TINY_MODEL, ...args]);

const writeJsonl = (file: string, rows: unknown[]) => writeFileSync(file, rows.map((row) => JSON.stringify(row)).join('\n') + '\n');

const patch = (file: string, line: string) => `diff --git a/${file} b/${file}\n--- a/${file}\n+++ b/${file}\n@@ -1 +1 @@\n-old\n+${line}\n`;
const INSTANCES = ['o__r-1', 'o__r-2'];
const task = (instanceId: string) => ({
  instance_id: instanceId,
  repo: 'o/r',
  problem_statement: `The parser fails on ${instanceId}.`,
  FAIL_TO_PASS: '[]',
  PASS_TO_PASS: '[]',
});

describe('winnower rerank: paths, progress, unscored candidates and missing tasks', () => {
  const dir = mkdtempSync(join(tmpdir(), 'wnw-rerank-output-cli-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  // Two runs of one model (same model_name_or_path): told apart by file name only.
  const runs = ['a', 'b'].map((name) => {
    const file = join(dir, `${name}.jsonl`);
    writeJsonl(
      file,
      INSTANCES.map((instanceId) => ({
        instance_id: instanceId,
        model_name_or_path: 'm',
        model_patch: patch('x.py', `fix ${name} ${instanceId}`),
      })),
    );
    return file;
  });
  const tasks = INSTANCES.map((instanceId, index) => {
    const file = join(dir, `tasks-${index}.jsonl`);
    writeJsonl(file, [task(instanceId)]);
    return file;
  });
  const labels = ['a', 'b'].map((name) => {
    const file = join(dir, `labels-${name}.jsonl`);
    writeJsonl(
      file,
      INSTANCES.map((instanceId) => ({ instance_id: instanceId, source: name, resolved: name === 'a' })),
    );
    return file;
  });

  it('takes several paths after one flag, as an unquoted glob expands to, for --candidates, --tasks and --labels', async () => {
    const out = join(dir, 'several', 'predictions.jsonl');
    const { code, stdout, stderr } = await rerank([
      '--candidates',
      ...runs,
      '--tasks',
      ...tasks,
      '--labels',
      ...labels,
      '--out',
      out,
      '--no-progress',
    ]);
    expect(stderr).not.toContain('too many arguments');
    expect(code, stderr).toBe(0);
    expect(stdout).toContain('2 instances (0 resumed), 4 candidates');
    const lines = readJsonl<ScoreLine>(out.replace(/\.jsonl$/, '.scores.jsonl'));
    expect(new Set(lines.map((line) => line.source))).toEqual(new Set(['a', 'b']));
    expect(lines.every((line) => line.score !== null)).toBe(true);
    // Labels from both files were read: every instance and candidate is in the metrics (run a resolves all).
    expect(stdout).toMatch(/^overall\s+2\s+4\s+50\.0%\s+100\.0%/m);
  }, 120_000);

  it('names sources after the files a quoted glob matches, as it does for the same files unquoted', async () => {
    const out = join(dir, 'glob', 'predictions.jsonl');
    const { code, stderr } = await rerank([
      '--candidates',
      join(dir, '[ab].jsonl'),
      '--tasks',
      join(dir, 'tasks-*.jsonl'),
      '--out',
      out,
      '--no-progress',
    ]);
    expect(stderr).not.toContain('duplicate trajectory id');
    expect(code, stderr).toBe(0);
    const lines = readJsonl<ScoreLine>(out.replace(/\.jsonl$/, '.scores.jsonl'));
    expect(new Set(lines.map((line) => line.source))).toEqual(new Set(['a', 'b']));
  }, 120_000);

  it('prints no progress line with --no-progress', async () => {
    const out = join(dir, 'quiet', 'predictions.jsonl');
    const { code, stderr } = await rerank(['--candidates', runs[0]!, '--tasks', ...tasks, '--out', out, '--no-progress']);
    expect(code, stderr).toBe(0);
    expect(stderr).not.toMatch(/instances scored/);
    expect(stderr).toBe('');
  }, 120_000);

  it('says on stderr which candidates could not be scored and why, and exits 3 when an instance has none scored', async () => {
    // o__r-2's candidate is a trajectory (judge-v1, the longer template: 368 tokens with
    // everything cut); o__r-1's is a patch (patch-v1, 278). A budget of 320 fits only the patch.
    const trajectories = join(dir, 'trajectories.jsonl');
    writeJsonl(trajectories, [
      {
        instance_id: 'o__r-2',
        source: 'agent',
        messages: [
          { role: 'user', content: 'fix the parser' },
          { role: 'assistant', content: 'done' },
        ],
        patch: patch('y.py', 'fix'),
      },
    ]);
    const patches = join(dir, 'patches.jsonl');
    writeJsonl(patches, [{ instance_id: 'o__r-1', model_name_or_path: 'm', model_patch: patch('x.py', 'fix') }]);
    const out = join(dir, 'unscored', 'predictions.jsonl');
    const { code, stdout, stderr } = await rerank([
      '--candidates',
      patches,
      trajectories,
      '--tasks',
      ...tasks,
      '--budget',
      '320',
      '--out',
      out,
      '--no-progress',
    ]);
    expect(code, stderr).toBe(3);
    expect(stderr).toContain('rerank: 1 of 2 candidate(s) could not be scored; 1 instance(s) have no scored candidate (o__r-2)');
    expect(stderr).toMatch(/^ {2}trajectories\/o__r-2: WNW_ERR_CFG_INVALID: budgetTokens 320 is too small/m);
    expect(stdout).toContain('2 instances (0 resumed), 2 candidates');
    // The outputs are written all the same, every line whole.
    expect(
      readJsonl<{ instance_id: string }>(out)
        .map((row) => row.instance_id)
        .sort(),
    ).toEqual(INSTANCES);
    const lines = readJsonl<ScoreLine>(out.replace(/\.jsonl$/, '.scores.jsonl'));
    expect(lines.find((line) => line.instance_id === 'o__r-1')!.score).not.toBeNull();
    expect(lines.find((line) => line.instance_id === 'o__r-2')!.error?.code).toBe('WNW_ERR_CFG_INVALID');
  }, 120_000);

  it('scores a candidate without a task record and counts it as a warning (stderr and report); --strict stops instead', async () => {
    const out = join(dir, 'missing-task', 'predictions.jsonl');
    const report = join(dir, 'missing-task', 'report.md');
    const warned = await rerank(['--candidates', runs[0]!, '--tasks', tasks[0]!, '--out', out, '--report', report, '--no-progress']);
    expect(warned.code, warned.stderr).toBe(0);
    expect(warned.stderr).toContain(
      'rerank: warning: 1 instance(s) have candidates but no task record (e.g. o__r-2); they were scored without the issue text',
    );
    expect(readJsonl<ScoreLine>(out.replace(/\.jsonl$/, '.scores.jsonl')).every((line) => line.score !== null)).toBe(true);
    expect(readFileSync(report, 'utf8')).toContain('1 instance(s) have candidates but no task record');

    const strict = await rerank([
      '--candidates',
      runs[0]!,
      '--tasks',
      tasks[0]!,
      '--out',
      join(dir, 'strict', 'predictions.jsonl'),
      '--strict',
      '--no-progress',
    ]);
    expect(strict.code).toBe(2);
    expect(strict.stderr).toContain('WNW_ERR_INPUT_INVALID: 1 instance(s) have candidates but no task record (e.g. o__r-2)');
    expect(strict.stderr).toContain('(field: tasks)');
  }, 120_000);

  it('says so when no --tasks is given at all (every candidate scored without the issue text); --strict stops', async () => {
    const out = join(dir, 'no-tasks', 'predictions.jsonl');
    const warned = await rerank(['--candidates', runs[0]!, '--out', out, '--no-progress']);
    expect(warned.code, warned.stderr).toBe(0);
    expect(warned.stderr).toContain('rerank: warning: 2 instance(s) have candidates but no task record (no --tasks given)');
    const strict = await rerank([
      '--candidates',
      runs[0]!,
      '--out',
      join(dir, 'no-tasks-strict', 'predictions.jsonl'),
      '--strict',
      '--no-progress',
    ]);
    expect(strict.code).toBe(2);
    expect(strict.stderr).toContain('no task record (no --tasks given)');
    expect(strict.stderr).toContain('(field: tasks)');
  }, 120_000);

  it('documents the exit status in --help', async () => {
    const { code, stdout } = await rerank(['--help']);
    expect(code).toBe(0);
    expect(stdout).toContain('Exit status: 0 done; 2 invalid input');
    expect(stdout).toContain('3 done, but an instance has no candidate that could be scored');
    expect(stdout).toContain('--candidates <paths...>');
  }, 120_000);
});
