/**
 * `winnower rerank` killed mid-run (SIGKILL: no clean-up) and run again with the same files ends
 * with the output of a run never interrupted: every instance's prediction and every candidate's
 * score, none twice. The pool is our own fixture (test/fixtures/importers/swebench) repeated under
 * new instance ids, long enough to be killed while it writes.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliArgv } from '../support/built-cli.js';
import { readJsonl, runCli } from '../support/cli.js';
import { REPO_ROOT } from '../support/shared-data.js';

const FIXTURES = join(REPO_ROOT, 'test/fixtures/importers/swebench');
const REPEATS = 40;

interface Prediction {
  instance_id: string;
  model_patch: string;
}
interface ScoreLine {
  instance_id: string;
  trajectory_id: string;
  chosen: boolean;
  score: { value: number } | null;
}

const lines = (file: string) =>
  existsSync(file)
    ? readFileSync(file, 'utf8')
        .split('\n')
        .filter((line) => line !== '').length
    : 0;

/** Starts a rerank run and SIGKILLs it once `out` holds at least `after` predictions; resolves with the count then. */
function rerankKilledAfter(args: string[], out: string, after: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, cliArgv(['rerank', ...args]), {
      cwd: REPO_ROOT,
      stdio: 'ignore',
      env: { ...process.env, NO_COLOR: '1' },
    });
    const poll = setInterval(() => {
      if (lines(out) >= after) child.kill('SIGKILL');
    }, 5);
    child.on('exit', (_code, signal) => {
      clearInterval(poll);
      if (signal !== 'SIGKILL') reject(new Error(`rerank ended (${signal ?? 'exit'}) before it was killed; make the pool longer`));
      else resolve(lines(out));
    });
  });
}

const byKey = <T>(rows: T[], key: (row: T) => string) => new Map(rows.map((row) => [key(row), row]));

describe('winnower rerank killed and resumed', () => {
  let dir = '';
  let candidates = '';
  let tasks = '';
  let instances = 0;
  let rows = 0;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'wnw-rerank-kill-'));
    const suffix = (id: string, copy: number) => `${id}-copy${copy}`;
    const repeat = (file: string) =>
      Array.from({ length: REPEATS }, (_, copy) =>
        readJsonl<Record<string, unknown>>(file).map((row) =>
          JSON.stringify({ ...row, instance_id: suffix(String(row.instance_id), copy) }),
        ),
      ).flat();
    const candidateLines = repeat(join(FIXTURES, 'predictions.jsonl'));
    const taskLines = repeat(join(FIXTURES, 'tasks.jsonl'));
    candidates = join(dir, 'candidates.jsonl');
    tasks = join(dir, 'tasks.jsonl');
    writeFileSync(candidates, `${candidateLines.join('\n')}\n`);
    writeFileSync(tasks, `${taskLines.join('\n')}\n`);
    rows = candidateLines.length;
    instances = new Set(candidateLines.map((line) => (JSON.parse(line) as Prediction).instance_id)).size;
  });
  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('ends with the predictions and scores of an uninterrupted run', async () => {
    const args = (name: string) => [
      '--candidates',
      candidates,
      '--tasks',
      tasks,
      '--strategy',
      'value',
      '--out',
      join(dir, name, 'out.jsonl'),
    ];
    const whole = await runCli(['rerank', ...args('whole')]);
    expect(whole.code, whole.stderr).toBe(0);

    const out = join(dir, 'killed', 'out.jsonl');
    const written = await rerankKilledAfter(args('killed'), out, 20);
    expect(written).toBeGreaterThanOrEqual(20);
    expect(written).toBeLessThan(instances);
    const resumed = await runCli(['rerank', ...args('killed')]);
    expect(resumed.code, resumed.stderr).toBe(0);
    // It took what the killed run had finished (all but perhaps a last line cut by the kill) and scored the rest.
    const taken = Number(/\((\d+) resumed\)/.exec(resumed.stdout)?.[1]);
    expect(taken).toBeGreaterThanOrEqual(written - 1);
    expect(taken).toBeLessThan(instances);

    const expected = readJsonl<Prediction>(join(dir, 'whole', 'out.jsonl'));
    const got = readJsonl<Prediction>(out);
    expect(got).toHaveLength(instances);
    expect(byKey(got, (row) => row.instance_id)).toEqual(byKey(expected, (row) => row.instance_id));

    const expectedScores = readJsonl<ScoreLine>(join(dir, 'whole', 'out.scores.jsonl'));
    const gotScores = readJsonl<ScoreLine>(join(dir, 'killed', 'out.scores.jsonl'));
    expect(gotScores).toHaveLength(rows);
    const expectedOf = byKey(expectedScores, (line) => line.trajectory_id);
    for (const line of gotScores) {
      const want = expectedOf.get(line.trajectory_id)!;
      expect(line.chosen, line.trajectory_id).toBe(want.chosen);
      // Scored in other batches than the uninterrupted run: the same value up to float rounding.
      expect(line.score?.value, line.trajectory_id).toBeCloseTo(want.score!.value, 6);
    }
  }, 240_000);
});
